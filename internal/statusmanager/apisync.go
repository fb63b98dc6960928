package statusmanager

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/kubeclient"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/status"
)

// DefaultSyncPeriod is how often every status is checked against the API server (upstream's
// status manager syncPeriod).
const DefaultSyncPeriod = 10 * time.Second

// Statuses is the Manager as the API syncer reads it.
type Statuses interface {
	Versioned() []Versioned
	Changed() <-chan struct{}
}

// MirrorLookup finds the mirror pod the API server holds for a static pod.
type MirrorLookup interface {
	MirrorFor(static *v1.Pod) (*v1.Pod, bool)
}

// DeletionSafety says whether a pod's containers may still run (the pod workers: true until
// SyncTerminatingPod has succeeded).
type DeletionSafety interface {
	CouldHaveRunningContainers(uid types.UID) bool
}

var (
	_ Statuses     = (*Manager)(nil)
	_ DesiredPods  = (*Manager)(nil)
	_ MirrorLookup = noMirrors{}
)

// noMirrors is the MirrorLookup when there is none: static pods are never written.
type noMirrors struct{}

func (noMirrors) MirrorFor(*v1.Pod) (*v1.Pod, bool) { return nil, false }

// APISyncConfig tunes the API syncer.
type APISyncConfig struct {
	// Period of the pass over every status; DefaultSyncPeriod when zero.
	Period time.Duration
}

// APISyncDeps are the API syncer's collaborators.
type APISyncDeps struct {
	Client   kubeclient.PodsGetter
	Statuses Statuses
	// Mirrors finds the mirror pods of static pods; without it static pods are not written.
	Mirrors  MirrorLookup
	Deletion DeletionSafety
	Clock    clock.WithTicker
}

// APISync writes the statuses the Manager holds to the API server, as upstream's status manager
// does: on every change, and every Period for all pods. A pod from the API server is patched
// directly; a static pod through its mirror pod, and not at all until it has one. Each status
// is written once per version. A pod the API server is deleting is deleted for good (grace
// period 0, UID precondition) once its final status is written and its containers cannot run.
type APISync struct {
	cfg  APISyncConfig
	deps APISyncDeps
	// written maps the UID of an API object (the pod, or the mirror pod of a static pod) to the
	// status version last written to it. Only the Run goroutine touches it.
	written map[types.UID]uint64
	// heldBack marks the objects whose last write held back a terminal phase because the
	// pod's containers could still run: it is written as soon as they cannot.
	heldBack map[types.UID]bool
	// replaced marks the objects whose name now belongs to another object (the pod was deleted
	// and recreated): they are not written again.
	replaced map[types.UID]bool
}

// NewAPISync returns an API syncer; Run starts it.
func NewAPISync(cfg APISyncConfig, deps APISyncDeps) (*APISync, error) {
	if deps.Client == nil || deps.Statuses == nil || deps.Deletion == nil || deps.Clock == nil {
		return nil, errors.New("status API sync: Client, Statuses, Deletion and Clock are required")
	}
	if deps.Mirrors == nil {
		deps.Mirrors = noMirrors{}
	}
	if cfg.Period <= 0 {
		cfg.Period = DefaultSyncPeriod
	}
	return &APISync{cfg: cfg, deps: deps, written: map[types.UID]uint64{}, heldBack: map[types.UID]bool{},
		replaced: map[types.UID]bool{}}, nil
}

// requestTimeout bounds the API calls that write one pod's status.
const requestTimeout = 10 * time.Second

// Run writes statuses until ctx ends.
func (a *APISync) Run(ctx context.Context) {
	klog.InfoS("Starting to sync pod status with the API server", "period", a.cfg.Period)
	ticker := a.deps.Clock.NewTicker(a.cfg.Period)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.deps.Statuses.Changed():
			klog.V(4).InfoS("Syncing updated statuses")
			a.syncBatch(ctx, false)
		case <-ticker.C():
			klog.V(4).InfoS("Syncing all statuses")
			a.syncBatch(ctx, true)
		}
	}
}

// work is one status to write and the API object it goes to.
type work struct {
	Versioned
	// target is the API object as the watch last showed it: the pod, or the static pod's mirror.
	target *v1.Pod
}

