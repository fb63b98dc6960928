package syncloop

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/podworkers"
)

// HandleHousekeeping is upstream's HandlePodCleanups, run once every source has been read: pods
// no source wants are terminated by their workers; once terminated, their containers, sandboxes
// and directories are removed; runtime pods no worker knows (left by an earlier run, or created
// by hand with nodelet's labels) are stopped and removed; pod directories of unknown pods are
// removed.
func (d *Dispatcher) HandleHousekeeping(ctx context.Context) {
	d.startWaiting()
	d.retryResizes()
	d.cleaner.GCBackOff()
	desired := d.desired.Pods()
	desiredUIDs := sets.New[types.UID]()
	for _, p := range desired {
		desiredUIDs.Insert(p.UID)
	}
	for _, h := range d.housekeepers {
		h.Housekeep(ctx, desired)
	}
	known := d.workers.SyncKnownPods(desired)
	running, err := d.cleaner.GetPods(ctx)
	if err != nil {
		klog.ErrorS(err, "Housekeeping could not list the runtime's pods; retrying next time")
		return
	}
	inRuntime := sets.New[types.UID]()
	var remove []*container.Pod
	for _, rp := range running {
		inRuntime.Insert(rp.ID)
		if desiredUIDs.Has(rp.ID) {
			continue
		}
		if wt, ok := known[rp.ID]; ok && wt != podworkers.TerminatedPod && !d.workers.ShouldPodRuntimeBeRemoved(rp.ID) {
			continue // its worker is still stopping it
		}
		remove = append(remove, rp)
	}
	d.removePods(ctx, remove)
	if d.resizer != nil {
		d.resizer.RemoveOrphans(func(uid types.UID) bool {
			_, isKnown := known[uid]
			return desiredUIDs.Has(uid) || inRuntime.Has(uid) || isKnown
		})
	}
	dirs, err := d.dirs.PodDirs()
	if err != nil {
		klog.ErrorS(err, "Housekeeping could not list pod directories")
		return
	}
	for _, uid := range dirs {
		if desiredUIDs.Has(uid) || inRuntime.Has(uid) {
			continue
		}
		if _, ok := known[uid]; ok {
			continue
		}
		if err := d.dirs.TearDown(uid); err != nil {
			klog.ErrorS(err, "Failed to remove orphaned pod directory", "podUID", uid)
			continue
		}
		d.statuses.Forget(uid)
	}
}

// removeConcurrency bounds the pods housekeeping removes at once.
const removeConcurrency = 8

// removePods removes the pods' containers, sandboxes and volumes, removeConcurrency at a time,
// and returns when all are done: one after the other, the removals of a burst of deleted pods
// held the sync loop for seconds (30 pods took 3× the runtime's own time in the benchmark).
func (d *Dispatcher) removePods(ctx context.Context, pods []*container.Pod) {
	sem := make(chan struct{}, removeConcurrency)
	var wg sync.WaitGroup
	for _, rp := range pods {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			klog.InfoS("Removing a pod no source wants", "pod", rp.Namespace+"/"+rp.Name, "podUID", rp.ID)
			if err := d.cleaner.RemovePodByUID(ctx, rp.ID); err != nil {
				klog.ErrorS(err, "Failed to remove pod; retrying at the next housekeeping", "podUID", rp.ID)
				return
			}
			d.statuses.Forget(rp.ID)
		})
	}
	wg.Wait()
}
