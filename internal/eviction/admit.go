package eviction

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
)

// systemCriticalPriority is upstream's scheduling.SystemCriticalPriority (2 × 10⁹): pods at or
// above it are critical.
const systemCriticalPriority = 2 * 1000000000

// IsCritical is upstream's kubetypes.IsCriticalPod given whether the pod is static or a mirror
// pod: such pods, and pods of system-critical priority, are never evicted and always admitted.
func IsCritical(pod *v1.Pod, staticOrMirror bool) bool {
	return staticOrMirror || (pod.Spec.Priority != nil && *pod.Spec.Priority >= systemCriticalPriority)
}

// Admit is upstream's eviction admit handler (pure): under memory pressure alone, BestEffort
// pods are refused unless they tolerate the node.kubernetes.io/memory-pressure NoSchedule taint;
// under any other pressure every pod is refused; critical pods never are. ok false comes with
// upstream's reason (Evicted) and message.
func Admit(pod *v1.Pod, critical bool, conditions []v1.NodeConditionType, qos v1.PodQOSClass) (ok bool, reason, message string) {
	if len(conditions) == 0 || critical {
		return true, "", ""
	}
	if len(conditions) == 1 && conditions[0] == v1.NodeMemoryPressure {
		if qos != v1.PodQOSBestEffort {
			return true, "", ""
		}
		taint := &v1.Taint{Key: v1.TaintNodeMemoryPressure, Effect: v1.TaintEffectNoSchedule}
		if v1helper.TolerationsTolerateTaint(klog.Background(), pod.Spec.Tolerations, taint, false) {
			return true, "", ""
		}
	}
	return false, Reason, fmt.Sprintf(nodeConditionMessageFmt, conditions)
}
