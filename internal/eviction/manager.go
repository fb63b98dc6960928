package eviction

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/status"
)

// Upstream's timings (pkg/kubelet/eviction/eviction_manager.go).
const (
	// DefaultMonitoringPeriod is upstream's evictionMonitoringPeriod.
	DefaultMonitoringPeriod = 10 * time.Second
	podCleanupTimeout       = 30 * time.Second
	podCleanupPollFreq      = time.Second
	notifierRefreshInterval = 10 * time.Second
)

// Config is the eviction policy.
type Config struct {
	// Thresholds are the parsed evictionHard, evictionSoft... (Parse).
	Thresholds []Threshold
	// PressureTransitionPeriod is evictionPressureTransitionPeriod: how long a pressure
	// condition stays true after its threshold was last met. Default 5 min.
	PressureTransitionPeriod time.Duration
	// MaxPodGracePeriodSeconds is evictionMaxPodGracePeriod: the longest grace period a soft
	// eviction gives a pod (hard evictions give none).
	MaxPodGracePeriodSeconds int64
	// MonitoringPeriod is how often the signals are observed. Default 10 s.
	MonitoringPeriod time.Duration
	// KernelMemcgNotification asks the kernel (cgroup v1 memory.usage_in_bytes eventfd) to wake
	// the manager when memory usage crosses a memory threshold, instead of waiting for the next
	// period.
	KernelMemcgNotification bool
	// MemoryCgroupRoot is the root of the cgroup v1 memory hierarchy, for the notifier (default
	// /sys/fs/cgroup/memory); PodsCgroup is the cgroup of all pods within it (/kubepods).
	MemoryCgroupRoot, PodsCgroup string
}

// Summary gives the stats the signals are observed from.
type Summary interface {
	Summary(ctx context.Context) (*statsapi.Summary, error)
	// HasDedicatedImageFs says the runtime keeps images on another filesystem than the
	// kubelet's root directory.
	HasDedicatedImageFs(ctx context.Context) (bool, error)
}

// Pods are the pods eviction may act on.
type Pods interface {
	// ActivePods are the admitted pods that have not terminated.
	ActivePods() []*v1.Pod
}

// Killer terminates an evicted pod: Failed with reason Evicted and the message, with a
// DisruptionTarget condition when disruption is true, within the grace period.
type Killer interface {
	EvictPod(pod *v1.Pod, gracePeriodSeconds int64, message string, disruption bool)
}

// Recorder records the eviction events.
type Recorder interface {
	Eventf(pod *v1.Pod, eventType, reason, messageFmt string, args ...any)
	NodeEventf(eventType, reason, messageFmt string, args ...any)
}

// Reclaimer frees node-level resources (dead containers, unused images).
type Reclaimer interface {
	Reclaim(ctx context.Context) error
}

// ReclaimFunc adapts a function to Reclaimer.
type ReclaimFunc func(ctx context.Context) error

// Reclaim calls f.
func (f ReclaimFunc) Reclaim(ctx context.Context) error { return f(ctx) }

// Metrics records evictions (kubelet_evictions, kubelet_eviction_stats_age_seconds).
type Metrics interface {
	ObserveEviction(signal string)
	ObserveEvictionStatsAge(signal string, age time.Duration)
}

// Deps are the manager's collaborators. ImageGC, ContainerGC and Metrics may be nil.
type Deps struct {
	Metrics     Metrics
	Clock       clock.WithTicker
	Summary     Summary
	Pods        Pods
	Killer      Killer
	Recorder    Recorder
	ImageGC     Reclaimer
	ContainerGC Reclaimer
}

// Manager is the eviction manager.
type Manager struct {
	cfg  Config
	deps Deps

	mu         sync.RWMutex
	state      State
	conditions []v1.NodeConditionType
	dedicated  *bool // the image filesystem is not the root dir's; nil until known
	thresholds []Threshold

	wake chan struct{} // a memory threshold was crossed
}

