package syncloop

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/podworkers"
)

// pass is what the loop hands to a housekeeping pass: the desired pods and the pod workers'
// states, taken together on the loop so that no pod added meanwhile is taken for an orphan.
type pass struct {
	desired sets.Set[types.UID]
	workers map[types.UID]podworkers.WorkType
}

// Run does the dispatcher's work off the loop until ctx ends: housekeeping passes, one at a
// time, and pod removals, removeConcurrency at a time. Start it with the loop.
func (d *Dispatcher) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { d.remover.run(ctx) })
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case p := <-d.passes:
				d.cleanUp(ctx, p)
			}
		}
	})
	wg.Wait()
}

// HandleHousekeeping is upstream's HandlePodCleanups, run once every source has been read. On
// the loop it only decides, from memory: pods no source wants are terminated by their workers
// (SyncKnownPods), desired pods whose worker was forgotten (re-created with the same UID) are
// started again, and a housekeeping pass is handed to Run with what the loop saw. The pass does
// the I/O; a tick that comes while the previous pass still runs is skipped.
func (d *Dispatcher) HandleHousekeeping(_ context.Context) {
	d.startWaiting()
	d.retryResizes()
	d.cleaner.GCBackOff()
	desired := d.desired.Pods()
	known := d.workers.SyncKnownPods(desired)
	d.restartForgotten(known)
	p := pass{desired: sets.New[types.UID](), workers: known}
	for _, pod := range desired {
		p.desired.Insert(pod.UID)
	}
	select {
	case d.passes <- p:
	default:
		klog.V(2).InfoS("Housekeeping skipped: the previous pass is still running")
	}
}

// restartForgotten starts the active pods (admitted, not finished) the pod workers do not know:
// a pod re-created with the same UID (a static pod whose manifest came back) once its old
// worker was forgotten, as upstream's HandlePodCleanups. known gets them.
func (d *Dispatcher) restartForgotten(known map[types.UID]podworkers.WorkType) {
	for _, pod := range d.activePods("") {
		if _, ok := known[pod.UID]; ok || d.isWaiting(pod.UID) {
			continue
		}
		klog.V(3).InfoS("Pod is desired and unknown to the pod workers (its UID was re-used); starting it", "pod", klog.KObj(pod), "podUID", pod.UID)
		d.start(pod)
		known[pod.UID] = podworkers.SyncPod
	}
}

// HandlePodFinished acts when a pod worker has finished with a pod: a pod of the same name
// waiting for it may start, and what it left in the runtime is removed at once, unless a source
// still wants it (a finished API pod is removed when the API server deletes it).
func (d *Dispatcher) HandlePodFinished(uid types.UID) {
	d.startWaiting()
	if _, ok := d.desired.ByUID(uid); ok {
		return
	}
	d.remover.enqueue(removal{uid: uid, runtime: true, why: "terminated"})
}

// cleanUp is one housekeeping pass, off the loop: the housekeepers, the listings of the runtime,
// the pod directories and the statuses, the decision, and the removals handed to the remover.
func (d *Dispatcher) cleanUp(ctx context.Context, p pass) {
	for _, h := range d.housekeepers {
		h.Housekeep(ctx, d.desired.Pods) // the latest, not the pass's: a pod may have come
	}
	running, err := d.cleaner.GetPods(ctx)
	if err != nil {
		klog.ErrorS(err, "Housekeeping could not list the runtime's pods; retrying next time")
		return
	}
	in := cleanupInput{Desired: p.desired, Workers: p.workers, InFlight: d.remover.inFlight()}
	for _, rp := range running {
		in.Runtime = append(in.Runtime, rp.ID)
	}
	if in.Dirs, err = d.dirs.PodDirs(); err != nil {
		klog.ErrorS(err, "Housekeeping could not list pod directories; retrying next time")
		return
	}
	for _, v := range d.statuses.Versioned() {
		in.Statuses = append(in.Statuses, v.Pod.UID)
	}
	plan := decideCleanup(in)
	if d.resizer != nil {
		d.resizer.RemoveOrphans(func(uid types.UID) bool {
			_, desired := d.desired.ByUID(uid) // admitted since the pass began
			return desired || plan.KeepAllocations.Has(uid)
		})
	}
	for _, uid := range plan.RemovePods {
		d.remover.enqueue(removal{uid: uid, runtime: true, why: "orphaned"})
	}
	for _, uid := range plan.TearDownDirs {
		d.remover.enqueue(removal{uid: uid, why: "orphaned directory"})
	}
	for _, uid := range plan.ForgetStatuses {
		d.remover.enqueue(removal{uid: uid, why: "orphaned status"})
	}
}

// claim lets a removal go ahead if no source wants the pod and no worker may run it, and holds
// the pod back from starting until release: a pod re-created with the same UID waits for the
// removal of its predecessor's leftovers.
func (d *Dispatcher) claim(uid types.UID) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, desired := d.desired.ByUID(uid); desired || d.removing.Has(uid) || !d.workers.ShouldPodRuntimeBeRemoved(uid) {
		return false
	}
	d.removing.Insert(uid)
	return true
}

func (d *Dispatcher) release(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.removing.Delete(uid)
}
