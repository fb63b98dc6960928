package kuberuntime

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/cgroups"
	"github.com/nodelet/nodelet/internal/kuberuntime/criconfig"
	"github.com/nodelet/nodelet/internal/kuberuntime/plan"
	"github.com/nodelet/nodelet/internal/status"
)

// Actuations is the allocation package's record of what the runtime was told for each
// container: the plan resizes a running container whose allocated resources differ from it.
type Actuations interface {
	Actuated(uid types.UID) map[string]v1.ResourceRequirements
	SetActuated(uid types.UID, container string, r v1.ResourceRequirements) error
}

// actuated is the pod's record, nil without an Actuations (no resize).
func (m *Manager) actuated(uid types.UID) map[string]v1.ResourceRequirements {
	if m.deps.Actuations == nil {
		return nil
	}
	a := m.deps.Actuations.Actuated(uid)
	if a == nil {
		a = map[string]v1.ResourceRequirements{}
	}
	return a
}

// recordActuated notes the resources a container was created with.
func (m *Manager) recordActuated(pod *v1.Pod, c *v1.Container) {
	if m.deps.Actuations == nil {
		return
	}
	if err := m.deps.Actuations.SetActuated(pod.UID, c.Name, c.Resources); err != nil {
		klog.ErrorS(err, "Failed to record a container's resources; a later sync may update them again", "pod", klog.KObj(pod), "container", c.Name)
	}
}

// withResource is current with name's requests and limits taken from desired: upstream
// updates memory with the cpu values last applied, then cpu, so that each call changes one
// resource.
func withResource(current, desired v1.ResourceRequirements, name v1.ResourceName) v1.ResourceRequirements {
	out := *current.DeepCopy()
	set := func(dst *v1.ResourceList, src v1.ResourceList) {
		if q, ok := src[name]; ok {
			if *dst == nil {
				*dst = v1.ResourceList{}
			}
			(*dst)[name] = q.DeepCopy()
		} else if *dst != nil {
			delete(*dst, name)
		}
	}
	set(&out.Requests, desired.Requests)
	set(&out.Limits, desired.Limits)
	return out
}

// resizeContainers is upstream's doPodResizeAction for containers: memory first, then cpu,
// each in the plan's order (decreases before increases), through CRI
// UpdateContainerResources, recording what each container now runs with. It returns the
// first failure's message, the pod's PodResizeInProgress reason Error.
//
// With PodCgroups, the pod's cgroup is first set to the larger of what it had and what it
// gets, and to what it gets once every container is resized, as upstream grows the pod's
// cgroup before its containers and shrinks it after them.
func (m *Manager) resizeContainers(ctx context.Context, pod *v1.Pod, updates map[v1.ResourceName][]plan.ContainerUpdate) error {
	if m.deps.PodCgroups == nil {
		return m.resizeEachContainer(ctx, pod, updates)
	}
	parent := cgroups.PodCgroup(m.cfg.CgroupRoot, pod)
	before, after := cgroups.Pod(m.podAsActuated(pod, updates)), cgroups.Pod(pod)
	if err := m.deps.PodCgroups.Set(parent, cgroups.Larger(before, after)); err != nil {
		return fmt.Errorf("failed to grow the pod's cgroup for the resize: %w", err)
	}
	if err := m.resizeEachContainer(ctx, pod, updates); err != nil {
		return err
	}
	if err := m.deps.PodCgroups.Set(parent, after); err != nil {
		return fmt.Errorf("failed to set the pod's cgroup to its resized resources: %w", err)
	}
	return nil
}

// podAsActuated is the pod with the resources its containers run with before the resize.
func (m *Manager) podAsActuated(pod *v1.Pod, updates map[v1.ResourceName][]plan.ContainerUpdate) *v1.Pod {
	current := map[string]v1.ResourceRequirements{}
	for _, us := range updates {
		for _, u := range us {
			current[u.Container.Name] = u.Current
		}
	}
	out := pod.DeepCopy()
	for _, cs := range [][]v1.Container{out.Spec.InitContainers, out.Spec.Containers} {
		for i := range cs {
			if r, ok := current[cs[i].Name]; ok {
				cs[i].Resources = r
			}
		}
	}
	return out
}

// resizeEachContainer resizes the containers (resizeContainers without the pod's cgroup).
func (m *Manager) resizeEachContainer(ctx context.Context, pod *v1.Pod, updates map[v1.ResourceName][]plan.ContainerUpdate) error {
	qos := status.QOSClass(pod)
	applied := map[string]v1.ResourceRequirements{}
	for _, name := range []v1.ResourceName{v1.ResourceMemory, v1.ResourceCPU} {
		for _, u := range updates[name] {
			current, ok := applied[u.ID]
			if !ok {
				current = u.Current
			}
			next := withResource(current, u.Container.Resources, name)
			c := u.Container.DeepCopy()
			c.Resources = next
			r := criconfig.Resources(qos, c, m.cfg.MemoryCapacity, m.cfg.OOMGroup)
			if err := m.deps.Containers.UpdateContainerResources(ctx, u.ID, r); err != nil {
				return fmt.Errorf("failed to update %s of container %q: %w", name, c.Name, err)
			}
			applied[u.ID] = next
			klog.V(2).InfoS("Resized container", "pod", klog.KObj(pod), "container", c.Name, "resource", name)
			if err := m.deps.Actuations.SetActuated(pod.UID, c.Name, next); err != nil {
				return err
			}
		}
	}
	return nil
}
