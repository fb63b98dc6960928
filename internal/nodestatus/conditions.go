package nodestatus

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// pressureCondition describes one of the pressure conditions as upstream's
// MemoryPressureCondition, DiskPressureCondition and PIDPressureCondition set them.
type pressureCondition struct {
	condType v1.NodeConditionType
	pressure func(*observation) bool
	// what the condition says, and the event recorded, under pressure (True) and without (False)
	trueReason, trueMessage, trueEvent    string
	falseReason, falseMessage, falseEvent string
}

// pressureConditions are the pressure conditions in upstream's order.
func pressureConditions() []pressureCondition {
	return []pressureCondition{
		{
			condType:     v1.NodeMemoryPressure,
			pressure:     func(o *observation) bool { return o.memoryPressure },
			trueReason:   "KubeletHasInsufficientMemory",
			trueMessage:  "kubelet has insufficient memory available",
			trueEvent:    "NodeHasInsufficientMemory",
			falseReason:  "KubeletHasSufficientMemory",
			falseMessage: "kubelet has sufficient memory available",
			falseEvent:   "NodeHasSufficientMemory",
		},
		{
			condType:     v1.NodeDiskPressure,
			pressure:     func(o *observation) bool { return o.diskPressure },
			trueReason:   "KubeletHasDiskPressure",
			trueMessage:  "kubelet has disk pressure",
			trueEvent:    "NodeHasDiskPressure",
			falseReason:  "KubeletHasNoDiskPressure",
			falseMessage: "kubelet has no disk pressure",
			falseEvent:   "NodeHasNoDiskPressure",
		},
		{
			condType:     v1.NodePIDPressure,
			pressure:     func(o *observation) bool { return o.pidPressure },
			trueReason:   "KubeletHasInsufficientPID",
			trueMessage:  "kubelet has insufficient PID available",
			trueEvent:    "NodeHasInsufficientPID",
			falseReason:  "KubeletHasSufficientPID",
			falseMessage: "kubelet has sufficient PID available",
			falseEvent:   "NodeHasSufficientPID",
		},
	}
}

// statusEvent is the event upstream's recordNodeStatusEvent records.
func statusEvent(nodeName, event string) nodeEvent {
	return nodeEvent{v1.EventTypeNormal, event, fmt.Sprintf("Node %s status is now: %s", nodeName, event)}
}

// setPressureCondition sets one pressure condition: the heartbeat is always now; status,
// reason, message and transition time change only when the status does (a new condition
// starts Unknown, so it always transitions). An event is recorded on every transition.
func setPressureCondition(node *v1.Node, now time.Time, pc pressureCondition, pressure bool) []nodeEvent {
	currentTime := metav1.NewTime(now)
	var condition *v1.NodeCondition
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == pc.condType {
			condition = &node.Status.Conditions[i]
		}
	}
	isNew := condition == nil
	if isNew {
		condition = &v1.NodeCondition{Type: pc.condType, Status: v1.ConditionUnknown}
	}
	condition.LastHeartbeatTime = currentTime

	var events []nodeEvent
	want, reason, message, event := v1.ConditionFalse, pc.falseReason, pc.falseMessage, pc.falseEvent
	if pressure {
		want, reason, message, event = v1.ConditionTrue, pc.trueReason, pc.trueMessage, pc.trueEvent
	}
	if condition.Status != want {
		condition.Status = want
		condition.Reason = reason
		condition.Message = message
		condition.LastTransitionTime = currentTime
		events = append(events, statusEvent(node.Name, event))
	}
	if isNew {
		node.Status.Conditions = append(node.Status.Conditions, *condition)
	}
	return events
}

// requiredCapacities must be in the node's capacity for it to be Ready (upstream, with
// LocalStorageCapacityIsolation on).
func requiredCapacities() []v1.ResourceName {
	return []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods, v1.ResourceEphemeralStorage}
}

// setReadyCondition is upstream's ReadyCondition setter: True "KubeletReady" unless there are
// readiness errors or required capacities are missing, then False "KubeletNotReady" with the
// aggregated errors as the message. The transition time changes only with the status; a
// transition of an existing condition records NodeReady or NodeNotReady. Ready stays last.
func setReadyCondition(node *v1.Node, now time.Time, readinessErrs []error) []nodeEvent {
	currentTime := metav1.NewTime(now)
	newCondition := v1.NodeCondition{
		Type:              v1.NodeReady,
		Status:            v1.ConditionTrue,
		Reason:            "KubeletReady",
		Message:           "kubelet is posting ready status",
		LastHeartbeatTime: currentTime,
	}
	errs := append([]error(nil), readinessErrs...)
	var missing []string
	for _, r := range requiredCapacities() {
		if _, ok := node.Status.Capacity[r]; !ok {
			missing = append(missing, string(r))
		}
	}
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("missing node capacity for resources: %s", strings.Join(missing, ", ")))
	}
	if agg := utilerrors.NewAggregate(errs); agg != nil {
		newCondition.Status = v1.ConditionFalse
		newCondition.Reason = "KubeletNotReady"
		newCondition.Message = agg.Error()
	}

	for i := range node.Status.Conditions {
		old := &node.Status.Conditions[i]
		if old.Type != v1.NodeReady {
			continue
		}
		var events []nodeEvent
		if old.Status == newCondition.Status {
			newCondition.LastTransitionTime = old.LastTransitionTime
		} else {
			newCondition.LastTransitionTime = currentTime
			event := "NodeNotReady"
			if newCondition.Status == v1.ConditionTrue {
				event = "NodeReady"
			}
			events = append(events, statusEvent(node.Name, event))
		}
		*old = newCondition
		return events
	}
	newCondition.LastTransitionTime = currentTime
	node.Status.Conditions = append(node.Status.Conditions, newCondition)
	return nil
}
