package allocation

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/container"
)

// Checkpoint file names under the root directory, upstream's.
const (
	AllocatedFile = "allocated_pods_state"
	ActuatedFile  = "actuated_pods_state"
)

// Admission is the node's admission (the dispatcher's): Manager admits new pods with their
// allocated resources and decides resizes with it.
type Admission interface {
	Admit(pod *v1.Pod, active []*v1.Pod) (ok bool, reason, message string)
	Reject(pod *v1.Pod, reason, message string)
}

// Recorder records the resize events (ResizeStarted, ResizeDeferred, ...).
type Recorder interface {
	Eventf(pod *v1.Pod, eventType, reason, messageFmt string, args ...any)
}

// Config is where the checkpoints live.
type Config struct {
	RootDir string
}

// Deps are the manager's collaborators.
type Deps struct {
	Admission Admission
	Recorder  Recorder
	Clock     clock.PassiveClock
}

// Manager holds the allocated and actuated records and each pod's resize conditions. It is
// safe for concurrent use.
type Manager struct {
	deps Deps

	mu        sync.Mutex
	allocated *checkpoint
	actuated  *checkpoint
	conds     map[types.UID]*resizeConditions
	pending   []types.UID // resizes to retry, oldest first
}

type resizeConditions struct {
	pending, inProgress *v1.PodCondition
}

// New loads the checkpoints. A corrupt one is logged and started empty, as upstream: the
// pods then count with their spec's resources.
func New(cfg Config, deps Deps) (*Manager, error) {
	if cfg.RootDir == "" || deps.Admission == nil || deps.Recorder == nil || deps.Clock == nil {
		return nil, errors.New("allocation: RootDir, Admission, Recorder and Clock are required")
	}
	m := &Manager{deps: deps, conds: map[types.UID]*resizeConditions{}}
	var err error
	for _, c := range []struct {
		dst  **checkpoint
		name string
	}{{&m.allocated, AllocatedFile}, {&m.actuated, ActuatedFile}} {
		if *c.dst, err = loadCheckpoint(filepath.Join(cfg.RootDir, c.name)); err != nil {
			klog.ErrorS(err, "Starting with an empty resource record; pods count with the resources of their spec", "file", c.name)
		}
	}
	return m, nil
}

// Apply is the pod with its allocated resources (the pod itself when it has none recorded).
func (m *Manager) Apply(pod *v1.Pod) *v1.Pod {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.applyLocked(pod)
}

func (m *Manager) applyLocked(pod *v1.Pod) *v1.Pod {
	alloc, _ := m.allocated.get(pod.UID)
	out, _ := Apply(pod, alloc)
	return out
}

// allocatedPodsLocked is upstream's getAllocatedPods: the active pods that have an
// allocation, with it.
func (m *Manager) allocatedPodsLocked(active []*v1.Pod) []*v1.Pod {
	out := make([]*v1.Pod, 0, len(active))
	for _, p := range active {
		if alloc, ok := m.allocated.get(p.UID); ok {
			ap, _ := Apply(p, alloc)
			out = append(out, ap)
		}
	}
	return out
}

// Admit is upstream's AddPod: a pod already allocated (nodelet restarted) is admitted with its
// allocation, not its spec; once admitted its resources are recorded as allocated.
func (m *Manager) Admit(pod *v1.Pod, active []*v1.Pod) (bool, string, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ap := m.applyLocked(pod)
	ok, reason, msg := m.deps.Admission.Admit(ap, m.allocatedPodsLocked(active))
	if ok {
		if _, had := m.allocated.get(pod.UID); !had {
			if err := m.allocated.set(pod.UID, ForPod(ap)); err != nil {
				klog.ErrorS(err, "Failed to record the pod's allocated resources; a restart of nodelet will count it with its spec", "pod", klog.KObj(pod))
			}
		}
	}
	return ok, reason, msg
}

// Reject records a refusal (the node's own Reject).
func (m *Manager) Reject(pod *v1.Pod, reason, message string) {
	m.deps.Admission.Reject(pod, reason, message)
}

