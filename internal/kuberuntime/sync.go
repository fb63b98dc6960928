package kuberuntime

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/kuberuntime/plan"
	"github.com/nodelet/nodelet/internal/prober/probeview"
	"github.com/nodelet/nodelet/internal/status"
)

// SyncResult says what a sync could not do: the waiting reason of each container it could not
// start (for the status), and the error that makes the worker retry with back-off.
type SyncResult struct {
	Waiting map[string]status.WaitingReason
	Err     error
	// ResizeErr is why an in-place resize failed (PodResizeInProgress reason Error); empty
	// when none failed.
	ResizeErr string
	// Resized: containers were updated in place; the runtime's view before the sync no longer
	// shows their resources.
	Resized bool
}

// SyncPod moves the pod toward its spec: it computes the plan and applies it. probes are the
// prober's results for the pod's current container instances.
func (m *Manager) SyncPod(ctx context.Context, pod *v1.Pod, ps *container.PodStatus, probes probeview.View) SyncResult {
	active := ps.ActiveContainerStatuses
	if active == nil {
		active = []*container.Status{}
	}
	p := plan.ComputePodActions(plan.Input{Pod: pod, Status: ps, ActiveContainerStatuses: active,
		Probes: probes, Actuated: m.actuated(pod.UID)})
	if !p.IsEmpty() {
		klog.V(3).InfoS("Pod actions", "pod", klog.KObj(pod), "plan", p.String())
	}
	res := SyncResult{Waiting: map[string]status.WaitingReason{}}

	if p.KillPod {
		if p.CreateSandbox && p.SandboxID != "" {
			m.deps.Recorder.Eventf(pod, v1.EventTypeNormal, "SandboxChanged", "Pod sandbox changed, it will be killed and re-created.")
		}
		if err := m.KillPod(ctx, pod, ps, nil); err != nil {
			res.Err = err
			return res
		}
		if !p.CreateSandbox {
			return res
		}
		m.purgeInitContainers(ctx, pod, ps)
	} else {
		for id, k := range p.ContainersToKill {
			if err := m.killContainer(ctx, pod, id, k.Name, k.Reason, k.Message, nil); err != nil {
				res.Err = errors.Join(res.Err, err)
			}
		}
		if res.Err != nil {
			return res
		}
	}

	volumePaths, err := m.deps.Volumes.SetUp(pod)
	if err != nil {
		m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, "FailedMount", "Unable to set up volumes: %v", err)
		res.Err = fmt.Errorf("set up volumes of pod %s: %w", klog.KObj(pod), err)
		return res
	}
	pc := &podContext{pod: pod, status: ps, sandboxID: p.SandboxID, podIPs: ps.IPs, volumePaths: volumePaths}
	if p.CreateSandbox {
		pc.sandboxID, pc.sandboxCfg, pc.podIPs, err = m.createSandbox(ctx, pod, p.Attempt)
		if err != nil {
			res.Err = err
			return res
		}
	} else if len(p.EphemeralContainersToStart)+len(p.InitContainersToStart)+len(p.ContainersToStart) > 0 {
		if pc.sandboxCfg, err = m.sandboxConfig(pod, p.Attempt); err != nil {
			res.Err = err
			return res
		}
	}

	// As upstream, ephemeral containers start before init containers, so that one can debug a
	// pod whose init container fails; they never restart (the plan starts them only once).
	for _, i := range p.EphemeralContainersToStart {
		spec := ephemeral(&pod.Spec.EphemeralContainers[i])
		if err := m.startContainer(ctx, pc, spec); err != nil {
			m.noteStartError(pod, spec.c, err, &res)
		}
	}
	for _, i := range p.InitContainersToStart {
		c := &pod.Spec.InitContainers[i]
		if err := m.startContainer(ctx, pc, regular(c)); err != nil {
			m.noteStartError(pod, c, err, &res)
			if !status.IsRestartableInitContainer(c) {
				return res // a regular init container blocks everything after it
			}
		}
	}
	for _, i := range p.ContainersToStart {
		c := &pod.Spec.Containers[i]
		if err := m.startContainer(ctx, pc, regular(c)); err != nil {
			m.noteStartError(pod, c, err, &res)
		}
	}
	if len(p.ContainersToUpdate) > 0 {
		res.Resized = true
		if err := m.resizeContainers(ctx, pod, p.ContainersToUpdate); err != nil {
			klog.ErrorS(err, "In-place resize failed; nodelet retries it with back-off", "pod", klog.KObj(pod))
			res.ResizeErr = err.Error()
			addErr(&res, err)
		}
	}
	m.pruneDeadContainers(ctx, pod, ps)
	return res
}

func (m *Manager) noteStartError(pod *v1.Pod, c *v1.Container, err error, res *SyncResult) {
	var ce *ContainerError
	if errors.As(err, &ce) {
		res.Waiting[c.Name] = status.WaitingReason{Reason: ce.Reason, Message: ce.Message}
		if ce.Reason == ReasonCrashLoopBackOff || ce.Reason == ReasonImagePullBackOff {
			// Waiting out a back-off is not a failure of the sync: the worker requeues.
			klog.V(3).InfoS("Container waiting", "pod", klog.KObj(pod), "container", c.Name, "reason", ce.Reason, "message", ce.Message)
			addErr(res, err)
			return
		}
	}
	klog.ErrorS(err, "Failed to start container; nodelet retries with back-off", "pod", klog.KObj(pod), "container", c.Name)
	addErr(res, fmt.Errorf("start container %q of pod %s: %w", c.Name, klog.KObj(pod), err))
}

// purgeInitContainers removes the exited init containers of an old sandbox, as upstream does
// when it recreates the sandbox, so init containers run again in the new one.
func (m *Manager) purgeInitContainers(ctx context.Context, pod *v1.Pod, ps *container.PodStatus) {
	for _, cs := range ps.ContainerStatuses {
		if cs.State != container.StateExited || !isInit(pod, cs.Name) {
			continue
		}
		if err := m.removeContainer(ctx, cs.ID); err != nil && !isNotFound(err) {
			klog.ErrorS(err, "Failed to remove old init container", "pod", klog.KObj(pod), "container", cs.Name, "containerID", cs.ID)
		}
	}
}

// pruneDeadContainers removes, as the container GC would, the exited instances of each container
// name beyond the newest maximum-dead-containers-per-container + 1 (the newest may be the one
// that just exited; the last dead one serves `logs --previous` and lastState) that are older
// than minimum-container-ttl-duration. A negative maximum leaves them all to the container GC.
func (m *Manager) pruneDeadContainers(ctx context.Context, pod *v1.Pod, ps *container.PodStatus) {
	policy := m.cfg.DeadContainers
	if policy.MaxPerPodContainer < 0 {
		return
	}
	newest := m.deps.Clock.Now().Add(-policy.MinAge)
	seen := map[string]int{}
	for _, cs := range ps.ContainerStatuses { // newest first
		seen[cs.Name]++
		if seen[cs.Name] <= policy.MaxPerPodContainer+1 || cs.State != container.StateExited || newest.Before(cs.CreatedAt) {
			continue
		}
		if err := m.removeContainer(ctx, cs.ID); err != nil && !isNotFound(err) {
			klog.ErrorS(err, "Failed to remove dead container", "pod", klog.KObj(pod), "container", cs.Name, "containerID", cs.ID)
		}
	}
}

func isInit(pod *v1.Pod, name string) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}
