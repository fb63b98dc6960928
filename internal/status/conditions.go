package status

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
)

// Messages of the PodReadyToStartContainers condition (upstream's kubetypes).
const (
	msgNoPodSandbox         = "no pod sandbox exists"
	msgMultipleSandboxes    = "multiple pod sandboxes are ready and need to be reconciled"
	msgSandboxNotReady      = "pod sandbox is not ready"
	msgNetworkNamespaceMode = "network namespace mode changed and sandbox needs to be recreated"
	msgNoIPAddress          = "pod sandbox has no IP address"
)

// OwnedByKubelet is upstream's PodConditionByKubelet with the v1.37 default gates
// (PodReadyToStartContainersCondition GA, RestartAllContainersOnContainerExits beta): the
// condition types the kubelet writes. Those of the API status are regenerated; the others
// (readiness gates, DisruptionTarget set by the eviction API...) belong to someone else and
// are kept as the API server has them.
func OwnedByKubelet(t v1.PodConditionType) bool {
	switch t {
	case v1.PodScheduled, v1.PodReady, v1.PodInitialized, v1.ContainersReady,
		v1.PodResizeInProgress, v1.PodResizePending, v1.PodReadyToStartContainers, v1.AllContainersRestarting:
		return true
	}
	return false
}

// conditions is the conditions part of upstream's generateAPIPodStatus; s has its phase and
// container statuses already.
func conditions(pod *v1.Pod, old, api *v1.PodStatus, rt *container.PodStatus, s *v1.PodStatus) []v1.PodCondition {
	gen := pod.Generation
	out := make([]v1.PodCondition, 0, len(api.Conditions)+5)
	for _, c := range api.Conditions {
		if !OwnedByKubelet(c.Type) {
			out = append(out, c)
		}
	}
	if c := findCondition(old.Conditions, v1.DisruptionTarget); c != nil {
		if existing := findCondition(out, v1.DisruptionTarget); existing != nil {
			*existing = *c
		} else {
			out = append(out, *c)
		}
	}
	all := append(append([]v1.ContainerStatus{}, s.InitContainerStatuses...), s.ContainerStatuses...)
	out = append(out, readyToStartContainers(pod, rt))
	out = append(out, initialized(pod, all, s.Phase))
	out = append(out, podReady(pod, out, all, s.Phase))
	out = append(out, containersReady(pod, all, s.Phase))
	out = append(out, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue})
	for i := range out {
		if OwnedByKubelet(out[i].Type) {
			out[i].ObservedGeneration = gen
		}
	}
	return out
}

// readyToStartContainers is upstream's GeneratePodReadyToStartContainersCondition: true when
// the newest sandbox is the only ready one, has the pod's network namespace mode, and has an
// IP unless on the host network (runtimeutil.PodSandboxChanged).
func readyToStartContainers(pod *v1.Pod, rt *container.PodStatus) v1.PodCondition {
	c := v1.PodCondition{Type: v1.PodReadyToStartContainers, Status: v1.ConditionFalse, Reason: ReasonPodSandboxNotReady}
	if len(rt.SandboxStatuses) == 0 {
		c.Message = msgNoPodSandbox
		return c
	}
	ready := 0
	for _, sb := range rt.SandboxStatuses {
		if sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			ready++
		}
	}
	sb := rt.SandboxStatuses[0]
	netMode := runtimeapi.NamespaceMode_POD
	if pod.Spec.HostNetwork {
		netMode = runtimeapi.NamespaceMode_NODE
	}
	switch {
	case ready > 1:
		c.Message = msgMultipleSandboxes
	case sb.GetState() != runtimeapi.PodSandboxState_SANDBOX_READY:
		c.Message = msgSandboxNotReady
	case sb.GetLinux().GetNamespaces().GetOptions().GetNetwork() != netMode:
		c.Message = msgNetworkNamespaceMode
	case !pod.Spec.HostNetwork && sb.GetNetwork() != nil && sb.GetNetwork().GetIp() == "":
		c.Message = msgNoIPAddress
	default:
		return v1.PodCondition{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue}
	}
	return c
}