// New returns a Manager.
func New(cfg Config, deps Deps) (*Manager, error) {
	if deps.Clock == nil || deps.Summary == nil || deps.Pods == nil || deps.Killer == nil || deps.Recorder == nil {
		return nil, errors.New("eviction: Clock, Summary, Pods, Killer and Recorder are required")
	}
	if cfg.PressureTransitionPeriod == 0 {
		cfg.PressureTransitionPeriod = 5 * time.Minute
	}
	if cfg.MonitoringPeriod == 0 {
		cfg.MonitoringPeriod = DefaultMonitoringPeriod
	}
	if cfg.PressureTransitionPeriod < 0 || cfg.MonitoringPeriod < 0 || cfg.MaxPodGracePeriodSeconds < 0 {
		return nil, fmt.Errorf("eviction: negative period in %+v", cfg)
	}
	if cfg.MemoryCgroupRoot == "" {
		cfg.MemoryCgroupRoot = "/sys/fs/cgroup/memory"
	}
	return &Manager{cfg: cfg, deps: deps, wake: make(chan struct{}, 1)}, nil
}

// IsUnderMemoryPressure, IsUnderDiskPressure and IsUnderPIDPressure are the node's pressure
// conditions.
func (m *Manager) IsUnderMemoryPressure() bool { return m.has(v1.NodeMemoryPressure) }
func (m *Manager) IsUnderDiskPressure() bool   { return m.has(v1.NodeDiskPressure) }
func (m *Manager) IsUnderPIDPressure() bool    { return m.has(v1.NodePIDPressure) }

func (m *Manager) has(c v1.NodeConditionType) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, x := range m.conditions {
		if x == c {
			return true
		}
	}
	return false
}

// AdmitPod is the eviction admit handler: see Admit.
func (m *Manager) AdmitPod(pod *v1.Pod) (ok bool, reason, message string) {
	m.mu.RLock()
	conditions := m.conditions
	m.mu.RUnlock()
	return Admit(pod, critical(pod), conditions, status.QOSClass(pod))
}

func critical(pod *v1.Pod) bool {
	return IsCritical(pod, podconfig.IsStaticPod(pod) || podconfig.IsMirrorPod(pod))
}

// Run observes and acts every monitoring period (at once when a memory notifier fires) until
// ctx ends. After an eviction it waits up to 30 s for the pod to be gone before it observes
// again, as upstream.
func (m *Manager) Run(ctx context.Context) {
	if len(m.cfg.Thresholds) == 0 {
		klog.InfoS("Eviction manager: no thresholds; only local storage limits are enforced")
	}
	klog.InfoS("Eviction manager: starting", "thresholds", fmt.Sprint(m.cfg.Thresholds), "period", m.cfg.MonitoringPeriod,
		"pressureTransitionPeriod", m.cfg.PressureTransitionPeriod)
	notifiers := m.startNotifiers(ctx)
	var lastRefresh time.Time
	for {
		summary, evicted := m.Synchronize(ctx)
		if summary != nil && m.deps.Clock.Since(lastRefresh) > notifierRefreshInterval {
			lastRefresh = m.deps.Clock.Now()
			for _, n := range notifiers {
				if err := n.update(summary); err != nil {
					klog.InfoS("Eviction manager: failed to update the memory notifier", "notifier", n.description(), "err", err)
				}
			}
		}
		if evicted != nil {
			m.waitForCleanup(ctx, evicted)
		}
		select {
		case <-ctx.Done():
			for _, n := range notifiers {
				n.close()
			}
			return
		case <-m.wake:
			klog.V(2).InfoS("Eviction manager: the kernel reported a memory threshold crossed; observing now")
		case <-m.deps.Clock.After(m.cfg.MonitoringPeriod):
		}
	}
}

// waitForCleanup is upstream's waitForPodsCleanup: until the evicted pods are no longer
// active, at most 30 s.
func (m *Manager) waitForCleanup(ctx context.Context, pods []*v1.Pod) {
	deadline := m.deps.Clock.Now().Add(podCleanupTimeout)
	for m.deps.Clock.Now().Before(deadline) {
		gone := true
		for _, p := range m.deps.Pods.ActivePods() {
			for _, e := range pods {
				if p.UID == e.UID {
					gone = false
				}
			}
		}
		if gone {
			klog.InfoS("Eviction manager: pods successfully cleaned up", "pods", klog.KObjSlice(pods))
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-m.deps.Clock.After(podCleanupPollFreq):
		}
	}
	klog.InfoS("Eviction manager: timed out waiting for pods to be cleaned up", "pods", klog.KObjSlice(pods))
}
