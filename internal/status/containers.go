package status

import (
	"fmt"
	"slices"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
)

// generator converts one runtime view; it holds the view's statuses newest first.
type generator struct {
	in      Input
	pod     *v1.Pod
	rt      *container.PodStatus
	byAge   []*container.Status // newest first, by CreatedAt
	runtime string
}

func newGenerator(in Input, rt *container.PodStatus) *generator {
	byAge := slices.Clone(rt.ContainerStatuses)
	slices.SortStableFunc(byAge, func(a, b *container.Status) int { return b.CreatedAt.Compare(a.CreatedAt) })
	name := in.RuntimeName
	if name == "" {
		name = DefaultRuntimeName
	}
	return &generator{in: in, pod: in.Pod, rt: rt, byAge: byAge, runtime: name}
}

// newest returns the newest runtime status of the named container, or nil.
func (g *generator) newest(name string) *container.Status {
	for _, cs := range g.byAge {
		if cs.Name == name {
			return cs
		}
	}
	return nil
}

// containerID is the API form of a CRI container ID, e.g. containerd://0123abcd.
func (g *generator) containerID(id string) string {
	return fmt.Sprintf("%s://%s", g.runtime, id)
}

// containerStatuses is upstream's convertToAPIContainerStatuses for one list of containers.
func (g *generator) containerStatuses(previous []v1.ContainerStatus, containers []v1.Container, hasInit, isInit bool) []v1.ContainerStatus {
	oldStatuses := make(map[string]v1.ContainerStatus, len(previous))
	for _, s := range previous {
		oldStatuses[s.Name] = s
	}
	defaultReason := ReasonContainerCreating
	if hasInit {
		defaultReason = ReasonPodInitializing
	}

	// Every container starts waiting, or keeps a terminated previous status whole.
	statuses := make(map[string]*v1.ContainerStatus, len(containers))
	for i := range containers {
		c := &containers[i]
		st := &v1.ContainerStatus{
			Name:         c.Name,
			Image:        c.Image,
			State:        v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: defaultReason}},
			VolumeMounts: g.volumeMounts(c),
		}
		if old, ok := oldStatuses[c.Name]; ok {
			if old.State.Terminated != nil {
				st = &old
			} else {
				st.RestartCount = old.RestartCount
				st.LastTerminationState = old.LastTerminationState
			}
		}
		statuses[c.Name] = st
	}

	// A container that was running and that the runtime no longer has did terminate, even if
	// how is unknown: say so, so that the pod does not fall back to Pending.
	for i := range containers {
		name := containers[i].Name
		if g.newest(name) != nil {
			continue
		}
		old, ok := oldStatuses[name]
		if !ok || old.State.Terminated != nil || old.State.Running == nil {
			continue
		}
		st := statuses[name]
		if st.State.Waiting == nil || st.State.Waiting.Reason != defaultReason || st.LastTerminationState.Terminated != nil {
			continue
		}
		st.LastTerminationState.Terminated = &v1.ContainerStateTerminated{
			Reason:   ReasonContainerStatusUnknown,
			Message:  "The container could not be located when the pod was deleted.  The container used to be Running",
			ExitCode: 137,
		}
		if g.pod.DeletionTimestamp == nil {
			st.RestartCount++
		}
	}

	// The newest instance gives the status, the one before it the last termination state.
	seen := map[string]int{}
	for _, cs := range g.byAge {
		if _, ok := statuses[cs.Name]; !ok || seen[cs.Name] >= 2 {
			continue
		}
		var oldPtr *v1.ContainerStatus
		if old, ok := oldStatuses[cs.Name]; ok {
			oldPtr = &old
		}
		st := g.convert(cs, oldPtr)
		if cs.State == container.StateRunning && oldPtr != nil && oldPtr.Started != nil {
			started := *oldPtr.Started
			st.Started = &started
		}
		if spec := g.containerSpec(cs.Name); spec != nil {
			st.Resources = containerResources(spec, cs, st.ContainerID, oldPtr)
			st.AllocatedResources = spec.Resources.Requests.DeepCopy()
		}
		if seen[cs.Name] == 0 {
			statuses[cs.Name] = st
		} else {
			statuses[cs.Name].LastTerminationState = st.State
		}
		seen[cs.Name]++
	}

	// Containers the next sync will (re)start are waiting, for the reason the last sync gave.
	for i := range containers {
		c := &containers[i]
		if isInit {
			cs := g.newest(c.Name)
			if cs != nil && cs.State == container.StateExited && cs.ExitCode == 0 {
				continue // a completed init container is not run again
			}
			// An init container the runtime lost, in a pod whose main containers exist, ran.
			if cs == nil && g.anyRegularContainerCreated() && !IsRestartableInitContainer(c) &&
				statuses[c.Name].State.Waiting != nil {
				statuses[c.Name].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
					Reason:  ReasonCompleted,
					Message: "Unable to get init container status from container runtime and pod has been initialized, treat it as exited normally",
				}}
				continue
			}
		}
		if !g.shouldContainerBeRestarted(c) {
			continue
		}
		reason, ok := g.in.Waiting[c.Name]
		if !ok {
			continue
		}
		st := statuses[c.Name]
		if st.State.Terminated != nil {
			st.LastTerminationState = st.State
		}
		st.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason.Reason, Message: reason.Message}}
	}

	out := make([]v1.ContainerStatus, 0, len(statuses))
	if isInit {
		for i := range containers { // init containers in spec order
			out = append(out, *statuses[containers[i].Name])
		}
		return out
	}
	for _, st := range statuses {
		out = append(out, *st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name }) // others by name
	return out
}

