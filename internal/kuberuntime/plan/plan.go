package plan

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/prober/probeview"
)

// Plan is what the runtime manager must do to move a pod's actual state toward its spec. It is
// upstream's podActions without the resize, volume and RestartAllContainers fields (see doc.go).
//
// A Plan never decides on back-off: a container listed to start may still be in CrashLoopBackOff,
// and the caller checks its back-off (upstream's doBackOff) at the moment it would start it.
type Plan struct {
	// KillPod: kill every container (regular, init and ephemeral) and the sandbox. With
	// CreateSandbox the pod is then recreated from scratch; without it the pod is done.
	KillPod bool
	// CreateSandbox: create a new sandbox (after KillPod) and purge the old init containers.
	CreateSandbox bool
	// SandboxID is the sandbox to start containers in when not creating one. When creating one it
	// is the sandbox being replaced (empty for a new pod and, as upstream, when the network
	// namespace mode changed); upstream uses it only to choose the SandboxChanged event.
	SandboxID string
	// Attempt is the sandbox attempt number: the newest sandbox's metadata attempt, plus one when
	// recreating it, and 0 for a new pod.
	Attempt uint32

	// InitContainersToStart are indexes into pod.Spec.InitContainers to start now, in spec order:
	// at most one regular init container (the next one, or the failed one again), plus the
	// restartable init containers (sidecars) that must be (re)started.
	InitContainersToStart []int
	// ContainersToStart are indexes into pod.Spec.Containers to start now, in spec order.
	ContainersToStart []int
	// EphemeralContainersToStart are indexes into pod.Spec.EphemeralContainers never started yet.
	EphemeralContainersToStart []int
	// ContainersToKill are the containers to kill before starting anything, by CRI container ID.
	// It is empty when KillPod is set: killing the pod kills them anyway (upstream fills it and
	// then ignores it).
	ContainersToKill map[string]KillInfo
	// ContainersToUpdate are the running containers whose cpu or memory changes in place, by
	// resource, decreases first (in-place resize). Empty when KillPod is set.
	ContainersToUpdate map[v1.ResourceName][]ContainerUpdate
}

// KillInfo says why a container is killed; the runtime manager turns it into a Killing event
// (Message) and a grace period (Reason: probe-specific terminationGracePeriodSeconds).
type KillInfo struct {
	Name      string        // the container's name in the spec
	Container *v1.Container // the spec container, pointing into Input.Pod
	Reason    string        // one of the Reason constants
	Message   string        // upstream's message, e.g. "Container app failed liveness probe, will be restarted"
}

// Kill reasons. The first three are upstream's containerKillReason values; they select a probe's
// terminationGracePeriodSeconds when set.
const (
	ReasonStartupProbe  = "StartupProbe"
	ReasonLivenessProbe = "LivenessProbe"
	ReasonUnknown       = "Unknown"
	// ReasonDefinitionChanged is nodelet's: upstream leaves the reason empty for a changed spec.
	ReasonDefinitionChanged = "ContainerDefinitionChanged"
	// ReasonResize is nodelet's for a resize whose resizePolicy is RestartContainer.
	ReasonResize = "ResizeRequiresRestart"
)

// Input is a pod's spec, its runtime view, and what the prober knows. Probe maps are keyed by
// container name and may be nil; they must describe the container's current instance (the one
// Status.FindContainerStatusByName returns): the caller drops a result when its container ID is
// no longer the newest, as upstream's probe results are keyed by container ID.
type Input struct {
	Pod    *v1.Pod
	Status *container.PodStatus
	// ActiveContainerStatuses are the statuses of the containers in the pod's current sandbox
	// (the newest one, if ready), newest first: upstream's PodStatus.ActiveContainerStatuses.
	// Init container progress is read from them only, so that a main container left from an
	// older sandbox does not count as "initialized". nil means: take every status in
	// Status.ContainerStatuses as active (wrong only while such leftovers exist); an empty
	// non-nil slice means the current sandbox has no containers.
	ActiveContainerStatuses []*container.Status

	// Probes are the prober's results (probeview.View): LivenessFailed kills a container,
	// StartupFailed kills it too, and a sidecar with a startupProbe gates the next init
	// container until Started says it started. A name in neither startup map has a probe
	// still in progress.
	Probes probeview.View

	// Actuated are the resources the runtime was told for each container (the allocation
	// package's actuated record): a running container whose allocated cpu or memory differs is
	// resized in place or restarted. nil: no resize.
	Actuated map[string]v1.ResourceRequirements
}

