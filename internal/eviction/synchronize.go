package eviction

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Synchronize observes the signals once and acts: it returns the summary it observed (nil when
// the stats failed) and the pods it evicted. Every pod over its local storage limits is evicted;
// otherwise at most one pod for a threshold.
func (m *Manager) Synchronize(ctx context.Context) (*statsapi.Summary, []*v1.Pod) {
	known := m.dedicatedImageFs(ctx)
	if known == nil {
		return nil, nil
	}
	dedicated := *known
	active := m.deps.Pods.ActivePods()
	summary, err := m.deps.Summary.Summary(ctx)
	if err != nil {
		klog.ErrorS(err, "Eviction manager: failed to get summary stats; eviction signals are not observed until they can be read")
		return nil, nil
	}
	obs := Observe(summary)
	stats := PodStatsOf(summary)
	now := m.deps.Clock.Now()

	m.mu.Lock()
	next, d := Step(m.thresholds, m.cfg.PressureTransitionPeriod, m.state, obs, now)
	if changed(m.conditions, d.Conditions) {
		klog.InfoS("Eviction manager: node pressure conditions changed", "conditions", d.Conditions, "before", m.conditions)
	}
	m.state, m.conditions = next, d.Conditions
	m.mu.Unlock()

	var overLimits []*v1.Pod
	for _, pod := range active {
		s, ok := stats(string(pod.UID))
		if !ok {
			continue
		}
		if signal, msg, over := LocalStorageViolation(pod, s, dedicated); over && m.evict(pod, 0, msg, false) {
			overLimits = append(overLimits, pod)
			m.observe(signal)
		}
	}
	if len(overLimits) > 0 {
		return summary, overLimits
	}

	threshold, r, ok := d.Reclaim()
	if !ok {
		klog.V(3).InfoS("Eviction manager: no resources are starved")
		return summary, nil
	}
	klog.InfoS("Eviction manager: attempting to reclaim", "resourceName", r, "threshold", threshold.String())
	m.deps.Recorder.NodeEventf(v1.EventTypeWarning, "EvictionThresholdMet", "Attempting to reclaim %s", r)
	if m.reclaimNodeLevel(ctx, threshold.Signal, dedicated) {
		klog.InfoS("Eviction manager: able to reduce resource pressure without evicting pods.", "resourceName", r)
		return summary, nil
	}
	klog.InfoS("Eviction manager: must evict pod(s) to reclaim", "resourceName", r)
	rank, ok := RankerFor(threshold.Signal, dedicated)
	if !ok {
		klog.ErrorS(nil, "Eviction manager: no ranking function for signal", "threshold", threshold.Signal)
		return summary, nil
	}
	if len(active) == 0 {
		klog.ErrorS(nil, "Eviction manager: eviction thresholds have been met, but no pods are active to evict")
		return summary, nil
	}
	ranked := append([]*v1.Pod(nil), active...)
	rank(ranked, stats)
	klog.InfoS("Eviction manager: pods ranked for eviction", "pods", klog.KObjSlice(ranked))
	if m.deps.Metrics != nil {
		for _, t := range d.Act {
			if o, ok := obs[t.Signal]; ok && !o.Time.IsZero() {
				m.deps.Metrics.ObserveEvictionStatsAge(string(t.Signal), m.deps.Clock.Since(o.Time))
			}
		}
	}
	for _, pod := range ranked {
		grace := int64(0)
		if !threshold.Hard() {
			grace = m.cfg.MaxPodGracePeriodSeconds
			if tgp := pod.Spec.TerminationGracePeriodSeconds; tgp != nil {
				grace = min(grace, *tgp)
			}
		}
		msg, annotations := Message(r, pod, stats, d.Act, obs)
		if m.evict(pod, grace, msg, true, "annotations", annotations) {
			m.observe(string(threshold.Signal))
			return summary, []*v1.Pod{pod}
		}
	}
	klog.InfoS("Eviction manager: unable to evict any pods from the node")
	return summary, nil
}

// dedicatedImageFs learns once whether the image filesystem is the root dir's, and sets the
// containerfs thresholds accordingly. Nil while it cannot be told.
func (m *Manager) dedicatedImageFs(ctx context.Context) *bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dedicated != nil {
		return m.dedicated
	}
	dedicated, err := m.deps.Summary.HasDedicatedImageFs(ctx)
	if err != nil {
		klog.ErrorS(err, "Eviction manager: cannot tell whether the runtime's image filesystem is the root directory's; retrying at the next period")
		return nil
	}
	m.dedicated = &dedicated
	m.thresholds = WithContainerFs(m.cfg.Thresholds, dedicated)
	klog.InfoS("Eviction manager: filesystems", "dedicatedImageFs", dedicated)
	return m.dedicated
}

// reclaimNodeLevel runs the signal's node-level reclaim (dead containers, unused images, as
// upstream's buildSignalToNodeReclaimFuncs) and reports whether no threshold is met afterwards.
func (m *Manager) reclaimNodeLevel(ctx context.Context, s Signal, dedicated bool) bool {
	var funcs []Reclaimer
	switch s {
	case SignalImageFsAvailable, SignalImageFsInodesFree, SignalContainerFsAvailable, SignalContainerFsInodesFree:
		funcs = []Reclaimer{m.deps.ContainerGC, m.deps.ImageGC}
	case SignalNodeFsAvailable, SignalNodeFsInodesFree:
		if !dedicated {
			funcs = []Reclaimer{m.deps.ContainerGC, m.deps.ImageGC}
		}
	}
	ran := false
	for _, f := range funcs {
		if f == nil {
			continue
		}
		ran = true
		if err := f.Reclaim(ctx); err != nil {
			klog.InfoS("Eviction manager: unexpected error when attempting to reduce resource pressure", "signal", s, "err", err)
		}
	}
	if !ran {
		return false
	}
	summary, err := m.deps.Summary.Summary(ctx)
	if err != nil {
		klog.ErrorS(err, "Eviction manager: failed to get summary stats after resource reclaim")
		return false
	}
	m.mu.RLock()
	thresholds := m.thresholds
	m.mu.RUnlock()
	return Resolved(thresholds, Observe(summary))
}

// evict terminates the pod with reason Evicted unless it is critical, records the event, and
// reports whether it did.
func (m *Manager) evict(pod *v1.Pod, grace int64, msg string, disruption bool, logKV ...any) bool {
	if critical(pod) {
		klog.ErrorS(nil, "Eviction manager: cannot evict a critical pod (static, mirror or system-critical priority)", "pod", klog.KObj(pod))
		return false
	}
	m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, Reason, "%s", msg)
	klog.InfoS("Evicting pod", append([]any{"pod", klog.KObj(pod), "podUID", pod.UID, "gracePeriod", grace, "message", msg}, logKV...)...)
	m.deps.Killer.EvictPod(pod, grace, msg, disruption)
	return true
}

func (m *Manager) observe(signal string) {
	if m.deps.Metrics != nil {
		m.deps.Metrics.ObserveEviction(signal)
	}
}

func changed(a, b []v1.NodeConditionType) bool {
	return fmt.Sprint(sortedConditions(a)) != fmt.Sprint(sortedConditions(b))
}

func sortedConditions(c []v1.NodeConditionType) []v1.NodeConditionType {
	out := append([]v1.NodeConditionType(nil), c...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