// syncBatch writes the statuses with a version not yet written, and terminal phases held back
// while containers could run once they cannot. With all, it also retries deletions and rewrites
// statuses the API server holds differently (someone overwrote them).
func (a *APISync) syncBatch(ctx context.Context, all bool) int {
	var todo []work
	targets := map[types.UID]bool{}
	for _, v := range a.deps.Statuses.Versioned() {
		target := v.Pod
		if !podconfig.IsAPIPod(v.Pod) {
			m, ok := a.deps.Mirrors.MirrorFor(v.Pod)
			if !ok {
				klog.V(5).InfoS("Static pod has no mirror pod yet; its status is not written", "pod", klog.KObj(v.Pod), "podUID", v.Pod.UID)
				continue
			}
			target = m
		}
		targets[target.UID] = true
		if a.replaced[target.UID] {
			continue
		}
		w := work{Versioned: v, target: target}
		switch latest, ok := a.written[target.UID]; {
		case !ok || latest < v.Version:
			todo = append(todo, w)
		case a.heldBack[target.UID] && !a.deps.Deletion.CouldHaveRunningContainers(v.Pod.UID):
			todo = append(todo, w)
		case all && a.canBeDeleted(target, v.Pod.UID):
			todo = append(todo, w)
		case all && !equalByKubelet(&target.Status, &v.Status):
			klog.V(3).InfoS("The API server's status differs from the kubelet's; writing it again", "pod", klog.KObj(target), "podUID", v.Pod.UID)
			delete(a.written, target.UID)
			todo = append(todo, w)
		}
	}
	if all {
		for uid := range a.written {
			if !targets[uid] {
				delete(a.written, uid)
				delete(a.heldBack, uid)
			}
		}
		for uid := range a.replaced {
			if !targets[uid] {
				delete(a.replaced, uid)
			}
		}
	}
	for _, w := range todo {
		a.syncOne(ctx, w)
	}
	return len(todo)
}

// syncOne is upstream's syncPod: get the object, check it is the same one, patch its status,
// and delete it if it is finished.
func (a *APISync) syncOne(ctx context.Context, w work) {
	// A request must not hang on an API server that is starting: one pod's write would hold
	// back every other's.
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	uid := w.Pod.UID
	if latest := a.written[w.target.UID]; latest > w.Version {
		klog.V(4).InfoS("A newer status was written already; skipping an older one", "pod", klog.KObj(w.Pod), "podUID", uid, "version", w.Version, "written", latest)
		return
	}
	pods := a.deps.Client.Pods(w.target.Namespace)
	got, err := pods.Get(ctx, w.target.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		klog.V(3).InfoS("Pod does not exist on the server; its status is not written", "pod", klog.KObj(w.target), "podUID", uid)
		return
	}
	if err != nil {
		klog.ErrorS(err, "Cannot read the pod from the API server to write its status; retrying at the next sync. Check that the API server is reachable", "pod", klog.KObj(w.target), "podUID", uid, "retryIn", a.cfg.Period)
		return
	}
	if got.UID != w.target.UID {
		klog.V(2).InfoS("Pod was deleted and then recreated, skipping status update", "pod", klog.KObj(got), "oldPodUID", w.target.UID, "podUID", got.UID)
		a.replaced[w.target.UID] = true
		return
	}
	couldRun := a.deps.Deletion.CouldHaveRunningContainers(uid)
	merged := mergeStatus(got, got.Status, w.Status, couldRun, a.deps.Clock.Now())
	patch, unchanged, err := statusPatch(got.UID, got.Status, merged)
	if err != nil {
		klog.ErrorS(err, "Cannot build the status patch", "pod", klog.KObj(got), "podUID", uid)
		return
	}
	if unchanged {
		klog.V(3).InfoS("Status for pod is up-to-date", "pod", klog.KObj(got), "podUID", uid, "statusVersion", w.Version)
	} else {
		updated, err := pods.Patch(ctx, got.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		if err != nil {
			klog.ErrorS(fmt.Errorf("patch %s: %w", patch, err), "Failed to update status for pod; retrying at the next sync", "pod", klog.KObj(got), "podUID", uid, "retryIn", a.cfg.Period)
			return
		}
		klog.V(3).InfoS("Status for pod updated successfully", "pod", klog.KObj(got), "podUID", uid, "statusVersion", w.Version, "patch", string(patch))
		got = updated
	}
	a.written[got.UID] = w.Version
	a.heldBack[got.UID] = couldRun && status.IsPhaseTerminal(w.Status.Phase) && !status.IsPhaseTerminal(merged.Phase)
	if !a.canBeDeleted(got, uid) {
		return
	}
	err = pods.Delete(ctx, got.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0),
		Preconditions: metav1.NewUIDPreconditions(string(got.UID))})
	if err != nil {
		klog.InfoS("Failed to delete the finished pod from the API server; retrying at the next sync", "pod", klog.KObj(got), "podUID", uid, "err", err)
		return
	}
	klog.V(3).InfoS("Pod fully terminated and removed from etcd", "pod", klog.KObj(got), "podUID", uid)
}

// canBeDeleted is upstream's canBeDeleted: the API server is deleting the pod (not a mirror
// pod), holds its terminal status, and its containers cannot run any more.
func (a *APISync) canBeDeleted(apiPod *v1.Pod, uid types.UID) bool {
	if apiPod.DeletionTimestamp == nil || podconfig.IsMirrorPod(apiPod) {
		return false
	}
	if !status.IsPhaseTerminal(apiPod.Status.Phase) {
		klog.V(3).InfoS("Delaying pod deletion as the phase is non-terminal", "phase", apiPod.Status.Phase, "pod", klog.KObj(apiPod), "podUID", uid)
		return false
	}
	return !a.deps.Deletion.CouldHaveRunningContainers(uid)
}
