package allocation

import (
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/nodelet/nodelet/internal/container"
)

// ForPod is the resources of the pod's init and regular containers, as its spec says.
func ForPod(pod *v1.Pod) Resources {
	out := make(Resources, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			out[list[i].Name] = *list[i].Resources.DeepCopy()
		}
	}
	return out
}

// Apply is upstream's updatePodFromAllocation: the pod with each container's resources
// replaced by its allocation. The pod is copied only when something differs; changed says so.
// A container without an allocation keeps its spec.
func Apply(pod *v1.Pod, alloc Resources) (_ *v1.Pod, changed bool) {
	if pod == nil || alloc == nil {
		return pod, false
	}
	out := pod
	for _, init := range []bool{true, false} {
		list := out.Spec.Containers
		if init {
			list = out.Spec.InitContainers
		}
		for i := range list {
			a, ok := alloc[list[i].Name]
			if !ok || apiequality.Semantic.DeepEqual(list[i].Resources, a) {
				continue
			}
			if !changed {
				out, changed = pod.DeepCopy(), true
				if init {
					list = out.Spec.InitContainers
				} else {
					list = out.Spec.Containers
				}
			}
			list[i].Resources = *a.DeepCopy()
		}
	}
	return out, changed
}

// Decision is what to do with a pod whose spec asks for other resources than allocated.
type Decision struct {
	// Allocate: the node gives the pod the resources its spec asks for.
	Allocate bool
	// Reason and Message are the PodResizePending condition's when the resize waits:
	// v1.PodReasonDeferred (the node may fit it later) or v1.PodReasonInfeasible (never).
	// Both empty with Allocate false: the spec asks for what is allocated; nothing waits.
	Reason, Message string
}

// AdmitFunc is the node's admission of the pod with the resources its spec asks for, next to
// the other pods' allocations (upstream's canAdmitPod with the resize operation).
type AdmitFunc func(pod *v1.Pod) (ok bool, reason, message string)

// Decide is upstream's handlePodResourcesResize: desired is the pod as its spec says,
// allocated its last allocation (Apply). A resize the node's admission refuses waits:
// Infeasible when admission says so, Deferred for every other reason (a node that lacks the
// room now may have it once other pods shrink or go), as upstream's status manager.
func Decide(desired *v1.Pod, alloc Resources, admit AdmitFunc) Decision {
	if _, changed := Apply(desired, alloc); !changed {
		return Decision{}
	}
	if reason, msg, ok := unresizable(desired, alloc); !ok {
		return Decision{Reason: reason, Message: msg}
	}
	ok, reason, msg := admit(desired)
	if ok {
		return Decision{Allocate: true}
	}
	if reason != v1.PodReasonInfeasible {
		reason = v1.PodReasonDeferred
	}
	return Decision{Reason: reason, Message: msg}
}

// unresizable refuses what upstream's resize admit handler refuses with its default gates on
// this node: the resources of a non-restartable init container (InPlacePodVerticalScalingInit-
// Containers is off), which the API server refuses too.
func unresizable(desired *v1.Pod, alloc Resources) (reason, message string, ok bool) {
	for i := range desired.Spec.InitContainers {
		c := &desired.Spec.InitContainers[i]
		if isSidecar(c) {
			continue
		}
		if a, has := alloc[c.Name]; has && !apiequality.Semantic.DeepEqual(c.Resources, a) {
			return v1.PodReasonInfeasible, "Resize of the non-sidecar init container " + c.Name + " is not supported", false
		}
	}
	return "", "", true
}

func isSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// resizable lists the containers whose resources change in place: regular containers and
// sidecars (upstream's IsResizableContainer with its default gates).
func resizable(pod *v1.Pod) []*v1.Container {
	var out []*v1.Container
	for i := range pod.Spec.InitContainers {
		if isSidecar(&pod.Spec.InitContainers[i]) {
			out = append(out, &pod.Spec.InitContainers[i])
		}
	}
	for i := range pod.Spec.Containers {
		out = append(out, &pod.Spec.Containers[i])
	}
	return out
}

// InProgress is upstream's isContainerResourceResizeInProgress: a running resizable
// container's allocated cpu or memory differs from what the runtime was told (actuated).
// Containers that do not run are sized when they start.
func InProgress(allocated *v1.Pod, ps *container.PodStatus, actuated Resources) bool {
	for _, c := range resizable(allocated) {
		cs := ps.FindContainerStatusByName(c.Name)
		if cs == nil || cs.State != container.StateRunning {
			continue
		}
		if !SameCPUMemory(c.Resources, actuated[c.Name]) {
			return true
		}
	}
	return false
}

// SameCPUMemory compares the cpu and memory requests and limits, the resources that resize.
func SameCPUMemory(a, b v1.ResourceRequirements) bool {
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		if !a.Requests[name].Equal(b.Requests[name]) || !a.Limits[name].Equal(b.Limits[name]) {
			return false
		}
	}
	return true
}