// HandleResize decides a pod update whose spec may ask for other resources (upstream's
// PushPendingResize and handlePodResourcesResize). active are the other active pods. It
// reports whether the pod must sync: its allocation or its resize conditions changed.
func (m *Manager) HandleResize(pod *v1.Pod, active []*v1.Pod) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.handleResizeLocked(pod, active)
}

func (m *Manager) handleResizeLocked(pod *v1.Pod, active []*v1.Pod) bool {
	alloc, ok := m.allocated.get(pod.UID)
	if !ok {
		return false // not admitted yet: admission allocates the spec
	}
	others := slices.DeleteFunc(m.allocatedPodsLocked(active), func(p *v1.Pod) bool { return p.UID == pod.UID })
	d := Decide(pod, alloc, func(p *v1.Pod) (bool, string, string) { return m.deps.Admission.Admit(p, others) })
	c := m.condsLocked(pod.UID)
	switch {
	case d.Allocate:
		if err := m.allocated.set(pod.UID, ForPod(pod)); err != nil {
			klog.ErrorS(err, "Failed to record a resize's allocation; it is retried", "pod", klog.KObj(pod))
			m.pushPendingLocked(pod.UID)
			return false
		}
		m.dropPendingLocked(pod.UID)
		c.pending = nil
		c.inProgress = m.condition(v1.PodResizeInProgress, nil, "", "", pod.Generation)
		klog.InfoS("Pod resize allocated", "pod", klog.KObj(pod), "generation", pod.Generation)
		m.deps.Recorder.Eventf(pod, v1.EventTypeNormal, "ResizeStarted", "%s", resizeMessage(pod, "Pod resize started", ""))
		return true
	case d.Reason == "":
		m.dropPendingLocked(pod.UID)
		changed := c.pending != nil
		c.pending = nil
		return changed
	}
	changed := c.pending == nil || c.pending.Reason != d.Reason || c.pending.ObservedGeneration != pod.Generation
	c.pending = m.condition(v1.PodResizePending, c.pending, d.Reason, d.Message, pod.Generation)
	if d.Reason == v1.PodReasonDeferred {
		m.pushPendingLocked(pod.UID)
	} else {
		m.dropPendingLocked(pod.UID)
	}
	if changed {
		event := "ResizeDeferred"
		if d.Reason == v1.PodReasonInfeasible {
			event = "ResizeInfeasible"
		}
		klog.InfoS("Pod resize is pending", "pod", klog.KObj(pod), "reason", d.Reason, "message", d.Message)
		m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, event, "%s", resizeMessage(pod, "Pod resize "+d.Reason, d.Message))
	}
	return changed
}

// RetryPending decides the deferred resizes again (upstream's RetryPendingResizes), as other
// pods change. pods gives a pod by UID and the other active pods. It returns the pods to sync.
func (m *Manager) RetryPending(pods func(uid types.UID) (pod *v1.Pod, others []*v1.Pod, ok bool)) []types.UID {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []types.UID
	for _, uid := range slices.Clone(m.pending) {
		pod, others, ok := pods(uid)
		if !ok {
			m.dropPendingLocked(uid)
			continue
		}
		if m.handleResizeLocked(pod, others) {
			out = append(out, uid)
		}
	}
	return out
}

// HasPending reports whether a deferred resize waits.
func (m *Manager) HasPending() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.pending) > 0
}

func (m *Manager) pushPendingLocked(uid types.UID) {
	if !slices.Contains(m.pending, uid) {
		m.pending = append(m.pending, uid)
	}
}

func (m *Manager) dropPendingLocked(uid types.UID) {
	m.pending = slices.DeleteFunc(m.pending, func(u types.UID) bool { return u == uid })
}

func (m *Manager) condsLocked(uid types.UID) *resizeConditions {
	c := m.conds[uid]
	if c == nil {
		c = &resizeConditions{}
		m.conds[uid] = c
	}
	return c
}

// condition is a True condition; its transition time is kept while the reason stays.
func (m *Manager) condition(t v1.PodConditionType, old *v1.PodCondition, reason, msg string, gen int64) *v1.PodCondition {
	now := metav1.NewTime(m.deps.Clock.Now())
	c := &v1.PodCondition{Type: t, Status: v1.ConditionTrue, Reason: reason, Message: msg, ObservedGeneration: gen,
		LastProbeTime: now, LastTransitionTime: now}
	if old != nil && old.Reason == reason {
		c.LastTransitionTime = old.LastTransitionTime
	}
	return c
}

