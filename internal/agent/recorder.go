package agent

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// logRecorder writes pod events to the log. The event store and `nodelet events` replace it
// (issue: probes, hooks and events).
type logRecorder struct{}

func (logRecorder) Eventf(pod *v1.Pod, eventType, reason, messageFmt string, args ...any) {
	msg := fmt.Sprintf(messageFmt, args...)
	if eventType == v1.EventTypeWarning {
		klog.InfoS("Warning event", "pod", klog.KObj(pod), "reason", reason, "message", msg)
		return
	}
	klog.V(2).InfoS("Event", "pod", klog.KObj(pod), "reason", reason, "message", msg)
}
