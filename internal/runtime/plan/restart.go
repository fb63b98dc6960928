package plan

import (
	v1 "k8s.io/api/core/v1"

	"github.com/nodelet/nodelet/internal/container"
)

// Restart decisions, as upstream with its v1.37 default feature gates: ContainerRestartRules
// (container-level restartPolicy and restartPolicyRules) and RestartAllContainersOnContainerExits
// are on.

// shouldRestartOnFailure is upstream's: the pod-level policy restarts failed containers.
func shouldRestartOnFailure(pod *v1.Pod) bool {
	return pod.Spec.RestartPolicy != v1.RestartPolicyNever
}

// containerSucceeded: the container's newest instance exited 0.
func containerSucceeded(c *v1.Container, status *container.PodStatus) bool {
	cs := status.FindContainerStatusByName(c.Name)
	return cs != nil && cs.State == container.StateExited && cs.ExitCode == 0
}

// isRestartableInitContainer is upstream's podutil.IsRestartableInitContainer: a sidecar.
func isRestartableInitContainer(c *v1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// isInitContainerFailed is upstream's: exited non-zero, OOM-killed, or in an unknown state.
func isInitContainerFailed(cs *container.Status) bool {
	return cs.Reason == "OOMKilled" ||
		(cs.State == container.StateExited && cs.ExitCode != 0) ||
		cs.State == container.StateUnknown
}

// shouldContainerBeRestarted is upstream's kubecontainer.ShouldContainerBeRestarted.
func shouldContainerBeRestarted(c *v1.Container, pod *v1.Pod, status *container.PodStatus) bool {
	if pod.DeletionTimestamp != nil {
		return false // a pod being deleted never restarts anything
	}
	cs := status.FindContainerStatusByName(c.Name)
	switch {
	case cs == nil:
		return true // never started (or every instance was garbage-collected)
	case cs.State == container.StateRunning:
		return false
	case cs.State == container.StateUnknown || cs.State == container.StateCreated:
		return true
	}
	return containerShouldRestart(c, pod.Spec.RestartPolicy, int32(cs.ExitCode))
}

// containerShouldRestart is upstream's podutil.ContainerShouldRestart for an exited container:
// a matching restart rule, else the container-level policy, else the pod-level one.
func containerShouldRestart(c *v1.Container, podPolicy v1.RestartPolicy, exitCode int32) bool {
	if c.RestartPolicy != nil {
		if rule, ok := matchingRestartRule(c, exitCode); ok {
			switch rule.Action {
			case v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleActionRestartAllContainers:
				// RestartAllContainers also restarts this one; resetting the others is the
				// caller's (upstream's restartAllContainers path, not part of a Plan).
				return true
			}
		}
		switch *c.RestartPolicy {
		case v1.ContainerRestartPolicyAlways:
			return true
		case v1.ContainerRestartPolicyOnFailure:
			return exitCode != 0
		case v1.ContainerRestartPolicyNever:
			return false
		}
	}
	switch podPolicy {
	case v1.RestartPolicyOnFailure:
		return exitCode != 0
	case v1.RestartPolicyNever:
		return false
	}
	return true // Always, and the default
}

// matchingRestartRule is upstream's podutil.FindMatchingContainerRestartRule.
func matchingRestartRule(c *v1.Container, exitCode int32) (v1.ContainerRestartRule, bool) {
	for _, rule := range c.RestartPolicyRules {
		if rule.ExitCodes == nil {
			continue
		}
		matched := false
		for _, code := range rule.ExitCodes.Values {
			if code == exitCode {
				matched = true
			}
		}
		switch rule.ExitCodes.Operator {
		case v1.ContainerRestartRuleOnExitCodesOpIn:
			if matched {
				return rule, true
			}
		case v1.ContainerRestartRuleOnExitCodesOpNotIn:
			if !matched {
				return rule, true
			}
		}
	}
	return v1.ContainerRestartRule{}, false
}
