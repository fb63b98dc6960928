package kuberuntime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/kuberuntime/plan"
	"github.com/nodelet/nodelet/internal/status"
)

// minGracePeriod is upstream's minimumGracePeriodInSeconds.
const minGracePeriod = 2

// GracePeriod is the seconds a container gets between SIGTERM and SIGKILL: the override, else
// a probe's terminationGracePeriodSeconds when a liveness or startup failure kills it, else the
// pod's deletionGracePeriodSeconds or terminationGracePeriodSeconds; at least 2 s, as upstream.
func GracePeriod(pod *v1.Pod, c *v1.Container, reason string, override *int64) int64 {
	return max(requestedGracePeriod(pod, c, reason, override), minGracePeriod)
}

// requestedGracePeriod is GracePeriod before the 2 s minimum: upstream runs a preStop hook only
// when it is positive, and bounds the hook by it.
func requestedGracePeriod(pod *v1.Pod, c *v1.Container, reason string, override *int64) int64 {
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
	return g
}

// killContainer stops one container with its grace period and records the Killing event. A
// preStop hook (from the pod spec, else from the container's annotation, as for an orphan) runs
// first, bounded by the grace period, and the whole seconds it took come out of the grace
// period StopContainer gets, which stays at least 2 s (upstream's killContainer). pod is nil
// for an orphan: it gets the minimum grace period unless override is longer, and no events.
// The container is running (SyncPod kills running containers only).
func (m *Manager) killContainer(ctx context.Context, pod *v1.Pod, id, name, reason, message string, override *int64) error {
	requested, took := m.beginKill(ctx, pod, id, name, reason, message, override, true)
	return m.stopContainer(ctx, pod, id, name, requested-took)
}

// beginKill is the first half of killContainer: the Killing event and, if the container is
// running, its preStop hook (upstream kills running containers only; nodelet also stops created
// and unknown ones, where a hook cannot run). It returns the grace period asked for (before the
// 2 s minimum) and the seconds the hook took.
func (m *Manager) beginKill(ctx context.Context, pod *v1.Pod, id, name, reason, message string, override *int64, running bool) (requested, took int64) {
	var spec *v1.Container
	if pod != nil {
		spec = findContainer(pod, name)
	}
	requested = minGracePeriod
	if pod != nil {
		requested = requestedGracePeriod(pod, spec, reason, override)
		if message == "" {
			message = "Stopping container " + name
		}
		m.deps.Recorder.Eventf(pod, v1.EventTypeNormal, "Killing", "%s", message)
	} else if override != nil && *override > requested {
		requested = *override
	}
	if !running || requested <= 0 || m.deps.Hooks == nil { // upstream skips the hook without a grace period
		return requested, 0
	}
	if hookPod, hookCtr, h := m.preStopHook(ctx, pod, spec, id, name); h != nil {
		took = m.runPreStop(ctx, hookPod, hookCtr, id, h, requested, pod != nil)
	}
	return requested, took
}

// stopContainer is the second half of killContainer: StopContainer with grace, at least 2 s.
func (m *Manager) stopContainer(ctx context.Context, pod *v1.Pod, id, name string, grace int64) error {
	grace = max(grace, minGracePeriod)
	klog.V(2).InfoS("Killing container", "pod", klog.KObj(pod), "container", name, "containerID", id, "gracePeriod", grace)
	if err := m.deps.Containers.StopContainer(ctx, id, grace); err != nil && !isNotFound(err) {
		return fmt.Errorf("stop container %s (%s): %w", name, id, err)
	}
	return nil
}

