package status

import (
	"strings"

	v1 "k8s.io/api/core/v1"
)

// QOSClass is upstream's GetPodQOS: the class recorded in the pod's status, else the one
// ComputeQOSClass finds. The runtime uses it to pick a pod's cgroup parent.
func QOSClass(pod *v1.Pod) v1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return ComputeQOSClass(pod)
}

// ComputeQOSClass is upstream's ComputePodQOS with its 1.37 gates (PodLevelResources and
// PodLevelResourcesFixKubeletQOSClass on). Pod-level cpu, memory or hugepages resources decide
// alone. Otherwise each init and main container is BestEffort (no requests nor limits),
// Guaranteed (cpu and memory requests equal to their non-zero limits) or Burstable; the pod is
// the common class, Burstable if they differ. It expects a defaulted pod, whose requests
// default to its limits.
func ComputeQOSClass(pod *v1.Pod) v1.PodQOSClass {
	if podLevelResourcesSet(pod) {
		return requirementsQOS(pod.Spec.Resources)
	}
	var class v1.PodQOSClass
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			c := requirementsQOS(&list[i].Resources)
			switch {
			case c == v1.PodQOSBurstable:
				return c
			case class == "":
				class = c
			case class != c:
				return v1.PodQOSBurstable
			}
		}
	}
	if class == "" {
		return v1.PodQOSBestEffort
	}
	return class
}

// podLevelResourcesSet is the component-helpers IsPodLevelResourcesSet.
func podLevelResourcesSet(pod *v1.Pod) bool {
	r := pod.Spec.Resources
	if r == nil {
		return false
	}
	supported := func(name v1.ResourceName) bool {
		return name == v1.ResourceCPU || name == v1.ResourceMemory || strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
	}
	for _, list := range []v1.ResourceList{r.Requests, r.Limits} {
		for name := range list {
			if supported(name) {
				return true
			}
		}
	}
	return false
}

// requirementsQOS is the class of one set of requirements.
func requirementsQOS(r *v1.ResourceRequirements) v1.PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return v1.PodQOSBestEffort
	}
	var class v1.PodQOSClass
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		c := resourceQOS(r, name)
		switch {
		case c == v1.PodQOSBurstable:
			return c
		case class == "":
			class = c
		case class != c:
			return v1.PodQOSBurstable // some but not all resources set
		}
	}
	return class
}

// resourceQOS is BestEffort when request and limit are both zero, Guaranteed when they are
// equal and non-zero, else Burstable.
func resourceQOS(r *v1.ResourceRequirements, name v1.ResourceName) v1.PodQOSClass {
	req, lim := r.Requests[name], r.Limits[name]
	switch {
	case !req.Equal(lim):
		return v1.PodQOSBurstable
	case req.IsZero():
		return v1.PodQOSBestEffort
	}
	return v1.PodQOSGuaranteed
}
