package cli

import (
	"fmt"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// podRow is the columns kubectl prints for a pod; the last four only with -o wide.
type podRow struct {
	name, ready, status, restarts, age      string
	ip, node, nominatedNode, readinessGates string
}

// nodeUnreachablePodReason is k8s.io/kubernetes/pkg/util/node.NodeUnreachablePodReason.
const nodeUnreachablePodReason = "NodeLost"

// printPod computes a pod's row as kubectl's printPod does
// (k8s.io/kubernetes/pkg/printers/internalversion/printers.go), with now instead of
// time.Now(). Statement for statement a port: READY counts ready regular containers and
// started restartable init containers (sidecars); STATUS starts from the phase or the pod's
// reason, is overridden by the first init container that has not succeeded (Init:Reason,
// Init:ExitCode:N, Init:N/M), else by the regular containers' waiting or terminated reasons
// (the first container wins, as they are walked from the last), turns "Completed" back into
// Running or NotReady while a container runs, and ends as Terminating (or Unknown for a lost
// node) once deletionTimestamp is set and the phase is not terminal; RESTARTS adds "(X ago)"
// from the latest last-termination time.
func printPod(pod *v1.Pod, now time.Time) podRow {
	restarts := 0
	restartableInitContainerRestarts := 0
	totalContainers := len(pod.Spec.Containers)
	readyContainers := 0
	var lastRestartDate, lastRestartableInitContainerRestartDate time.Time

	podPhase := pod.Status.Phase
	reason := string(podPhase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}

	// If the Pod carries {type:PodScheduled, reason:SchedulingGated}, set reason to 'SchedulingGated'.
	for _, condition := range pod.Status.Conditions {
		if condition.Type == v1.PodScheduled && condition.Reason == v1.PodReasonSchedulingGated {
			reason = v1.PodReasonSchedulingGated
		}
	}

	initContainers := make(map[string]*v1.Container)
	for i := range pod.Spec.InitContainers {
		initContainers[pod.Spec.InitContainers[i].Name] = &pod.Spec.InitContainers[i]
		if isRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			totalContainers++
		}
	}

	initializing := false
	for i := range pod.Status.InitContainerStatuses {
		container := pod.Status.InitContainerStatuses[i]
		restarts += int(container.RestartCount)
		if container.LastTerminationState.Terminated != nil {
			terminatedDate := container.LastTerminationState.Terminated.FinishedAt.Time
			if lastRestartDate.Before(terminatedDate) {
				lastRestartDate = terminatedDate
			}
		}
		if isRestartableInitContainer(initContainers[container.Name]) {
			restartableInitContainerRestarts += int(container.RestartCount)
			if container.LastTerminationState.Terminated != nil {
				terminatedDate := container.LastTerminationState.Terminated.FinishedAt.Time
				if lastRestartableInitContainerRestartDate.Before(terminatedDate) {
					lastRestartableInitContainerRestartDate = terminatedDate
				}
			}
		}
		switch {
		case container.State.Terminated != nil && container.State.Terminated.ExitCode == 0:
			continue
		case isRestartableInitContainer(initContainers[container.Name]) &&
			container.Started != nil && *container.Started:
			if container.Ready {
				readyContainers++
			}
			continue
		case container.State.Terminated != nil:
			// initialization is failed
			if len(container.State.Terminated.Reason) == 0 {
				if container.State.Terminated.Signal != 0 {
					reason = fmt.Sprintf("Init:Signal:%d", container.State.Terminated.Signal)
				} else {
					reason = fmt.Sprintf("Init:ExitCode:%d", container.State.Terminated.ExitCode)
				}
			} else {
				reason = "Init:" + container.State.Terminated.Reason
			}
			initializing = true
		case container.State.Waiting != nil && len(container.State.Waiting.Reason) > 0 && container.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + container.State.Waiting.Reason
			initializing = true
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
			initializing = true
		}
		break
	}

	if !initializing || isPodInitializedConditionTrue(&pod.Status) {
		restarts = restartableInitContainerRestarts
		lastRestartDate = lastRestartableInitContainerRestartDate
		hasRunning := false
		errorReason := ""
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			container := pod.Status.ContainerStatuses[i]

			restarts += int(container.RestartCount)
			if container.LastTerminationState.Terminated != nil {
				terminatedDate := container.LastTerminationState.Terminated.FinishedAt.Time
				if lastRestartDate.Before(terminatedDate) {
					lastRestartDate = terminatedDate
				}
			}
			switch {
			case container.State.Waiting != nil && container.State.Waiting.Reason != "":
				reason = container.State.Waiting.Reason
			case container.State.Terminated != nil:
				if len(container.State.Terminated.Reason) > 0 {
					reason = container.State.Terminated.Reason
				} else if container.State.Terminated.Signal != 0 {
					reason = fmt.Sprintf("Signal:%d", container.State.Terminated.Signal)
				} else {
					reason = fmt.Sprintf("ExitCode:%d", container.State.Terminated.ExitCode)
				}
				if container.State.Terminated.ExitCode != 0 {
					errorReason = reason
				}
			case container.Ready && container.State.Running != nil:
				hasRunning = true
				readyContainers++
			}
		}

		// change pod status back to "Running" if there is at least one container still reporting as "Running" status
		if reason == "Completed" {
			if hasRunning && hasPodReadyCondition(pod.Status.Conditions) {
				reason = "Running"
			} else if errorReason != "" {
				reason = errorReason
			} else if hasRunning {
				reason = "NotReady"
			}
		}
	}

	if pod.DeletionTimestamp != nil && pod.Status.Reason == nodeUnreachablePodReason {
		reason = "Unknown"
	} else if pod.DeletionTimestamp != nil && podPhase != v1.PodSucceeded && podPhase != v1.PodFailed {
		reason = "Terminating"
	}

	restartsStr := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestartDate.IsZero() {
		restartsStr = fmt.Sprintf("%d (%s ago)", restarts, translateTimestampSince(lastRestartDate, now))
	}

	row := podRow{
		name:           pod.Name,
		ready:          fmt.Sprintf("%d/%d", readyContainers, totalContainers),
		status:         reason,
		restarts:       restartsStr,
		age:            translateTimestampSince(podCreated(pod), now),
		ip:             "<none>",
		node:           pod.Spec.NodeName,
		nominatedNode:  pod.Status.NominatedNodeName,
		readinessGates: "<none>",
	}
	if len(pod.Status.PodIPs) > 0 && pod.Status.PodIPs[0].IP != "" {
		row.ip = pod.Status.PodIPs[0].IP
	}
	if row.node == "" {
		row.node = "<none>"
	}
	if row.nominatedNode == "" {
		row.nominatedNode = "<none>"
	}
	if len(pod.Spec.ReadinessGates) > 0 {
		trueConditions := 0
		for _, readinessGate := range pod.Spec.ReadinessGates {
			for _, condition := range pod.Status.Conditions {
				if condition.Type == readinessGate.ConditionType {
					if condition.Status == v1.ConditionTrue {
						trueConditions++
					}
					break
				}
			}
		}
		row.readinessGates = fmt.Sprintf("%d/%d", trueConditions, len(pod.Spec.ReadinessGates))
	}
	return row
}

// translateTimestampSince is kubectl's: "<unknown>" for a zero time, else HumanDuration.
func translateTimestampSince(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

func isRestartableInitContainer(c *v1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

func hasPodReadyCondition(conditions []v1.PodCondition) bool {
	for _, condition := range conditions {
		if condition.Type == v1.PodReady && condition.Status == v1.ConditionTrue {
			return true
		}
	}
	return false
}

func isPodInitializedConditionTrue(status *v1.PodStatus) bool {
	for _, condition := range status.Conditions {
		if condition.Type != v1.PodInitialized {
			continue
		}
		return condition.Status == v1.ConditionTrue
	}
	return false
}

// podCreated is the pod's creationTimestamp. Static pods read from files have none (the API
// server sets it on their mirror pods), so their age counts from the first sync (startTime).
func podCreated(pod *v1.Pod) time.Time {
	if !pod.CreationTimestamp.IsZero() {
		return pod.CreationTimestamp.Time
	}
	if pod.Status.StartTime != nil {
		return pod.Status.StartTime.Time
	}
	return time.Time{}
}
