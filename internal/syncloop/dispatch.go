package syncloop

import (
	"context"
	"errors"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/podworkers"
	"github.com/nodelet/nodelet/internal/statusmanager"
)

// Desired is the pod manager: the pods the sources want.
type Desired interface {
	AddOrUpdate(pod *v1.Pod)
	Remove(pod *v1.Pod)
	ByUID(uid types.UID) (*v1.Pod, bool)
	Pods() []*v1.Pod
}

// Workers are the pod workers.
type Workers interface {
	UpdatePod(opts podworkers.UpdatePodOptions)
	SyncKnownPods(desired []*v1.Pod) map[types.UID]podworkers.WorkType
	IsPodKnownTerminated(uid types.UID) bool
	ShouldPodRuntimeBeRemoved(uid types.UID) bool
}

// Cleaner removes what terminated and unknown pods leave behind.
type Cleaner interface {
	GetPods(ctx context.Context) ([]*container.Pod, error)
	PodRemover
	// GCBackOff forgets back-off entries no longer in use.
	GCBackOff()
}

// OrphanDirs lists and removes the pod directories on disk (volumes, hosts files).
type OrphanDirs interface {
	PodDirs() ([]types.UID, error)
	DirRemover
}

// Probes are the probe workers: a pod's probes run while the pod is wanted.
type Probes interface {
	AddPod(pod *v1.Pod)
	RemovePod(pod *v1.Pod)
}

// StatusForgetter drops the status of a pod that is gone.
type StatusForgetter interface {
	Forget(uid types.UID)
}

// Statuses are the pod statuses recorded: housekeeping forgets those of pods that are gone.
type Statuses interface {
	StatusForgetter
	Versioned() []statusmanager.Versioned
}

// Admission decides whether a new pod may start on this node (upstream's canAdmitPod) and
// records a rejection (upstream's rejectPod: a Failed status and an event).
type Admission interface {
	// Admit checks pod against the node and the active pods already admitted.
	Admit(pod *v1.Pod, active []*v1.Pod) (ok bool, reason, message string)
	Reject(pod *v1.Pod, reason, message string)
}

// Resizer decides in-place resizes (internal/allocation): a pod update whose spec asks for
// other resources is allocated, deferred or found infeasible; deferred ones are retried.
type Resizer interface {
	HandleResize(pod *v1.Pod, active []*v1.Pod) (sync bool)
	HasPending() bool
	RetryPending(pods func(uid types.UID) (pod *v1.Pod, others []*v1.Pod, ok bool)) []types.UID
	RemoveOrphans(keep func(types.UID) bool)
}

// Housekeeper is extra work housekeeping runs with the desired pods, e.g. deleting mirror pods
// whose static pod is gone. desired gives the pods desired now: a housekeeper that lists
// something first reads it after the listing, so that a pod added meanwhile is desired.
type Housekeeper interface {
	Housekeep(ctx context.Context, desired func() []*v1.Pod)
}

// Dispatcher turns what the loop receives into pod worker requests (upstream's
// HandlePodAdditions, HandlePodUpdates, HandlePodRemoves, HandlePodSyncs, HandlePodCleanups).
type Dispatcher struct {
	desired  Desired
	workers  Workers
	cleaner  Cleaner
	dirs     OrphanDirs
	statuses Statuses
	probes   Probes
	// remover removes pods off the loop; passes hands housekeeping passes to Run.
	remover *remover
	passes  chan pass

	mu sync.Mutex
	// terminating maps a full name to the UID of a pod of that name that is stopping; a new pod
	// of the same name (an edited static pod) starts only once that one has terminated, as
	// upstream, so that the two never hold the same host port or name at once.
	terminating map[string]types.UID
	waiting     map[types.UID]*v1.Pod
	// removing are the pods whose leftovers the remover is removing (claim): a pod re-created
	// with one of these UIDs waits until the removal is over.
	removing sets.Set[types.UID]

	admission    Admission
	resizer      Resizer
	housekeepers []Housekeeper
	// rejected are pods admission refused: they stay desired (their Failed status is reported)
	// but never get a worker.
	rejected map[types.UID]bool
}

// DispatcherDeps are the Dispatcher's collaborators.
type DispatcherDeps struct {
	Desired  Desired
	Workers  Workers
	Cleaner  Cleaner
	Dirs     OrphanDirs
	Statuses Statuses
	Probes   Probes
	// Admission, when set, admits each new pod before its worker starts it.
	Admission Admission
	// Resizer, when set, gets pod updates before the workers, and deferred resizes are retried
	// as pods come and go.
	Resizer Resizer
	// Housekeepers add work to every housekeeping pass.
	Housekeepers []Housekeeper
}

// NewDispatcher returns a Dispatcher; every dependency but Admission, Resizer and
// Housekeepers is required. Run (housekeeping.go) must run for housekeeping to remove
// anything.
func NewDispatcher(deps DispatcherDeps) (*Dispatcher, error) {
	if deps.Desired == nil || deps.Workers == nil || deps.Cleaner == nil || deps.Dirs == nil || deps.Statuses == nil || deps.Probes == nil {
		return nil, errors.New("syncloop: Desired, Workers, Cleaner, Dirs, Statuses and Probes are required")
	}
	d := &Dispatcher{desired: deps.Desired, workers: deps.Workers, cleaner: deps.Cleaner, dirs: deps.Dirs, statuses: deps.Statuses,
		probes: deps.Probes, admission: deps.Admission, resizer: deps.Resizer, housekeepers: deps.Housekeepers,
		passes: make(chan pass), terminating: map[string]types.UID{}, waiting: map[types.UID]*v1.Pod{},
		removing: sets.New[types.UID](), rejected: map[types.UID]bool{}}
	d.remover = newRemover(deps.Cleaner, deps.Dirs, deps.Statuses, d)
	return d, nil
}

