package statusmanager

import (
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/status"
)

// DesiredPods lists the pods the sources want.
type DesiredPods interface {
	Pods() []*v1.Pod
}

// entry is a pod's latest status and its version, which grows by one each time the status
// changes in a field the kubelet owns (upstream's versionedPodStatus).
type entry struct {
	pod     *v1.Pod // as given to the last SetPodStatus
	status  v1.PodStatus
	version uint64
}

// Versioned is one pod's latest status, as the API syncer reads it.
type Versioned struct {
	// Pod is the desired pod (whose Status is what the API server last said) or, when no source
	// wants it any more, the pod of the last SetPodStatus. It must not be modified.
	Pod     *v1.Pod
	Status  v1.PodStatus
	Version uint64
}

// Manager stores generated statuses by pod UID. It is safe for concurrent use.
type Manager struct {
	desired  DesiredPods
	changed  chan struct{}
	mu       sync.RWMutex
	statuses map[types.UID]*entry
}

// New returns a Manager that reports statuses for the pods desired lists.
func New(desired DesiredPods) *Manager {
	return &Manager{desired: desired, statuses: map[types.UID]*entry{}, changed: make(chan struct{}, 1)}
}

// SetPodStatus records a newly generated status. A pod in a terminal phase stays there, as
// upstream's status manager enforces: a status that would leave it is refused and logged. A
// status that differs from the last one in a field the kubelet owns gets a new version; one that
// does not is kept for local readers without a new version, as upstream ignores it. Every
// accepted status signals Changed: the pod's state may have moved on (its containers stopped)
// even when its status did not.
func (m *Manager) SetPodStatus(pod *v1.Pod, st v1.PodStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.statuses[pod.UID]
	if ok {
		if err := status.CheckTransition(&old.status, &st, &pod.Spec); err != nil {
			klog.ErrorS(err, "Status update refused", "pod", klog.KObj(pod), "podUID", pod.UID)
			return
		}
	}
	e := &entry{pod: pod.DeepCopy(), status: *st.DeepCopy(), version: 1}
	if ok {
		e.version = old.version
		if !equalByKubelet(&old.status, &st) {
			e.version++
		}
	}
	m.statuses[pod.UID] = e
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

// GetPodStatus returns the last status recorded for the pod.
func (m *Manager) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, ok := m.statuses[uid]
	if !ok {
		return v1.PodStatus{}, false
	}
	return *e.status.DeepCopy(), true
}

// Forget drops the status of a pod that is gone.
func (m *Manager) Forget(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.statuses, uid)
}

// Pods returns copies of the desired pods with their latest status (Pending with no
// conditions until the first sync).
func (m *Manager) Pods() []*v1.Pod {
	pods := m.desired.Pods()
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*v1.Pod, 0, len(pods))
	for _, p := range pods {
		c := p.DeepCopy()
		if e, ok := m.statuses[p.UID]; ok {
			c.Status = *e.status.DeepCopy()
		}
		out = append(out, c)
	}
	return out
}

// Changed is signalled (without blocking, coalesced) when a status is set. It has one reader:
// the API syncer.
func (m *Manager) Changed() <-chan struct{} { return m.changed }

// Versioned returns every recorded status with its version and pod.
func (m *Manager) Versioned() []Versioned {
	desired := map[types.UID]*v1.Pod{}
	for _, p := range m.desired.Pods() {
		desired[p.UID] = p
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]Versioned, 0, len(m.statuses))
	for uid, e := range m.statuses {
		pod := e.pod
		if d, ok := desired[uid]; ok {
			pod = d
		}
		out = append(out, Versioned{Pod: pod, Status: *e.status.DeepCopy(), Version: e.version})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod.UID < out[j].Pod.UID })
	return out
}
