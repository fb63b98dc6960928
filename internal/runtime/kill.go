package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/runtime/plan"
	"github.com/nodelet/nodelet/internal/status"
)

// minGracePeriod is upstream's minimumGracePeriodInSeconds.
const minGracePeriod = 2

// GracePeriod is the seconds a container gets between SIGTERM and SIGKILL: the override, else
// a probe's terminationGracePeriodSeconds when a liveness or startup failure kills it, else the
// pod's deletionGracePeriodSeconds or terminationGracePeriodSeconds; at least 2 s, as upstream.
func GracePeriod(pod *v1.Pod, c *v1.Container, reason string, override *int64) int64 {
	var g int64 = 30
	switch {
	case pod.DeletionGracePeriodSeconds != nil:
		g = *pod.DeletionGracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		g = *pod.Spec.TerminationGracePeriodSeconds
	}
	if c != nil {
		switch {
		case reason == plan.ReasonLivenessProbe && c.LivenessProbe != nil && c.LivenessProbe.TerminationGracePeriodSeconds != nil:
			g = *c.LivenessProbe.TerminationGracePeriodSeconds
		case reason == plan.ReasonStartupProbe && c.StartupProbe != nil && c.StartupProbe.TerminationGracePeriodSeconds != nil:
			g = *c.StartupProbe.TerminationGracePeriodSeconds
		}
	}
	if override != nil {
		g = *override
	}
	if g < minGracePeriod {
		g = minGracePeriod
	}
	return g
}

// killContainer stops one container with its grace period and records the Killing event.
func (m *Manager) killContainer(ctx context.Context, pod *v1.Pod, id, name, reason, message string, override *int64) error {
	var spec *v1.Container
	if pod != nil {
		spec = findContainer(pod, name)
	}
	grace := int64(minGracePeriod)
	if pod != nil {
		grace = GracePeriod(pod, spec, reason, override)
		if message == "" {
			message = "Stopping container " + name
		}
		m.deps.Recorder.Eventf(pod, v1.EventTypeNormal, "Killing", "%s", message)
	} else if override != nil && *override > grace {
		grace = *override
	}
	klog.V(2).InfoS("Killing container", "pod", klog.KObj(pod), "container", name, "containerID", id, "gracePeriod", grace)
	if err := m.deps.Containers.StopContainer(ctx, id, grace); err != nil && !isNotFound(err) {
		return fmt.Errorf("stop container %s (%s): %w", name, id, err)
	}
	return nil
}

// KillPod stops a pod's running containers, then its sandboxes: regular containers in
// parallel, then sidecars one by one in reverse order, as upstream. pod may be nil for a pod no
// source knows (an orphan found in the runtime): it then gets the minimum grace period unless
// override says otherwise.
func (m *Manager) KillPod(ctx context.Context, pod *v1.Pod, ps *container.PodStatus, override *int64) error {
	var mains, sidecars []*container.Status
	for _, cs := range ps.ContainerStatuses {
		if cs.State != container.StateRunning && cs.State != container.StateCreated && cs.State != container.StateUnknown {
			continue
		}
		if pod != nil && isSidecar(pod, cs.Name) {
			sidecars = append(sidecars, cs)
		} else {
			mains = append(mains, cs)
		}
	}
	var (
		mu    sync.Mutex
		errs  []error
		wg    sync.WaitGroup
		start = m.deps.Clock.Now()
	)
	for _, cs := range mains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.killContainer(ctx, pod, cs.ID, cs.Name, "", "", override); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if pod != nil {
		orderSidecarsForStop(pod, sidecars)
	}
	for _, cs := range sidecars {
		// One grace period for the whole pod: a sidecar gets what the containers before it left,
		// at least the 2 s minimum, as upstream.
		left := GracePeriod(pod, findContainer(pod, cs.Name), "", override) - int64(m.deps.Clock.Since(start).Seconds())
		left = max(left, minGracePeriod)
		if err := m.killContainer(ctx, pod, cs.ID, cs.Name, "", "", &left); err != nil {
			errs = append(errs, err)
		}
	}
	// Every sandbox, ready or not: a sandbox whose pause process died still holds its network
	// namespace and IP until it is stopped (upstream stops them all).
	for _, s := range ps.SandboxStatuses {
		if err := m.deps.Sandboxes.StopPodSandbox(ctx, s.GetId()); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("stop sandbox %s: %w", s.GetId(), err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("kill pod %s/%s: %w", ps.Namespace, ps.Name, err)
	}
	return nil
}

// RemovePod removes every container and sandbox of a terminated pod and its volumes.
func (m *Manager) RemovePod(ctx context.Context, ps *container.PodStatus) error {
	var errs []error
	for _, cs := range ps.ContainerStatuses {
		if err := m.deps.Containers.RemoveContainer(ctx, cs.ID); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("remove container %s: %w", cs.ID, err))
		}
	}
	for _, s := range ps.SandboxStatuses {
		if err := m.deps.Sandboxes.StopPodSandbox(ctx, s.GetId()); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("stop sandbox %s: %w", s.GetId(), err))
			continue
		}
		if err := m.deps.Sandboxes.RemovePodSandbox(ctx, s.GetId()); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("remove sandbox %s: %w", s.GetId(), err))
		}
	}
	if err := m.deps.Volumes.TearDown(ps.ID); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		if err := m.removePodCgroups(ps.ID); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove pod %s/%s (%s): %w", ps.Namespace, ps.Name, ps.ID, err)
	}
	return nil
}

// RemovePodByUID is RemovePod for a pod known only by UID (housekeeping of orphans).
func (m *Manager) RemovePodByUID(ctx context.Context, uid types.UID) error {
	ps, err := m.GetPodStatus(ctx, uid, "", "")
	if err != nil {
		return err
	}
	if err := m.KillPod(ctx, nil, ps, nil); err != nil {
		return err
	}
	return m.RemovePod(ctx, ps)
}

func findContainer(pod *v1.Pod, name string) *v1.Container {
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}

func isSidecar(pod *v1.Pod, name string) bool {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return status.IsRestartableInitContainer(&pod.Spec.InitContainers[i])
		}
	}
	return false
}

// orderSidecarsForStop sorts sidecars in reverse spec order: the last started stops first.
func orderSidecarsForStop(pod *v1.Pod, sidecars []*container.Status) {
	idx := map[string]int{}
	for i, c := range pod.Spec.InitContainers {
		idx[c.Name] = i
	}
	for i := 1; i < len(sidecars); i++ {
		for j := i; j > 0 && idx[sidecars[j].Name] > idx[sidecars[j-1].Name]; j-- {
			sidecars[j], sidecars[j-1] = sidecars[j-1], sidecars[j]
		}
	}
}
