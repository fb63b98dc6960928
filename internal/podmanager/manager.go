package podmanager

import (
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Manager is the set of desired pods. It is safe for concurrent use.
type Manager struct {
	mu     sync.RWMutex
	byUID  map[types.UID]*v1.Pod
	byName map[string]*v1.Pod
}

// New returns an empty Manager.
func New() *Manager {
	return &Manager{byUID: map[types.UID]*v1.Pod{}, byName: map[string]*v1.Pod{}}
}

func fullName(p *v1.Pod) string { return p.Name + "_" + p.Namespace }

// AddOrUpdate records the pod as desired, replacing an older version with the same UID.
func (m *Manager) AddOrUpdate(pod *v1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.byUID[pod.UID]; ok && fullName(old) != fullName(pod) {
		delete(m.byName, fullName(old))
	}
	m.byUID[pod.UID] = pod
	m.byName[fullName(pod)] = pod
}

// Remove forgets the pod.
func (m *Manager) Remove(pod *v1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur, ok := m.byUID[pod.UID]; ok {
		delete(m.byUID, pod.UID)
		if m.byName[fullName(cur)] == cur {
			delete(m.byName, fullName(cur))
		}
	}
}

// ByUID returns the desired pod with the UID.
func (m *Manager) ByUID(uid types.UID) (*v1.Pod, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	p, ok := m.byUID[uid]
	return p, ok
}

// ByFullName returns the desired pod with the name and namespace.
func (m *Manager) ByFullName(name, namespace string) (*v1.Pod, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	p, ok := m.byName[name+"_"+namespace]
	return p, ok
}

// Pods returns the desired pods, sorted by namespace and name.
func (m *Manager) Pods() []*v1.Pod {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*v1.Pod, 0, len(m.byUID))
	for _, p := range m.byUID {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}
