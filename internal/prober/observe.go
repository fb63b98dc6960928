package prober

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/nodelet/nodelet/internal/status"
)

// observe reduces what the status manager holds for pod (st, when known) to what step needs
// about container c, as upstream's doProbe reads it.
func observe(now, managerStart time.Time, pod *v1.Pod, c *v1.Container, sidecar bool, st v1.PodStatus, known bool) observation {
	o := observation{Now: now, ManagerStart: managerStart, PodKnown: known, Sidecar: sidecar,
		Deleting: pod.DeletionTimestamp != nil}
	if !known {
		return o
	}
	o.PodFinished = st.Phase == v1.PodSucceeded || st.Phase == v1.PodFailed
	cs := findStatus(st.ContainerStatuses, c.Name)
	if cs == nil {
		cs = findStatus(st.InitContainerStatuses, c.Name)
	}
	if cs == nil {
		return o
	}
	o.ContainerID = cs.ContainerID
	o.Started = cs.Started != nil && *cs.Started
	if r := cs.State.Running; r != nil {
		o.Running, o.StartedAt = true, r.StartedAt.Time
	}
	if t := cs.State.Terminated; t != nil {
		o.Terminated = true
		o.WillRestart = status.ContainerShouldRestart(c, &pod.Spec, t.ExitCode) || allContainersRestarting(pod, &st)
	}
	return o
}

// findStatus returns the status of the named container if it has a container ID.
func findStatus(list []v1.ContainerStatus, name string) *v1.ContainerStatus {
	for i := range list {
		if list[i].Name == name && list[i].ContainerID != "" {
			return &list[i]
		}
	}
	return nil
}

// allContainersRestarting is upstream's kubecontainer.ShouldAllContainersRestart for an API
// status: the pod says so, or an exited container matched a RestartAllContainers rule.
func allContainersRestarting(pod *v1.Pod, st *v1.PodStatus) bool {
	for _, cond := range st.Conditions {
		if cond.Type == v1.AllContainersRestarting && cond.Status == v1.ConditionTrue {
			return true
		}
	}
	exited := map[string]int32{}
	for _, list := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for _, cs := range list {
			if cs.State.Terminated != nil {
				exited[cs.Name] = cs.State.Terminated.ExitCode
			}
		}
	}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			code, ok := exited[list[i].Name]
			if !ok {
				continue
			}
			if rule, ok := status.MatchingRestartRule(&list[i], code); ok && rule.Action == v1.ContainerRestartRuleActionRestartAllContainers {
				return true
			}
		}
	}
	return false
}
