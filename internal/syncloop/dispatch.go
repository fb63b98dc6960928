package syncloop

import (
	"context"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/podworkers"
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
	RemovePodByUID(ctx context.Context, uid types.UID) error
	// GCBackOff forgets back-off entries no longer in use.
	GCBackOff()
}

// OrphanDirs lists and removes the pod directories on disk (volumes, hosts files).
type OrphanDirs interface {
	PodDirs() ([]types.UID, error)
	TearDown(uid types.UID) error
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
// whose static pod is gone.
type Housekeeper interface {
	Housekeep(ctx context.Context, desired []*v1.Pod)
}

// Dispatcher turns what the loop receives into pod worker requests (upstream's
// HandlePodAdditions, HandlePodUpdates, HandlePodRemoves, HandlePodSyncs, HandlePodCleanups).
type Dispatcher struct {
	desired  Desired
	workers  Workers
	cleaner  Cleaner
	dirs     OrphanDirs
	statuses StatusForgetter
	probes   Probes

	mu sync.Mutex
	// terminating maps a full name to the UID of a pod of that name that is stopping; a new pod
	// of the same name (an edited static pod) starts only once that one has terminated, as
	// upstream, so that the two never hold the same host port or name at once.
	terminating map[string]types.UID
	waiting     map[types.UID]*v1.Pod

	admission    Admission
	resizer      Resizer
	housekeepers []Housekeeper
	// rejected are pods admission refused: they stay desired (their Failed status is reported)
	// but never get a worker.
	rejected map[types.UID]bool
}

// WithAdmission makes the dispatcher admit each new pod before its worker starts it.
func (d *Dispatcher) WithAdmission(a Admission) *Dispatcher { d.admission = a; return d }

// WithResizer makes the dispatcher hand pod updates to the resizer before the workers, and
// retry deferred resizes as pods come and go.
func (d *Dispatcher) WithResizer(r Resizer) *Dispatcher { d.resizer = r; return d }

// WithHousekeepers adds work to every housekeeping pass.
func (d *Dispatcher) WithHousekeepers(h ...Housekeeper) *Dispatcher {
	d.housekeepers = append(d.housekeepers, h...)
	return d
}

// NewDispatcher returns a Dispatcher.
func NewDispatcher(desired Desired, workers Workers, cleaner Cleaner, dirs OrphanDirs, statuses StatusForgetter, probes Probes) *Dispatcher {
	return &Dispatcher{desired: desired, workers: workers, cleaner: cleaner, dirs: dirs, statuses: statuses, probes: probes,
		terminating: map[string]types.UID{}, waiting: map[types.UID]*v1.Pod{}, rejected: map[types.UID]bool{}}
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
		case podconfig.RECONCILE:
			d.desired.AddOrUpdate(pod)
		}
	}
}

// start hands a new pod to its worker, unless a pod of the same name is still stopping.
func (d *Dispatcher) start(pod *v1.Pod) {
	d.mu.Lock()
	prev, stopping := d.terminating[podconfig.FullName(pod)]
	if stopping && prev != pod.UID && !d.workers.IsPodKnownTerminated(prev) {
		d.waiting[pod.UID] = pod
		d.mu.Unlock()
		klog.InfoS("Pod waits for the previous pod of the same name to stop", "pod", klog.KObj(pod), "podUID", pod.UID, "previousUID", prev)
		return
	}
	delete(d.terminating, podconfig.FullName(pod))
	delete(d.waiting, pod.UID)
	d.mu.Unlock()
	d.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodCreate, Pod: pod})
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
		if prev := d.terminating[podconfig.FullName(pod)]; d.workers.IsPodKnownTerminated(prev) {
			ready = append(ready, pod)
		}
	}
	d.mu.Unlock()
	for _, pod := range ready {
		d.start(pod)
	}
}