// preStopHook returns the container's preStop handler and the pod and container to run it
// with: the spec's when the pod spec has the container, else (an orphan, or a container the
// spec no longer has) the handler the container was created with, from its annotation, with
// the container's ports and, for an orphan, a pod restored from its labels, as upstream's
// restoreSpecsFromContainerLabels. nil when there is none.
func (m *Manager) preStopHook(ctx context.Context, pod *v1.Pod, spec *v1.Container, id, name string) (*v1.Pod, *v1.Container, *v1.LifecycleHandler) {
	if spec != nil {
		if spec.Lifecycle == nil || spec.Lifecycle.PreStop == nil {
			return nil, nil, nil
		}
		return pod, spec, spec.Lifecycle.PreStop
	}
	resp, err := m.deps.Reader.ContainerStatus(ctx, id, false)
	if err != nil {
		if !isNotFound(err) {
			klog.ErrorS(err, "Cannot read the container's preStop hook; stopping it without", "pod", klog.KObj(pod), "container", name, "containerID", id)
		}
		return nil, nil, nil
	}
	st := resp.GetStatus()
	raw, ok := st.GetAnnotations()[container.ContainerPreStopHandlerAnnotation]
	if !ok {
		return nil, nil, nil
	}
	h := &v1.LifecycleHandler{}
	if err := json.Unmarshal([]byte(raw), h); err != nil {
		klog.ErrorS(err, "Invalid preStop hook annotation; stopping the container without", "pod", klog.KObj(pod), "container", name, "containerID", id)
		return nil, nil, nil
	}
	c := &v1.Container{Name: name, Lifecycle: &v1.Lifecycle{PreStop: h}}
	if ports, ok := st.GetAnnotations()[container.ContainerPortsAnnotation]; ok {
		_ = json.Unmarshal([]byte(ports), &c.Ports) // only named httpGet ports need them
	}
	if pod == nil {
		l := st.GetLabels()
		pod = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: l[container.PodNameLabel], Namespace: l[container.PodNamespaceLabel],
			UID: types.UID(l[container.PodUIDLabel])}}
	}
	return pod, c, h
}

// runPreStop is upstream's executePreStopHook: it runs the hook for at most grace seconds (on
// the clock; the context's deadline also bounds the runtime's exec) and returns the whole
// seconds it waited. A failure is logged and, when record, is a FailedPreStopHook event without
// the message (it may hold secrets, as upstream); termination goes on either way. A hook still
// running when the grace period ends is cancelled.
func (m *Manager) runPreStop(ctx context.Context, pod *v1.Pod, c *v1.Container, id string, h *v1.LifecycleHandler, grace int64, record bool) int64 {
	klog.V(3).InfoS("Running preStop hook", "pod", klog.KObj(pod), "podUID", pod.UID, "container", c.Name, "containerID", id)
	start := m.deps.Clock.Now()
	bound := time.Duration(grace) * time.Second
	hookCtx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		msg, err := m.deps.Hooks.Run(hookCtx, pod, c, id, h, m.hookPodIP(hookCtx, pod, h))
		if err == nil {
			return
		}
		klog.ErrorS(err, "PreStop hook failed", "pod", klog.KObj(pod), "podUID", pod.UID, "container", c.Name,
			"containerID", id, "message", msg)
		if record {
			m.deps.Recorder.Eventf(pod, v1.EventTypeWarning, "FailedPreStopHook", "PreStopHook failed")
		}
	}()
	timer := m.deps.Clock.NewTimer(bound)
	defer timer.Stop()
	select {
	case <-done:
		klog.V(3).InfoS("PreStop hook completed", "pod", klog.KObj(pod), "podUID", pod.UID, "container", c.Name, "containerID", id)
	case <-timer.C():
		klog.V(2).InfoS("PreStop hook not completed in grace period", "pod", klog.KObj(pod), "podUID", pod.UID,
			"container", c.Name, "containerID", id, "gracePeriod", grace)
	}
	return int64(m.deps.Clock.Since(start).Seconds())
}

// hookPodIP is the host of an httpGet hook that names none: the pod's IP as the runtime reports
// it now (upstream reads the pod status too); "" when it has none (a host-network pod, as
// upstream), which fails the hook.
func (m *Manager) hookPodIP(ctx context.Context, pod *v1.Pod, h *v1.LifecycleHandler) string {
	if h.HTTPGet == nil || h.HTTPGet.Host != "" {
		return ""
	}
	ps, err := m.GetPodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil || len(ps.IPs) == 0 {
		return ""
	}
	return ps.IPs[0]
}

