package status

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/nodelet/nodelet/internal/podconfig"
)

// phase is upstream's getPhase with ContainerRestartRules on (its 1.37 default). info holds the
// main and init container statuses; initialized says a main container exists in the current
// sandbox.
func phase(pod *v1.Pod, info []v1.ContainerStatus, podIsTerminal, initialized bool) v1.PodPhase {
	spec := &pod.Spec
	pendingRestartableInit, pendingRegularInit, failedInitNotRestartable := 0, 0, 0

	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if IsRestartableInitContainer(c) {
			continue
		}
		st, ok := findStatus(info, c.Name)
		switch {
		case !ok:
			pendingRegularInit++
		case st.State.Running != nil:
			pendingRegularInit++
		case st.State.Terminated != nil:
			if code := st.State.Terminated.ExitCode; code != 0 && !ContainerShouldRestart(c, spec, code) {
				failedInitNotRestartable++
			}
		case st.State.Waiting != nil:
			if t := st.LastTerminationState.Terminated; t != nil {
				if t.ExitCode != 0 && !ContainerShouldRestart(c, spec, t.ExitCode) {
					failedInitNotRestartable++
				}
			} else {
				pendingRegularInit++
			}
		default:
			pendingRegularInit++
		}
	}

	unknown, running, waiting, stopped, stoppedNotRestartable, succeeded := 0, 0, 0, 0, 0, 0
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if !IsRestartableInitContainer(c) {
			continue
		}
		st, ok := findStatus(info, c.Name)
		switch {
		case !ok:
			unknown++
		case st.State.Running != nil:
			if st.Started == nil || !*st.Started {
				pendingRestartableInit++
			}
			running++
		case st.State.Terminated != nil:
			// A stopped sidecar does not count towards the phase.
		case st.State.Waiting != nil:
			if st.LastTerminationState.Terminated == nil {
				pendingRestartableInit++
				waiting++
			}
		default:
			pendingRestartableInit++
			unknown++
		}
	}

	for i := range spec.Containers {
		c := &spec.Containers[i]
		st, ok := findStatus(info, c.Name)
		switch {
		case !ok:
			unknown++
		case st.State.Running != nil:
			running++
		case st.State.Terminated != nil:
			stopped++
			code := st.State.Terminated.ExitCode
			if !ContainerShouldRestart(c, spec, code) {
				stoppedNotRestartable++
			}
			if code == 0 {
				succeeded++
			}
		case st.State.Waiting != nil:
			if t := st.LastTerminationState.Terminated; t != nil {
				stopped++
				if !ContainerShouldRestart(c, spec, t.ExitCode) {
					stoppedNotRestartable++
				}
			} else {
				waiting++
			}
		default:
			unknown++
		}
	}

	if failedInitNotRestartable > 0 {
		return v1.PodFailed
	}
	switch {
	case pendingRegularInit > 0 || (pendingRestartableInit > 0 && !initialized), waiting > 0:
		return v1.PodPending
	case running > 0 && unknown == 0:
		return v1.PodRunning
	case running == 0 && stopped > 0 && unknown == 0:
		// The pod worker is done, so nothing restarts whatever the policy (upstream does not
		// yet give static pods a terminal phase this way).
		if podIsTerminal && !podconfig.IsStaticPod(pod) {
			if stopped == succeeded {
				return v1.PodSucceeded
			}
			return v1.PodFailed
		}
		if stopped != stoppedNotRestartable {
			return v1.PodRunning // some are restarting
		}
		if stopped == succeeded {
			return v1.PodSucceeded
		}
		return v1.PodFailed
	}
	return v1.PodPending
}

func findStatus(list []v1.ContainerStatus, name string) (*v1.ContainerStatus, bool) {
	for i := range list {
		if list[i].Name == name {
			return &list[i], true
		}
	}
	return nil, false
}

// IsRestartableInitContainer says c is a sidecar: an init container with restartPolicy Always.
func IsRestartableInitContainer(c *v1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// ContainerShouldRestart is upstream's podutil.ContainerShouldRestart: whether c, having exited
// with exitCode, is restarted. The container's restartPolicyRules are tried in order, then its
// restartPolicy, then the pod's.
func ContainerShouldRestart(c *v1.Container, spec *v1.PodSpec, exitCode int32) bool {
	if c.RestartPolicy != nil {
		if rule, ok := MatchingRestartRule(c, exitCode); ok {
			switch rule.Action {
			case v1.ContainerRestartRuleActionRestart, v1.ContainerRestartRuleActionRestartAllContainers:
				return true
			}
		}
		switch *c.RestartPolicy {
		case v1.ContainerRestartPolicyAlways:
			return true
		case v1.ContainerRestartPolicyOnFailure:
			return exitCode != 0
		case v1.ContainerRestartPolicyNever:
			return false
		}
	}
	switch spec.RestartPolicy {
	case v1.RestartPolicyOnFailure:
		return exitCode != 0
	case v1.RestartPolicyNever:
		return false
	}
	return true // Always, the default
}

// MatchingRestartRule is upstream's podutil.FindMatchingContainerRestartRule: the first of the
// container's restartPolicyRules whose exit-code condition matches.
func MatchingRestartRule(c *v1.Container, exitCode int32) (v1.ContainerRestartRule, bool) {
	for _, rule := range c.RestartPolicyRules {
		if rule.ExitCodes == nil {
			continue
		}
		matched := slices.Contains(rule.ExitCodes.Values, exitCode)
		switch rule.ExitCodes.Operator {
		case v1.ContainerRestartRuleOnExitCodesOpIn:
			if matched {
				return rule, true
			}
		case v1.ContainerRestartRuleOnExitCodesOpNotIn:
			if !matched {
				return rule, true
			}
		}
	}
	return v1.ContainerRestartRule{}, false
}

// CheckTransition is upstream's checkContainerStateTransition, which the status manager runs
// before accepting a status: a terminated container that may not restart must stay terminated.
func CheckTransition(old, cur *v1.PodStatus, spec *v1.PodSpec) error {
	if spec.RestartPolicy == v1.RestartPolicyAlways || allContainersCouldRestart(spec) {
		return nil
	}
	check := func(kind string, olds, curs []v1.ContainerStatus, containers []v1.Container) error {
		for _, o := range olds {
			var c *v1.Container
			for i := range containers {
				if containers[i].Name == o.Name {
					c = &containers[i]
				}
			}
			if IsRestartableInitContainer(c) || o.State.Terminated == nil {
				continue
			}
			code := o.State.Terminated.ExitCode
			if (code != 0 && spec.RestartPolicy == v1.RestartPolicyOnFailure) ||
				(c != nil && ContainerShouldRestart(c, spec, code)) {
				continue
			}
			for _, n := range curs {
				if n.Name == o.Name && n.State.Terminated == nil {
					return fmt.Errorf("terminated %s %v attempted illegal transition to non-terminated state", kind, n.Name)
				}
			}
		}
		return nil
	}
	if err := check("container", old.ContainerStatuses, cur.ContainerStatuses, spec.Containers); err != nil {
		return err
	}
	return check("init container", old.InitContainerStatuses, cur.InitContainerStatuses, spec.InitContainers)
}

// allContainersCouldRestart says some container has a RestartAllContainers rule.
func allContainersCouldRestart(spec *v1.PodSpec) bool {
	for _, list := range [][]v1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range list {
			for _, rule := range c.RestartPolicyRules {
				if rule.Action == v1.ContainerRestartRuleActionRestartAllContainers {
					return true
				}
			}
		}
	}
	return false
}