// convert is upstream's convertContainerStatus for one runtime instance.
func (g *generator) convert(cs *container.Status, old *v1.ContainerStatus) *v1.ContainerStatus {
	cid := g.containerID(cs.ID)
	st := &v1.ContainerStatus{
		Name:         cs.Name,
		RestartCount: int32(cs.RestartCount),
		Image:        cs.Image,
		ImageID:      cs.ImageRef,
		ContainerID:  cid,
	}
	if old != nil {
		st.VolumeMounts = old.VolumeMounts // immutable
		st.RestartCount = max(st.RestartCount, old.RestartCount)
		if old.ContainerID != cid && old.State.Terminated != nil {
			st.LastTerminationState.Terminated = old.State.Terminated
		} else if old.LastTerminationState.Terminated != nil {
			st.LastTerminationState.Terminated = old.LastTerminationState.Terminated
		}
	}
	switch {
	case cs.State == container.StateRunning:
		st.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(cs.StartedAt)}
		if old != nil && old.State.Terminated != nil && old.RestartCount >= int32(cs.RestartCount) {
			st.RestartCount = old.RestartCount + 1
		}
	case cs.State == container.StateCreated:
		st.State.Waiting = &v1.ContainerStateWaiting{}
	case cs.State == container.StateExited:
		reason := cs.Reason
		if reason == "" { // containerd always says; other runtimes may not
			reason = ReasonCompleted
			if cs.ExitCode != 0 {
				reason = ReasonError
			}
		}
		st.State.Terminated = &v1.ContainerStateTerminated{
			ExitCode:    int32(cs.ExitCode),
			Reason:      reason,
			Message:     cs.Message,
			StartedAt:   metav1.NewTime(cs.StartedAt),
			FinishedAt:  metav1.NewTime(cs.FinishedAt),
			ContainerID: cid,
		}
	case cs.State == container.StateUnknown && old != nil && old.State.Running != nil:
		// It was running and the runtime cannot say what became of it: it did not just
		// never run, which matters to run-once pods.
		st.State = unknownAtTermination()
		st.RestartCount = old.RestartCount + 1
	default:
		st.State.Waiting = &v1.ContainerStateWaiting{}
	}
	return st
}

// volumeMounts is the status of c's mounts, as upstream reports them from the spec.
func (g *generator) volumeMounts(c *v1.Container) []v1.VolumeMountStatus {
	var out []v1.VolumeMountStatus
	for _, m := range c.VolumeMounts {
		vs := v1.VolumeMountStatus{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly}
		if m.ReadOnly {
			mode := v1.RecursiveReadOnlyDisabled
			if recursiveReadOnly(m, g.in.SupportsRecursiveReadOnly) {
				mode = v1.RecursiveReadOnlyEnabled
			}
			vs.RecursiveReadOnly = &mode
		}
		out = append(out, vs)
	}
	return out
}

// recursiveReadOnly is upstream's resolveRecursiveReadOnly, an invalid request being false.
func recursiveReadOnly(m v1.VolumeMount, supported bool) bool {
	if m.RecursiveReadOnly == nil || !m.ReadOnly ||
		(m.MountPropagation != nil && *m.MountPropagation != v1.MountPropagationNone) {
		return false
	}
	switch *m.RecursiveReadOnly {
	case v1.RecursiveReadOnlyIfPossible, v1.RecursiveReadOnlyEnabled:
		return supported
	}
	return false
}

