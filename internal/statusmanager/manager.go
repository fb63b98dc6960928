package statusmanager

import (
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

// Manager stores generated statuses by pod UID.
type Manager struct {
	desired  DesiredPods
	mu       sync.RWMutex
	statuses map[types.UID]v1.PodStatus
}

// New returns a Manager that reports statuses for the pods desired lists.
func New(desired DesiredPods) *Manager {
	return &Manager{desired: desired, statuses: map[types.UID]v1.PodStatus{}}
}

// SetPodStatus records a newly generated status. A pod in a terminal phase stays there, as
// upstream's status manager enforces: a status that would leave it is refused and logged.
func (m *Manager) SetPodStatus(pod *v1.Pod, st v1.PodStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.statuses[pod.UID]; ok {
		if err := status.CheckTransition(&old, &st, &pod.Spec); err != nil {
			klog.ErrorS(err, "Status update refused", "pod", klog.KObj(pod), "podUID", pod.UID)
			return
		}
	}
	m.statuses[pod.UID] = *st.DeepCopy()
}

// GetPodStatus returns the last status recorded for the pod.
func (m *Manager) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	st, ok := m.statuses[uid]
	return *st.DeepCopy(), ok
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
		if st, ok := m.statuses[p.UID]; ok {
			c.Status = *st.DeepCopy()
		}
		out = append(out, c)
	}
	return out
}
