package plan

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/nodelet/nodelet/internal/container"
)

// computeInitContainerActions is upstream's computeInitContainerActions (kuberuntime_container.go)
// without resize. It adds to p the init containers to (re)start and the sidecars to kill, sets
// p.KillPod when a regular init container failed for good, and reports whether the pod is
// initialized (every regular init container succeeded, every sidecar started), so that main
// containers may run.
//
// Completed init containers may have been removed from the runtime, so the init containers are
// walked backwards: the last one that has a status in the current sandbox says how far
// initialization got; every earlier regular one is then done, and every earlier sidecar must be
// kept running.
func computeInitContainerActions(in Input, status *container.PodStatus, p *Plan) bool {
	pod := in.Pod
	inits := pod.Spec.InitContainers
	if len(inits) == 0 {
		return true
	}
	active := in.ActiveContainerStatuses
	if active == nil {
		active = status.ContainerStatuses
	}

	// A main container in the current sandbox means initialization completed there.
	initialized := hasAnyActiveRegularContainer(pod, active)
	// previouslyInitialized: every init container before the current one has completed.
	previouslyInitialized := initialized
	restartOnFailure := shouldRestartOnFailure(pod)

	kill := func(cs *container.Status, c *v1.Container, reason, message string) {
		p.ContainersToKill[cs.ID] = KillInfo{Name: c.Name, Container: c, Reason: reason, Message: message}
	}

	for i := len(inits) - 1; i >= 0; i-- {
		c := &inits[i]
		sidecar := isRestartableInitContainer(c)
		cs := findByName(active, c.Name)
		if cs == nil {
			// Completed before but gone (removed): a sidecar must run again.
			if previouslyInitialized && sidecar {
				p.InitContainersToStart = append(p.InitContainersToStart, i)
			}
			continue
		}
		if previouslyInitialized && !sidecar {
			continue // after initialization only sidecars are kept running
		}

		switch cs.State {
		case container.StateCreated:
			// Created but never started (the runtime failed to start it): start it again.
			p.InitContainersToStart = append(p.InitContainersToStart, i)

		case container.StateRunning:
			if !sidecar {
				break // a regular init container is still working: wait
			}
			if c.StartupProbe != nil && !in.Probes.Started[c.Name] {
				if in.Probes.StartupFailed[c.Name] {
					kill(cs, c, ReasonStartupProbe, fmt.Sprintf("Init container %s failed startup probe", c.Name))
					p.InitContainersToStart = append(p.InitContainersToStart, i)
				}
				break // not started yet: the next init container waits
			}
			// This sidecar has started.
			if i == len(inits)-1 {
				initialized = true
			} else if !previouslyInitialized {
				p.InitContainersToStart = append(p.InitContainersToStart, i+1)
			}
			if container.HashContainer(c) != cs.Hash {
				kill(cs, c, ReasonDefinitionChanged, fmt.Sprintf("Init container %s definition changed", c.Name))
				p.InitContainersToStart = append(p.InitContainersToStart, i)
				break
			}
			// Liveness does not gate the next init container; a failure restarts the sidecar.
			if c.LivenessProbe != nil && in.Probes.LivenessFailed[c.Name] {
				kill(cs, c, ReasonLivenessProbe, fmt.Sprintf("Init container %s failed liveness probe", c.Name))
				p.InitContainersToStart = append(p.InitContainersToStart, i)
				break
			}
			if !resizeAction(in, c, cs, p) { // a sidecar resizes as a regular container
				p.InitContainersToStart = append(p.InitContainersToStart, i)
			}

		case container.StateExited:
			if sidecar {
				p.InitContainersToStart = append(p.InitContainersToStart, i)
				break
			}
			if isInitContainerFailed(cs) {
				if !shouldContainerBeRestarted(c, pod, status) {
					p.KillPod = true // the pod failed
					p.InitContainersToStart = nil
					return false
				}
				p.InitContainersToStart = append(p.InitContainersToStart, i)
				break
			}
			// Succeeded: start the next one, or initialization is complete.
			if i == len(inits)-1 {
				initialized = true
			} else {
				p.InitContainersToStart = append(p.InitContainersToStart, i+1)
			}

		default: // unknown: it may still be running
			msg := fmt.Sprintf("Init container is in %q state, try killing it before restart", cs.State)
			if sidecar {
				kill(cs, c, ReasonUnknown, msg)
				p.InitContainersToStart = append(p.InitContainersToStart, i)
				break
			}
			restart := restartOnFailure
			if c.RestartPolicy != nil {
				restart = *c.RestartPolicy != v1.ContainerRestartPolicyNever
			}
			if !restart {
				p.KillPod = true
				p.InitContainersToStart = nil
				return false
			}
			kill(cs, c, ReasonUnknown, msg)
			p.InitContainersToStart = append(p.InitContainersToStart, i)
		}

		previouslyInitialized = true
	}

	if !previouslyInitialized {
		// No init container has a status in this sandbox: start the first one.
		p.InitContainersToStart = append(p.InitContainersToStart, 0)
	}
	slices.Reverse(p.InitContainersToStart) // collected backwards; start in spec order
	return initialized
}

// hasAnyActiveRegularContainer is upstream's HasAnyActiveRegularContainerStarted.
func hasAnyActiveRegularContainer(pod *v1.Pod, active []*container.Status) bool {
	for _, cs := range active {
		for i := range pod.Spec.Containers {
			if pod.Spec.Containers[i].Name == cs.Name {
				return true
			}
		}
	}
	return false
}

// findByName returns the first (newest) status with the name, as FindActiveContainerStatusByName.
func findByName(statuses []*container.Status, name string) *container.Status {
	for _, cs := range statuses {
		if cs.Name == name {
			return cs
		}
	}
	return nil
}
