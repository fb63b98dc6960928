package agent

import (
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodelet/nodelet/internal/admission"
	"github.com/nodelet/nodelet/internal/eviction"
	"github.com/nodelet/nodelet/internal/nodestatus"
	"github.com/nodelet/nodelet/internal/podworkers"
)

// latePressure answers the node status setters and admission with the eviction manager's
// pressure, which exists once the runtime is connected; before that there is none.
type latePressure struct {
	m atomic.Pointer[eviction.Manager]
}

var (
	_ nodestatus.PressureReporter = (*latePressure)(nil)
	_ admission.PressureAdmitter  = (*latePressure)(nil)
)

func (l *latePressure) IsUnderMemoryPressure() bool {
	m := l.m.Load()
	return m != nil && m.IsUnderMemoryPressure()
}

func (l *latePressure) IsUnderDiskPressure() bool {
	m := l.m.Load()
	return m != nil && m.IsUnderDiskPressure()
}

func (l *latePressure) IsUnderPIDPressure() bool {
	m := l.m.Load()
	return m != nil && m.IsUnderPIDPressure()
}

func (l *latePressure) AdmitPod(pod *v1.Pod) (bool, string, string) {
	if m := l.m.Load(); m != nil {
		return m.AdmitPod(pod)
	}
	return true, "", ""
}

// podEvicter kills an evicted pod through its pod worker, as upstream's killPodNow: an eviction
// kill with the grace period override, reason Evicted and the message.
type podEvicter struct{ workers *podworkers.PodWorkers }

var _ eviction.Killer = podEvicter{}

func (e podEvicter) EvictPod(pod *v1.Pod, grace int64, message string, disruption bool) {
	e.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodKill, Pod: pod,
		KillPodOptions: &podworkers.KillPodOptions{PodTerminationGracePeriodSecondsOverride: &grace, Evict: true,
			Reason: eviction.Reason, Message: message, DisruptionTarget: disruption}})
}

// hardThreshold is the hard threshold of the signal as node allocatable reserves it; none
// reserves nothing (upstream's GetNodeAllocatableReservation).
func hardThreshold(thresholds []eviction.Threshold, s eviction.Signal) *nodestatus.Threshold {
	for _, t := range thresholds {
		if t.Signal == s && t.Hard() {
			return &nodestatus.Threshold{Quantity: t.Value.Quantity, Percentage: t.Value.Percentage}
		}
	}
	zero := resource.MustParse("0")
	return &nodestatus.Threshold{Quantity: &zero}
}