// ComputePodActions is upstream's computePodActions (kuberuntime_manager.go, v1.37, with the
// default feature gates) as a pure function. It does not apply back-off (see Plan).
func ComputePodActions(in Input) Plan {
	pod, status := in.Pod, in.Status
	if pod == nil {
		return Plan{}
	}
	if status == nil {
		status = &container.PodStatus{}
	}
	sc := SandboxChanged(pod, status)
	p := Plan{
		KillPod:          sc.Changed,
		CreateSandbox:    sc.Changed,
		SandboxID:        sc.SandboxID,
		Attempt:          sc.Attempt,
		ContainersToKill: map[string]KillInfo{},
	}

	// (Re)creating the sandbox: everything is killed and started again from the beginning.
	if sc.Changed {
		if !shouldRestartOnFailure(pod) && sc.Attempt != 0 && len(status.ContainerStatuses) != 0 {
			// The pod already ran and will not be restarted: do not create a sandbox only to
			// tear it down. With no container statuses no container was ever created: retry.
			p.CreateSandbox = false
			return p.finish()
		}
		var toStart []int
		for i := range pod.Spec.Containers {
			c := &pod.Spec.Containers[i]
			runOnce := pod.Spec.RestartPolicy == v1.RestartPolicyOnFailure
			if c.RestartPolicy != nil {
				runOnce = *c.RestartPolicy == v1.ContainerRestartPolicyOnFailure
			}
			if runOnce && containerSucceeded(c, status) {
				continue
			}
			toStart = append(toStart, i)
		}
		// Initialization done and nothing to start: no new sandbox, just kill the pod.
		if len(toStart) == 0 && hasAnyRegularContainerCreated(pod, status) {
			p.CreateSandbox = false
			return p.finish()
		}
		if len(pod.Spec.InitContainers) != 0 {
			p.InitContainersToStart = []int{0}
			return p.finish()
		}
		p.ContainersToStart = toStart
		return p.finish()
	}

	// Ephemeral containers may start before initialization completes; they never restart.
	for i := range pod.Spec.EphemeralContainers {
		if status.FindContainerStatusByName(pod.Spec.EphemeralContainers[i].Name) == nil {
			p.EphemeralContainersToStart = append(p.EphemeralContainersToStart, i)
		}
	}

	initialized := computeInitContainerActions(in, status, &p)
	if p.KillPod || !initialized {
		return p.finish()
	}

	keepCount := 0 // running main containers to keep
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cs := status.FindContainerStatusByName(c.Name)
		if cs == nil || cs.State != container.StateRunning {
			if shouldContainerBeRestarted(c, pod, status) {
				p.ContainersToStart = append(p.ContainersToStart, i)
				if cs != nil && cs.State == container.StateUnknown {
					// It may still run: kill it first so that two instances never run at once.
					p.ContainersToKill[cs.ID] = KillInfo{Name: cs.Name, Container: c, Reason: ReasonUnknown,
						Message: fmt.Sprintf("Container is in %q state, try killing it before restart", cs.State)}
				}
			}
			continue
		}

		// Running: kill it if its spec changed or a probe failed.
		restart := shouldRestartOnFailure(pod)
		if c.RestartPolicy != nil {
			// Probe failures use the container-level policy only: there is no exit code.
			restart = *c.RestartPolicy != v1.ContainerRestartPolicyNever
		}
		var message, reason string
		switch {
		case container.HashContainer(c) != cs.Hash:
			message = fmt.Sprintf("Container %s definition changed", c.Name)
			reason = ReasonDefinitionChanged
			restart = true // whatever the policy: the spec changed
		case in.Probes.LivenessFailed[c.Name]:
			message = fmt.Sprintf("Container %s failed liveness probe", c.Name)
			reason = ReasonLivenessProbe
		case in.Probes.StartupFailed[c.Name]:
			message = fmt.Sprintf("Container %s failed startup probe", c.Name)
			reason = ReasonStartupProbe
		default:
			if resizeAction(in, c, cs, &p) {
				keepCount++
				continue
			}
			p.ContainersToStart = append(p.ContainersToStart, i) // resize requires a restart
			continue
		}
		if restart {
			message += ", will be restarted"
			p.ContainersToStart = append(p.ContainersToStart, i)
		}
		p.ContainersToKill[cs.ID] = KillInfo{Name: cs.Name, Container: c, Reason: reason, Message: message}
	}

	if keepCount == 0 && len(p.ContainersToStart) == 0 {
		// Every main container is done: tear the pod down, and do not let sidecars keep it alive.
		p.KillPod = true
		p.InitContainersToStart = nil
	}
	return p.finish()
}

// finish normalises a plan: no kill list under KillPod, nil rather than empty collections.
func (p Plan) finish() Plan {
	if p.KillPod || len(p.ContainersToKill) == 0 {
		p.ContainersToKill = nil
	}
	if p.KillPod || len(p.ContainersToUpdate) == 0 {
		p.ContainersToUpdate = nil
	}
	if len(p.InitContainersToStart) == 0 {
		p.InitContainersToStart = nil
	}
	if len(p.ContainersToStart) == 0 {
		p.ContainersToStart = nil
	}
	if len(p.EphemeralContainersToStart) == 0 {
		p.EphemeralContainersToStart = nil
	}
	return p
}

// IsEmpty reports whether the plan asks for nothing.
func (p Plan) IsEmpty() bool {
	return !p.KillPod && !p.CreateSandbox && len(p.InitContainersToStart) == 0 &&
		len(p.ContainersToStart) == 0 && len(p.EphemeralContainersToStart) == 0 && len(p.ContainersToKill) == 0 &&
		len(p.ContainersToUpdate) == 0
}

// String renders a plan for logs, as upstream's podActions.String.
func (p Plan) String() string {
	kills := make(map[string]string, len(p.ContainersToKill))
	for id, k := range p.ContainersToKill {
		kills[id] = k.Name
	}
	return fmt.Sprintf("KillPod: %t, CreateSandbox: %t, SandboxID: %q, Attempt: %d, InitContainersToStart: %v, ContainersToStart: %v, EphemeralContainersToStart: %v, ContainersToKill: %v",
		p.KillPod, p.CreateSandbox, p.SandboxID, p.Attempt, p.InitContainersToStart, p.ContainersToStart, p.EphemeralContainersToStart, kills)
}