// KillPod stops a pod's running containers, then its sandboxes: every container's preStop hook
// at once, regular containers in parallel, then sidecars one by one in reverse order, as
// upstream. pod may be nil for a pod no source knows (an orphan found in the runtime): it then
// gets the minimum grace period unless override says otherwise, and its containers' preStop
// hooks come from their annotations.
func (m *Manager) KillPod(ctx context.Context, pod *v1.Pod, ps *container.PodStatus, override *int64) error {
	var mains, sidecars []*container.Status
	for _, cs := range ps.ContainerStatuses {
		if !mayRun(cs) {
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
	// Every container's termination begins now, the sidecars' too: a sidecar gets its Killing
	// event and runs its preStop hook at once, and only its stop waits for its turn (upstream
	// runs executePreStopHook before waitForTurn).
	if pod != nil {
		orderSidecarsForStop(pod, sidecars)
	}
	requested := make([]int64, len(sidecars))
	begun := make([]chan struct{}, len(sidecars))
	for i, cs := range sidecars {
		begun[i] = make(chan struct{})
		go func() {
			defer close(begun[i])
			requested[i], _ = m.beginKill(ctx, pod, cs.ID, cs.Name, "", "", override, cs.State == container.StateRunning)
		}()
	}
	for _, cs := range mains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			grace, took := m.beginKill(ctx, pod, cs.ID, cs.Name, "", "", override, cs.State == container.StateRunning)
			if err := m.stopContainer(ctx, pod, cs.ID, cs.Name, grace-took); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for i, cs := range sidecars {
		<-begun[i]
		// One grace period for the whole pod: a sidecar gets what its hook and the containers
		// before it left, at least the 2 s minimum, as upstream.
		left := requested[i] - int64(m.deps.Clock.Since(start).Seconds())
		if err := m.stopContainer(ctx, pod, cs.ID, cs.Name, left); err != nil {
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

// RemovePod removes every container and sandbox of a terminated pod, its volumes, and once
// they are gone its cgroups and its log directory.
func (m *Manager) RemovePod(ctx context.Context, ps *container.PodStatus) error {
	var errs []error
	for _, cs := range ps.ContainerStatuses {
		if err := m.removeContainer(ctx, cs.ID); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("remove container %s: %w", cs.ID, err))
		}
	}
	for _, s := range ps.SandboxStatuses {
		if err := m.removeSandbox(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	if err := m.deps.Volumes.TearDown(ps.ID); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		if err := m.removePodCgroups(ps.ID); err != nil {
			errs = append(errs, err)
		}
		if err := m.removePodLogDirs(ps.ID); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove pod %s/%s (%s): %w", ps.Namespace, ps.Name, ps.ID, err)
	}
	return nil
}

// removeSandbox stops a sandbox and removes it. A sandbox that is not ready is not stopped
// first: each StopPodSandbox runs the network plugin's DEL once more (containerd does, ~0.1 s of
// plugin execs here), and containerd 2's RemovePodSandbox stops what is left itself. A runtime
// that refuses to remove it (containerd 1.x while its network namespace is open, a pause process
// that died without a stop) gets the stop and the removal again, as upstream's garbage collector
// stops every sandbox before removing it.
func (m *Manager) removeSandbox(ctx context.Context, s *runtimeapi.PodSandboxStatus) error {
	if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		err := m.deps.Sandboxes.RemovePodSandbox(ctx, s.GetId())
		if err == nil || isNotFound(err) {
			return nil
		}
		klog.V(2).InfoS("The runtime did not remove a stopped sandbox; stopping it again first", "sandboxID", s.GetId(), "err", err)
	}
	if err := m.deps.Sandboxes.StopPodSandbox(ctx, s.GetId()); err != nil && !isNotFound(err) {
		return fmt.Errorf("stop sandbox %s: %w", s.GetId(), err)
	}
	if err := m.deps.Sandboxes.RemovePodSandbox(ctx, s.GetId()); err != nil && !isNotFound(err) {
		return fmt.Errorf("remove sandbox %s: %w", s.GetId(), err)
	}
	return nil
}

// RemovePodByUID is RemovePod for a pod known only by UID: a pod whose worker finished, or an
// orphan found by housekeeping. It kills the pod first only when something of it still runs (an
// orphan); a pod its worker stopped is removed without stopping anything again.
func (m *Manager) RemovePodByUID(ctx context.Context, uid types.UID) error {
	ps, err := m.GetPodStatus(ctx, uid, "", "")
	if err != nil {
		return err
	}
	if stillRunning(ps) {
		if err := m.KillPod(ctx, nil, ps, nil); err != nil {
			return err
		}
	}
	// Nothing of the pod runs now, as far as the runtime knows; what is left in its cgroup was
	// lost by the runtime (see killPodProcesses). The removal below may fail until the runtime
	// has seen the process exit; housekeeping retries it.
	m.killLeftovers(uid, "a stopped pod")
	return m.RemovePod(ctx, ps)
}

// mayRun reports whether the container may run: running, created (it may start) or unknown.
func mayRun(cs *container.Status) bool {
	return cs.State == container.StateRunning || cs.State == container.StateCreated || cs.State == container.StateUnknown
}

// stillRunning reports whether a container of the pod may run (running, created or unknown, as
// KillPod stops them) or one of its sandboxes is ready.
func stillRunning(ps *container.PodStatus) bool {
	if slices.ContainsFunc(ps.ContainerStatuses, mayRun) {
		return true
	}
	for _, s := range ps.SandboxStatuses {
		if s.GetState() != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
			return true
		}
	}
	return false
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