// ResizeConditions are the pod's PodResizePending and PodResizeInProgress conditions, if set.
func (m *Manager) ResizeConditions(uid types.UID) []v1.PodCondition {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conds[uid]
	if c == nil {
		return nil
	}
	var out []v1.PodCondition
	for _, cond := range []*v1.PodCondition{c.pending, c.inProgress} {
		if cond != nil {
			out = append(out, *cond)
		}
	}
	return out
}

// Actuated is what the runtime was told for the pod's containers; nil when nothing is known.
// The record is shared (every change replaces it): callers must not modify it.
func (m *Manager) Actuated(uid types.UID) Resources {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, _ := m.actuated.get(uid)
	return r
}

// InitActuated records the allocated pod's resources as actuated when nothing is recorded:
// the pod's first sync (upstream's InitializeActuatedPod), or a pod started before nodelet
// recorded them.
func (m *Manager) InitActuated(allocated *v1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.actuated.get(allocated.UID); ok {
		return
	}
	if err := m.actuated.set(allocated.UID, ForPod(allocated)); err != nil {
		klog.ErrorS(err, "Failed to record the pod's actuated resources", "pod", klog.KObj(allocated))
	}
}

// SetActuated records what the runtime was told for one container (after it started or was
// updated).
func (m *Manager) SetActuated(uid types.UID, name string, r v1.ResourceRequirements) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, _ := m.actuated.get(uid)
	next := make(Resources, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[name] = *r.DeepCopy()
	if err := m.actuated.set(uid, next); err != nil {
		return fmt.Errorf("record actuated resources of container %s: %w", name, err)
	}
	return nil
}

// SyncInProgress sets or clears PodResizeInProgress after a sync of the allocated pod, as
// upstream's SyncPod: an error of the resize (resizeErr) shows as reason Error; once no
// running container differs from its allocation the condition goes and ResizeCompleted is
// recorded. It reports whether the conditions changed.
func (m *Manager) SyncInProgress(allocated *v1.Pod, ps *container.PodStatus, resizeErr string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	actuated, _ := m.actuated.get(allocated.UID)
	c := m.condsLocked(allocated.UID)
	old := c.inProgress
	if !InProgress(allocated, ps, actuated) {
		if old == nil {
			return false
		}
		c.inProgress = nil
		m.deps.Recorder.Eventf(allocated, v1.EventTypeNormal, "ResizeCompleted", "%s", resizeMessage(allocated, "Pod resize completed", ""))
		klog.InfoS("Pod resize completed", "pod", klog.KObj(allocated))
		return true
	}
	gen := allocated.Generation
	if old != nil {
		gen = old.ObservedGeneration // kept until a new resize is allocated, as upstream
	}
	reason, msg := "", ""
	if resizeErr != "" {
		reason, msg = v1.PodReasonError, resizeErr
	} else if old != nil {
		reason, msg = old.Reason, old.Message
	}
	c.inProgress = m.condition(v1.PodResizeInProgress, old, reason, msg, gen)
	if old == nil || old.Reason != reason || old.Message != msg {
		if resizeErr != "" {
			m.deps.Recorder.Eventf(allocated, v1.EventTypeWarning, "ResizeError", "%s", resizeMessage(allocated, "Pod resize error", resizeErr))
		}
		return true
	}
	return false
}

// RemoveOrphans forgets every pod keep rejects (housekeeping: pods neither desired nor
// running).
func (m *Manager) RemoveOrphans(keep func(types.UID) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	drop := func(u types.UID) bool { return !keep(u) }
	for _, c := range []*checkpoint{m.allocated, m.actuated} {
		if err := c.remove(drop); err != nil {
			klog.ErrorS(err, "Failed to forget the resources of removed pods; the next housekeeping retries")
		}
	}
	for uid := range m.conds {
		if drop(uid) {
			delete(m.conds, uid)
		}
	}
	m.pending = slices.DeleteFunc(m.pending, drop)
}
