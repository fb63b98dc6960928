package status

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodelet/nodelet/internal/container"
)

// The smallest effective values (upstream's cm.MinMilliCPULimit and cm.MinShares): at or
// below them the allocated value is shown, as the runtime cannot tell 1m from 2m.
const (
	minMilliCPULimit   = 10
	minMilliCPURequest = 2
)

// containerResources is upstream's convertContainerStatusResources: a container's resources
// in its status are its allocation (spec is the allocated container), except that for a
// running container the cpu and memory the runtime reports win (what is applied, never the
// wish); what the runtime does not report keeps the previous status's value for the same
// running container.
func containerResources(spec *v1.Container, cs *container.Status, id string, old *v1.ContainerStatus) *v1.ResourceRequirements {
	res := spec.Resources.DeepCopy()
	if cs.State != container.StateRunning {
		return res
	}
	var oldRes *v1.ResourceRequirements
	if old != nil && old.State.Running != nil && old.ContainerID == id {
		oldRes = old.Resources
	}
	preserve := func(name v1.ResourceName, oldList func(*v1.ResourceRequirements) v1.ResourceList, dst v1.ResourceList) {
		if oldRes == nil {
			return
		}
		if q, ok := oldList(oldRes)[name]; ok {
			dst[name] = q.DeepCopy()
		}
	}
	limits := func(r *v1.ResourceRequirements) v1.ResourceList { return r.Limits }
	requests := func(r *v1.ResourceRequirements) v1.ResourceList { return r.Requests }
	rt := cs.Resources
	if rt == nil {
		rt = &container.Resources{}
	}
	set := func(dst v1.ResourceList, name v1.ResourceName, got *resource.Quantity, minimum int64, oldList func(*v1.ResourceRequirements) v1.ResourceList) {
		if got == nil {
			preserve(name, oldList, dst)
			return
		}
		if allocated := dst[name]; minimum == 0 || got.MilliValue() > minimum || allocated.MilliValue() > minimum {
			dst[name] = got.DeepCopy()
		}
	}
	if res.Limits != nil {
		set(res.Limits, v1.ResourceCPU, rt.CPULimit, minMilliCPULimit, limits)
		set(res.Limits, v1.ResourceMemory, rt.MemoryLimit, 0, limits)
	}
	if res.Requests != nil {
		set(res.Requests, v1.ResourceCPU, rt.CPURequest, minMilliCPURequest, requests)
		set(res.Requests, v1.ResourceMemory, rt.MemoryRequest, 0, requests)
	}
	return res
}