// initialized is upstream's GeneratePodInitializedCondition.
func initialized(pod *v1.Pod, all []v1.ContainerStatus, phase v1.PodPhase) v1.PodCondition {
	c := v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue}
	if all == nil && len(pod.Spec.InitContainers) > 0 {
		c.Status, c.Reason = v1.ConditionFalse, ReasonUnknownContainerStatuses
		return c
	}
	var unknown, incomplete []string
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		st, ok := findStatus(all, ic.Name)
		switch {
		case !ok:
			unknown = append(unknown, ic.Name)
		case IsRestartableInitContainer(ic) && (st.Started == nil || !*st.Started):
			incomplete = append(incomplete, ic.Name)
		case !IsRestartableInitContainer(ic) && !st.Ready:
			incomplete = append(incomplete, ic.Name)
		}
	}
	if phase == v1.PodSucceeded && len(unknown) == 0 {
		c.Reason = ReasonPodCompleted
		return c
	}
	// A main container that ran means the pod was initialized, even if sidecars restart.
	if anyRegularContainerStarted(&pod.Spec, all) {
		return c
	}
	var msgs []string
	if len(unknown) > 0 {
		msgs = append(msgs, fmt.Sprintf("containers with unknown status: %s", unknown))
	}
	if len(incomplete) > 0 {
		msgs = append(msgs, fmt.Sprintf("containers with incomplete status: %s", incomplete))
	}
	if len(msgs) > 0 {
		c.Status, c.Reason, c.Message = v1.ConditionFalse, ReasonContainersNotInitialized, strings.Join(msgs, ", ")
	}
	return c
}

// anyRegularContainerStarted is upstream's HasAnyRegularContainerStarted.
func anyRegularContainerStarted(spec *v1.PodSpec, all []v1.ContainerStatus) bool {
	for _, st := range all {
		if isMain(spec, st.Name) && (st.State.Running != nil || st.State.Terminated != nil) {
			return true
		}
	}
	return false
}

// containersReady is upstream's GenerateContainersReadyCondition: sidecars and main
// containers must be ready.
func containersReady(pod *v1.Pod, all []v1.ContainerStatus, phase v1.PodPhase) v1.PodCondition {
	c := v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionFalse}
	if all == nil {
		c.Reason = ReasonUnknownContainerStatuses
		return c
	}
	var unknown, unready []string
	check := func(name string) {
		if st, ok := findStatus(all, name); !ok {
			unknown = append(unknown, name)
		} else if !st.Ready {
			unready = append(unready, name)
		}
	}
	for i := range pod.Spec.InitContainers {
		if IsRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			check(pod.Spec.InitContainers[i].Name)
		}
	}
	for i := range pod.Spec.Containers {
		check(pod.Spec.Containers[i].Name)
	}
	switch {
	case phase == v1.PodSucceeded && len(unknown) == 0:
		c.Reason = ReasonPodCompleted
		return c
	case phase == v1.PodFailed:
		c.Reason = ReasonPodFailed
		return c
	}
	var msgs []string
	if len(unknown) > 0 {
		msgs = append(msgs, fmt.Sprintf("containers with unknown status: %s", unknown))
	}
	if len(unready) > 0 {
		msgs = append(msgs, fmt.Sprintf("containers with unready status: %s", unready))
	}
	if len(msgs) > 0 {
		c.Reason, c.Message = ReasonContainersNotReady, strings.Join(msgs, ", ")
		return c
	}
	c.Status = v1.ConditionTrue
	return c
}

// podReady is upstream's GeneratePodReadyCondition: ContainersReady and every readiness gate's
// condition (among conds) true.
func podReady(pod *v1.Pod, conds []v1.PodCondition, all []v1.ContainerStatus, phase v1.PodPhase) v1.PodCondition {
	cr := containersReady(pod, all, phase)
	if cr.Status != v1.ConditionTrue {
		return v1.PodCondition{Type: v1.PodReady, Status: cr.Status, Reason: cr.Reason, Message: cr.Message}
	}
	var msgs []string
	for _, rg := range pod.Spec.ReadinessGates {
		c := findCondition(conds, rg.ConditionType)
		if c == nil {
			msgs = append(msgs, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", string(rg.ConditionType)))
		} else if c.Status != v1.ConditionTrue {
			msgs = append(msgs, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", string(rg.ConditionType), c.Status))
		}
	}
	if len(msgs) > 0 {
		return v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: ReasonReadinessGatesNotReady, Message: strings.Join(msgs, ", ")}
	}
	return v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue}
}
