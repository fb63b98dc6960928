package cgroups

import (
	"path"

	v1 "k8s.io/api/core/v1"

	"github.com/nodelet/nodelet/internal/status"
)

// The QoS cgroups under the cgroup of all pods, as upstream's cgroupfs layout; Guaranteed pods'
// cgroups are directly in the cgroup of all pods.
const (
	BurstableCgroup  = "burstable"
	BestEffortCgroup = "besteffort"
)

// PodCgroup is the pod's cgroup under podsCgroup (<cgroupRoot>/kubepods), by QoS class:
// <pods>/pod<uid> (Guaranteed), <pods>/burstable/pod<uid>, <pods>/besteffort/pod<uid>.
func PodCgroup(podsCgroup string, pod *v1.Pod) string {
	name := "pod" + string(pod.UID)
	switch status.QOSClass(pod) {
	case v1.PodQOSGuaranteed:
		return path.Join(podsCgroup, name)
	case v1.PodQOSBurstable:
		return path.Join(podsCgroup, BurstableCgroup, name)
	}
	return path.Join(podsCgroup, BestEffortCgroup, name)
}

// PodParents are the cgroups pod cgroups are made in: podsCgroup and its two QoS cgroups.
func PodParents(podsCgroup string) []string {
	return []string{podsCgroup, path.Join(podsCgroup, BurstableCgroup), path.Join(podsCgroup, BestEffortCgroup)}
}
