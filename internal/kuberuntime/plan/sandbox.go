package plan

import (
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
)

// Why a pod needs a new sandbox: upstream's kubetypes.PodSandboxNotReadyMsg* messages, which
// also become the message of a False PodReadyToStartContainers condition.
const (
	MsgNoPodSandbox         = "no pod sandbox exists"
	MsgMultipleSandboxes    = "multiple pod sandboxes are ready and need to be reconciled"
	MsgSandboxNotReady      = "pod sandbox is not ready"
	MsgNetworkNamespaceMode = "network namespace mode changed and sandbox needs to be recreated"
	MsgNoIPAddress          = "pod sandbox has no IP address"
)

// SandboxCheck is the answer of SandboxChanged.
type SandboxCheck struct {
	Changed   bool   // a new sandbox must be created (after killing the pod)
	Attempt   uint32 // the attempt number of the sandbox to use or create
	SandboxID string // the newest sandbox ("" when there is none, or the network mode changed)
	Message   string // why Changed, one of the Msg constants; "" when not Changed
}

// SandboxChanged is upstream's PodSandboxChanged (kuberuntime/util): whether the pod's newest
// sandbox (status.SandboxStatuses[0]) can be used, and which attempt number comes next. The
// status generator uses it too, for the PodReadyToStartContainers condition.
func SandboxChanged(pod *v1.Pod, status *container.PodStatus) SandboxCheck {
	if status == nil || len(status.SandboxStatuses) == 0 {
		return SandboxCheck{Changed: true, Message: MsgNoPodSandbox}
	}
	ready := 0
	for _, s := range status.SandboxStatuses {
		if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			ready++
		}
	}
	newest := status.SandboxStatuses[0]
	next := newest.GetMetadata().GetAttempt() + 1
	switch {
	case ready > 1:
		return SandboxCheck{Changed: true, Attempt: next, SandboxID: newest.GetId(), Message: MsgMultipleSandboxes}
	case newest.GetState() != runtimeapi.PodSandboxState_SANDBOX_READY:
		return SandboxCheck{Changed: true, Attempt: next, SandboxID: newest.GetId(), Message: MsgSandboxNotReady}
	case newest.GetLinux().GetNamespaces().GetOptions().GetNetwork() != networkNamespaceForPod(pod):
		// As upstream: no SandboxID, so no SandboxChanged event.
		return SandboxCheck{Changed: true, Attempt: next, Message: MsgNetworkNamespaceMode}
	case !pod.Spec.HostNetwork && newest.GetNetwork() != nil && newest.GetNetwork().GetIp() == "":
		return SandboxCheck{Changed: true, Attempt: next, SandboxID: newest.GetId(), Message: MsgNoIPAddress}
	}
	return SandboxCheck{Attempt: newest.GetMetadata().GetAttempt(), SandboxID: newest.GetId()}
}

// networkNamespaceForPod is upstream's NetworkNamespaceForPod.
func networkNamespaceForPod(pod *v1.Pod) runtimeapi.NamespaceMode {
	if pod != nil && pod.Spec.HostNetwork {
		return runtimeapi.NamespaceMode_NODE
	}
	return runtimeapi.NamespaceMode_POD
}

// hasAnyRegularContainerCreated is upstream's HasAnyRegularContainerCreated: a main container
// exists in any sandbox, so initialization completed once.
func hasAnyRegularContainerCreated(pod *v1.Pod, status *container.PodStatus) bool {
	for i := range pod.Spec.Containers {
		cs := status.FindContainerStatusByName(pod.Spec.Containers[i].Name)
		if cs == nil {
			continue
		}
		switch cs.State {
		case container.StateCreated, container.StateRunning, container.StateExited:
			return true
		}
	}
	return false
}
