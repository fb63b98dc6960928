package agent

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodelet/nodelet/internal/eviction"
	"github.com/nodelet/nodelet/internal/nodeshutdown"
	"github.com/nodelet/nodelet/internal/nodestatus"
	"github.com/nodelet/nodelet/internal/podworkers"
)

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

// shutdownKiller terminates pods for graceful node shutdown through their pod workers, as
// upstream's killPodNow with the shutdown manager's status: Failed, reason Terminated, the
// shutdown message and the DisruptionTarget condition.
type shutdownKiller struct{ workers *podworkers.PodWorkers }

var _ nodeshutdown.Killer = shutdownKiller{}

func (k shutdownKiller) KillPod(pod *v1.Pod, grace int64) {
	k.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodKill, Pod: pod,
		KillPodOptions: &podworkers.KillPodOptions{PodTerminationGracePeriodSecondsOverride: &grace,
			Reason: nodeshutdown.Reason, Message: nodeshutdown.Message, DisruptionTarget: true}})
}

func (k shutdownKiller) Terminated(uid types.UID) bool {
	return !k.workers.CouldHaveRunningContainers(uid)
}
