package plan

import (
	v1 "k8s.io/api/core/v1"

	"github.com/nodelet/nodelet/internal/container"
	podstatus "github.com/nodelet/nodelet/internal/status"
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
func isRestartableInitContainer(c *v1.Container) bool { return podstatus.IsRestartableInitContainer(c) }

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
	return podstatus.ContainerShouldRestart(c, &pod.Spec, int32(cs.ExitCode))
}