// containerSpec finds the named container among all of the pod's containers.
func (g *generator) containerSpec(name string) *v1.Container {
	spec := &g.pod.Spec
	for _, list := range [][]v1.Container{spec.Containers, spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	for i := range spec.EphemeralContainers {
		if spec.EphemeralContainers[i].Name == name {
			c := v1.Container(spec.EphemeralContainers[i].EphemeralContainerCommon)
			return &c
		}
	}
	return nil
}

// shouldContainerBeRestarted is upstream's ShouldContainerBeRestarted: whether the next sync
// (re)starts c.
func (g *generator) shouldContainerBeRestarted(c *v1.Container) bool {
	if g.pod.DeletionTimestamp != nil {
		return false
	}
	cs := g.newest(c.Name)
	switch {
	case cs == nil:
		return true
	case cs.State == container.StateRunning:
		return false
	case cs.State == container.StateUnknown || cs.State == container.StateCreated:
		return true
	}
	return ContainerShouldRestart(c, &g.pod.Spec, int32(cs.ExitCode))
}

// anyRegularContainerCreated is upstream's HasAnyRegularContainerCreated.
func (g *generator) anyRegularContainerCreated() bool {
	for i := range g.pod.Spec.Containers {
		if cs := g.newest(g.pod.Spec.Containers[i].Name); cs != nil && cs.State != container.StateUnknown {
			return true
		}
	}
	return false
}

// anyActiveRegularContainer is upstream's HasAnyActiveRegularContainerStarted: a main container
// exists in the current sandbox, so the pod was initialized.
func (g *generator) anyActiveRegularContainer() bool {
	active := g.rt.ActiveContainerStatuses
	if active == nil {
		active = g.activeContainers()
	}
	for _, cs := range active {
		if isMain(&g.pod.Spec, cs.Name) {
			return true
		}
	}
	return false
}

// activeContainers derives ActiveContainerStatuses when the view lacks them: the containers of
// the newest sandbox if it is ready, by SandboxID, or for containers without one, those created
// since that sandbox was.
func (g *generator) activeContainers() []*container.Status {
	if len(g.rt.SandboxStatuses) == 0 || g.rt.SandboxStatuses[0].GetState() != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil
	}
	sb := g.rt.SandboxStatuses[0]
	since := time.Unix(0, sb.GetCreatedAt())
	var out []*container.Status
	for _, cs := range g.byAge {
		if (cs.SandboxID != "" && cs.SandboxID == sb.GetId()) || (cs.SandboxID == "" && !cs.CreatedAt.Before(since)) {
			out = append(out, cs)
		}
	}
	return out
}

func isMain(spec *v1.PodSpec, name string) bool {
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return true
		}
	}
	return false
}

// applyProbeResults sets started and ready as upstream's prober manager UpdatePodStatus does.
func (g *generator) applyProbeResults(s *v1.PodStatus) {
	for i := range s.ContainerStatuses {
		st := &s.ContainerStatuses[i]
		spec := g.containerSpec(st.Name)
		started := g.started(spec, st)
		st.Started = &started
		if started {
			st.Ready = g.ready(spec, st)
		}
	}
	for i := range s.InitContainerStatuses {
		st := &s.InitContainerStatuses[i]
		spec := g.containerSpec(st.Name)
		started := g.started(spec, st)
		st.Started = &started
		if !IsRestartableInitContainer(spec) {
			if st.State.Terminated != nil && st.State.Terminated.ExitCode == 0 {
				st.Ready = true
			}
			continue
		}
		if started {
			st.Ready = g.ready(spec, st)
		}
	}
}

func (g *generator) started(spec *v1.Container, st *v1.ContainerStatus) bool {
	if st.State.Running == nil {
		return false
	}
	if v, ok := g.in.Probes.Started[st.Name]; ok {
		return v
	}
	if st.Started != nil && *st.Started {
		return true
	}
	return spec == nil || spec.StartupProbe == nil
}

func (g *generator) ready(spec *v1.Container, st *v1.ContainerStatus) bool {
	if st.State.Running == nil {
		return false
	}
	if g.in.Probes.Ready[st.Name] {
		return true
	}
	return spec == nil || spec.ReadinessProbe == nil
}
