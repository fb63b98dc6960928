package status

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// unknownAtTermination is the state upstream gives a container whose end it could not see.
func unknownAtTermination() v1.ContainerState {
	return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		Reason:   ReasonContainerStatusUnknown,
		Message:  "The container could not be located when the pod was terminated",
		ExitCode: 137,
	}}
}

// Terminate is upstream's statusManager.TerminatePod for a pod whose worker has finished:
// every container without a terminated state is reported as failed (we cannot know it
// succeeded) — regular containers only once the pod initialized, init containers except the
// trailing ones that never started — and a pod that is not static ends in a terminal phase,
// Failed unless it already Succeeded. Without this a pod deleted while its container was still
// waiting (an image that cannot be pulled) would never reach a terminal phase, and the API
// server would never be told it may forget it.
func Terminate(pod *v1.Pod, st v1.PodStatus, static bool) v1.PodStatus {
	out := *st.DeepCopy()
	if hasInitialized(pod, &out) {
		for i := range out.ContainerStatuses {
			if out.ContainerStatuses[i].State.Terminated == nil {
				out.ContainerStatuses[i].State = unknownAtTermination()
			}
		}
	}
	for i := range attemptedInits(out.InitContainerStatuses) {
		if out.InitContainerStatuses[i].State.Terminated == nil {
			out.InitContainerStatuses[i].State = unknownAtTermination()
		}
	}
	if !static && out.Phase != v1.PodSucceeded && out.Phase != v1.PodFailed {
		out.Phase = v1.PodFailed
	}
	return out
}

// hasInitialized is upstream's hasPodInitialized, read from the status being terminated.
func hasInitialized(pod *v1.Pod, st *v1.PodStatus) bool {
	if len(pod.Spec.InitContainers) == 0 {
		return true
	}
	for _, cs := range st.ContainerStatuses {
		if cs.LastTerminationState.Terminated != nil || cs.State.Waiting == nil {
			return true
		}
	}
	l := len(st.InitContainerStatuses)
	if l == 0 || l > len(pod.Spec.InitContainers) {
		return false
	}
	c, cs := &pod.Spec.InitContainers[l-1], st.InitContainerStatuses[l-1]
	if IsRestartableInitContainer(c) {
		return cs.State.Running != nil && cs.Started != nil && *cs.Started
	}
	for _, t := range []*v1.ContainerStateTerminated{cs.LastTerminationState.Terminated, cs.State.Terminated} {
		if t != nil && t.ExitCode == 0 {
			return true
		}
	}
	return false
}

// attemptedInits is upstream's initializedContainers: the statuses up to the last one that left
// Waiting (or ran before), and at least the first.
func attemptedInits(cs []v1.ContainerStatus) []v1.ContainerStatus {
	for i := len(cs) - 1; i >= 0; i-- {
		if cs[i].State.Waiting == nil || cs[i].LastTerminationState.Terminated != nil {
			return cs[:i+1]
		}
	}
	if len(cs) > 0 {
		return cs[:1]
	}
	return nil
}

// Fail is upstream's PodStatusFunc of a kill by the kubelet (an eviction): phase Failed with the
// reason and message, and with disruption the DisruptionTarget condition (reason
// TerminationByKubelet, the same message), its transition time now.
func Fail(s *v1.PodStatus, pod *v1.Pod, reason, message string, disruption bool, now time.Time) {
	s.Phase, s.Reason, s.Message = v1.PodFailed, reason, message
	if !disruption {
		return
	}
	c := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonTerminationByKubelet,
		Message: message, ObservedGeneration: pod.Generation, LastTransitionTime: metav1.NewTime(now)}
	if existing := findCondition(s.Conditions, v1.DisruptionTarget); existing != nil {
		if existing.Status == v1.ConditionTrue {
			c.LastTransitionTime = existing.LastTransitionTime
		}
		*existing = c
		return
	}
	s.Conditions = append(s.Conditions, c)
}
