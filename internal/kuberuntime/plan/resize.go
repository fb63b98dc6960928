package plan

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/nodelet/nodelet/internal/container"
)

// ContainerUpdate is a running container whose cpu or memory changes in place (CRI
// UpdateContainerResources): upstream's containerToUpdateInfo.
type ContainerUpdate struct {
	Container *v1.Container // the allocated spec container, pointing into Input.Pod
	ID        string        // the CRI container ID
	// Current are the resources the runtime was told last (the actuated record).
	Current v1.ResourceRequirements
}

// resizeQuantities are the four values that resize, as upstream's resourceRequirements.
type resizeQuantities struct{ memLimit, memRequest, cpuLimit, cpuRequest int64 }

func quantities(r v1.ResourceRequirements) resizeQuantities {
	return resizeQuantities{memLimit: r.Limits.Memory().Value(), memRequest: r.Requests.Memory().Value(),
		cpuLimit: r.Limits.Cpu().MilliValue(), cpuRequest: r.Requests.Cpu().MilliValue()}
}

// resizeAction is upstream's computePodResizeAction for a running container: it compares the
// allocated resources (the container's spec, after allocation) with the actuated ones and
// either adds the container to ContainersToUpdate (resizePolicy NotRequired, the default) or
// kills it to restart (RestartContainer for a resource that changed). It reports whether the
// container is kept running. With no actuated record (Input.Actuated nil) nothing resizes.
func resizeAction(in Input, c *v1.Container, cs *container.Status, p *Plan) (keep bool) {
	if in.Actuated == nil {
		return true
	}
	current := in.Actuated[c.Name]
	want, have := quantities(c.Resources), quantities(current)
	if want == have {
		return true
	}
	changed := func(name v1.ResourceName, a, b int64) (resize, restart bool) {
		if a == b {
			return false, false
		}
		for _, pol := range c.ResizePolicy {
			if pol.ResourceName == name {
				return true, pol.RestartPolicy == v1.RestartContainer
			}
		}
		return true, false // NotRequired is the default
	}
	resizeMemLim, restartMemLim := changed(v1.ResourceMemory, want.memLimit, have.memLimit)
	resizeMemReq, restartMemReq := changed(v1.ResourceMemory, want.memRequest, have.memRequest)
	resizeCPULim, restartCPULim := changed(v1.ResourceCPU, want.cpuLimit, have.cpuLimit)
	resizeCPUReq, restartCPUReq := changed(v1.ResourceCPU, want.cpuRequest, have.cpuRequest)
	if restartMemLim || restartMemReq || restartCPULim || restartCPUReq {
		p.ContainersToKill[cs.ID] = KillInfo{Name: cs.Name, Container: c, Reason: ReasonResize,
			Message: fmt.Sprintf("Container %s resize requires restart", c.Name)}
		return false
	}
	u := ContainerUpdate{Container: c, ID: cs.ID, Current: current}
	if p.ContainersToUpdate == nil {
		p.ContainersToUpdate = map[v1.ResourceName][]ContainerUpdate{}
	}
	// Decreases go before increases, so that the containers never ask for more at once than
	// before or after the resize.
	add := func(name v1.ResourceName, a, b int64) {
		if a < b {
			p.ContainersToUpdate[name] = slices.Insert(p.ContainersToUpdate[name], 0, u)
		} else {
			p.ContainersToUpdate[name] = append(p.ContainersToUpdate[name], u)
		}
	}
	switch {
	case resizeMemLim:
		add(v1.ResourceMemory, want.memLimit, have.memLimit)
	case resizeMemReq:
		add(v1.ResourceMemory, want.memRequest, have.memRequest)
	}
	switch {
	case resizeCPULim:
		add(v1.ResourceCPU, want.cpuLimit, have.cpuLimit)
	case resizeCPUReq:
		add(v1.ResourceCPU, want.cpuRequest, have.cpuRequest)
	}
	return true
}
