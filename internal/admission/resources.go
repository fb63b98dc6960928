package admission

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/nodelet/nodelet/internal/resourcename"
)

// insufficientResource is upstream's InsufficientResourceError.
type insufficientResource struct {
	name                      v1.ResourceName
	requested, used, capacity int64
}

func (e insufficientResource) result() Result {
	var reason string
	switch e.name {
	case v1.ResourceCPU:
		reason = OutOfCPU
	case v1.ResourceMemory:
		reason = OutOfMemory
	case v1.ResourceEphemeralStorage:
		reason = OutOfEphemeralStorage
	case v1.ResourcePods:
		reason = OutOfPods
	default:
		reason = InsufficientResourcePrefix + string(e.name)
	}
	return Result{Reason: reason, Message: fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
		e.name, e.requested, e.used, e.capacity)}
}

// resources is the scheduler's framework.Resource: cpu in millicores, the rest in units.
type resources struct {
	milliCPU, memory, ephemeralStorage int64
	allowedPods                        int64
	scalar                             map[v1.ResourceName]int64
}

// add is framework.Resource.Add.
func (r *resources) add(list v1.ResourceList) {
	for name, q := range list {
		switch name {
		case v1.ResourceCPU:
			r.milliCPU += q.MilliValue()
		case v1.ResourceMemory:
			r.memory += q.Value()
		case v1.ResourcePods:
			r.allowedPods += q.Value()
		case v1.ResourceEphemeralStorage:
			r.ephemeralStorage += q.Value()
		default:
			if isScalarResourceName(name) {
				if r.scalar == nil {
					r.scalar = map[v1.ResourceName]int64{}
				}
				r.scalar[name] += q.Value()
			}
		}
	}
}

// newPodRequests is the scheduler's computePodResourceRequest (pod-level resources on).
func newPodRequests(pod *v1.Pod) resources {
	var r resources
	r.add(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))
	return r
}

// admittedPodRequests is the scheduler's PodInfo.CalculateResource for a pod already running:
// the resources it was allocated (status) where they differ from its spec, as upstream with
// InPlacePodVerticalScaling and InPlacePodLevelResourcesVerticalScaling on.
func admittedPodRequests(pod *v1.Pod) v1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{
		UseStatusResources: true,
		InPlacePodLevelResourcesVerticalScalingEnabled: true,
	})
}

// fits is the scheduler's noderesources.Fits: the pod count first, then cpu, memory,
// ephemeral-storage and the scalar resources (in name order) the pod requests, against the
// node's allocatable minus what the other pods request.
func fits(pod *v1.Pod, node *v1.Node, others []*v1.Pod) []insufficientResource {
	var allocatable, used resources
	allocatable.add(node.Status.Allocatable)
	for _, p := range others {
		used.add(admittedPodRequests(p))
	}
	var out []insufficientResource
	if int64(len(others))+1 > allocatable.allowedPods {
		out = append(out, insufficientResource{v1.ResourcePods, 1, int64(len(others)), allocatable.allowedPods})
	}
	req := newPodRequests(pod)
	if req.milliCPU == 0 && req.memory == 0 && req.ephemeralStorage == 0 && len(req.scalar) == 0 {
		return out
	}
	check := func(name v1.ResourceName, requested, used, capacity int64) {
		if requested > 0 && requested > capacity-used {
			out = append(out, insufficientResource{name, requested, used, capacity})
		}
	}
	check(v1.ResourceCPU, req.milliCPU, used.milliCPU, allocatable.milliCPU)
	check(v1.ResourceMemory, req.memory, used.memory, allocatable.memory)
	check(v1.ResourceEphemeralStorage, req.ephemeralStorage, used.ephemeralStorage, allocatable.ephemeralStorage)
	names := make([]v1.ResourceName, 0, len(req.scalar))
	for name := range req.scalar {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	for _, name := range names {
		check(name, req.scalar[name], used.scalar[name], allocatable.scalar[name])
	}
	return out
}

// withoutMissingExtendedResources is upstream's removeMissingExtendedResources: container
// requests of extended resources the node's allocatable does not list are dropped, so that
// cluster-level extended resources do not keep pods out.
func withoutMissingExtendedResources(pod *v1.Pod, node *v1.Node) *v1.Pod {
	missing := func(name v1.ResourceName) bool {
		_, ok := node.Status.Allocatable[name]
		return resourcename.IsExtended(name) && !ok
	}
	needsCopy := false
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			for name := range list[i].Resources.Requests {
				needsCopy = needsCopy || missing(name)
			}
		}
	}
	if !needsCopy {
		return pod
	}
	pod = pod.DeepCopy()
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			for name := range list[i].Resources.Requests {
				if missing(name) {
					delete(list[i].Resources.Requests, name)
				}
			}
		}
	}
	return pod
}

// isScalarResourceName is the scheduler's: extended, huge pages, prefixed native and
// attachable volume resources.
func isScalarResourceName(name v1.ResourceName) bool {
	s := string(name)
	return resourcename.IsExtended(name) || resourcename.IsHugePages(name) ||
		strings.Contains(s, v1.ResourceDefaultNamespacePrefix) || strings.HasPrefix(s, v1.ResourceAttachableVolumesPrefix)
}