var _ Handler = (*Dispatcher)(nil)

// HandlePodUpdate applies one PodUpdate.
func (d *Dispatcher) HandlePodUpdate(u podconfig.PodUpdate) {
	pods := append([]*v1.Pod(nil), u.Pods...)
	sort.SliceStable(pods, func(i, j int) bool { return pods[i].CreationTimestamp.Before(&pods[j].CreationTimestamp) })
	for _, pod := range pods {
		switch u.Op {
		case podconfig.ADD:
			klog.InfoS("Pod added", "pod", klog.KObj(pod), "podUID", pod.UID, "source", u.Source)
			d.desired.AddOrUpdate(pod)
			if !d.admit(pod) {
				continue
			}
			d.resize(pod) // a resize made while nodelet was down
			d.probes.AddPod(pod)
			d.start(pod)
		case podconfig.UPDATE, podconfig.DELETE:
			// A deletionTimestamp makes the pod worker terminate the pod with its grace period.
			d.desired.AddOrUpdate(pod)
			if d.isRejected(pod.UID) {
				continue
			}
			d.resize(pod)
			d.probes.AddPod(pod)
			if !d.isWaiting(pod.UID) {
				d.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodUpdate, Pod: pod})
			}
		case podconfig.REMOVE:
			d.desired.Remove(pod)
			d.probes.RemovePod(pod)
			d.mu.Lock()
			delete(d.waiting, pod.UID)
			if d.rejected[pod.UID] {
				delete(d.rejected, pod.UID)
				d.mu.Unlock()
				d.statuses.Forget(pod.UID)
				continue
			}
			d.terminating[podconfig.FullName(pod)] = pod.UID
			d.mu.Unlock()
			klog.InfoS("Pod removed from its source; terminating it", "pod", klog.KObj(pod), "podUID", pod.UID, "source", u.Source)
			d.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodKill, Pod: pod})
			if d.workers.IsPodKnownTerminated(pod.UID) { // finished while a source still wanted it
				d.remover.enqueue(removal{uid: pod.UID, runtime: true, why: "removed from its source"})
			}
		case podconfig.RECONCILE:
			d.desired.AddOrUpdate(pod)
		}
	}
}

// start hands a new pod to its worker, unless a pod of the same name is still stopping or the
// leftovers of an earlier pod with its UID are being removed.
func (d *Dispatcher) start(pod *v1.Pod) {
	d.mu.Lock()
	if why := d.blockedLocked(pod); why != "" {
		_, already := d.waiting[pod.UID]
		d.waiting[pod.UID] = pod
		d.mu.Unlock()
		if !already {
			klog.InfoS("Pod waits before it starts", "pod", klog.KObj(pod), "podUID", pod.UID, "reason", why)
		}
		return
	}
	delete(d.terminating, podconfig.FullName(pod))
	delete(d.waiting, pod.UID)
	d.mu.Unlock()
	d.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodCreate, Pod: pod})
}

// blockedLocked says why pod cannot start yet, or "". Must be called with d.mu held.
func (d *Dispatcher) blockedLocked(pod *v1.Pod) string {
	if d.removing.Has(pod.UID) {
		return "the leftovers of an earlier pod with its UID are being removed"
	}
	if prev, stopping := d.terminating[podconfig.FullName(pod)]; stopping && prev != pod.UID && !d.workers.IsPodKnownTerminated(prev) {
		return "the previous pod of the same name (UID " + string(prev) + ") is still stopping"
	}
	return ""
}

func (d *Dispatcher) isWaiting(uid types.UID) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.waiting[uid]
	return ok
}

// HandleSyncs asks the workers of the given pods to sync, and starts waiting pods whose
// predecessor has stopped.
func (d *Dispatcher) HandleSyncs(uids []types.UID) {
	d.startWaiting()
	d.retryResizes()
	for _, uid := range uids {
		if pod, ok := d.desired.ByUID(uid); ok && !d.isWaiting(uid) && !d.isRejected(uid) {
			d.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodSync, Pod: pod})
		}
	}
}

// resize decides a pod's resize, if its spec asks for one.
func (d *Dispatcher) resize(pod *v1.Pod) {
	if d.resizer != nil && pod.DeletionTimestamp == nil {
		d.resizer.HandleResize(pod, d.activePods(pod.UID))
	}
}

// retryResizes decides deferred resizes again and syncs the pods whose allocation or
// conditions changed.
func (d *Dispatcher) retryResizes() {
	if d.resizer == nil || !d.resizer.HasPending() {
		return
	}
	changed := d.resizer.RetryPending(func(uid types.UID) (*v1.Pod, []*v1.Pod, bool) {
		pod, ok := d.desired.ByUID(uid)
		if !ok || d.isRejected(uid) || pod.DeletionTimestamp != nil {
			return nil, nil, false
		}
		return pod, d.activePods(uid), true
	})
	for _, uid := range changed {
		if pod, ok := d.desired.ByUID(uid); ok && !d.isWaiting(uid) {
			d.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodSync, Pod: pod})
		}
	}
}

func (d *Dispatcher) startWaiting() {
	d.mu.Lock()
	var ready []*v1.Pod
	for _, pod := range d.waiting {
		if d.blockedLocked(pod) == "" {
			ready = append(ready, pod)
		}
	}
	d.mu.Unlock()
	for _, pod := range ready {
		d.start(pod)
	}
}
