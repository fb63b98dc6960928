package cgroups

import (
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/nodelet/nodelet/internal/kuberuntime/criconfig"
)

// The enforceNodeAllocatable values (upstream's kubetypes keys).
const (
	EnforcePods                     = "pods"
	EnforceSystemReserved           = "system-reserved"
	EnforceSystemReservedCompressed = "system-reserved-compressible"
	EnforceKubeReserved             = "kube-reserved"
	EnforceKubeReservedCompressed   = "kube-reserved-compressible"
	EnforceNone                     = "none"
)

// ResourcePIDs is the pid resource of kubeReserved and systemReserved (upstream's pidlimit.PIDs).
const ResourcePIDs v1.ResourceName = "pid"

// Reservations is what the node reserves and enforceNodeAllocatable enforces.
type Reservations struct {
	// Enforce is enforceNodeAllocatable (validated: kubeletconfig).
	Enforce []string
	// Capacity is the node's; KubeReserved and SystemReserved what kubeReserved and
	// systemReserved hold of it.
	Capacity, KubeReserved, SystemReserved v1.ResourceList
	// KubeReservedCgroup and SystemReservedCgroup are the existing cgroups they are enforced on
	// (kubeReservedCgroup, systemReservedCgroup), as the cgroup driver names them.
	KubeReservedCgroup, SystemReservedCgroup string
}

// ReservedCgroup is an existing cgroup (as the driver names it) and what is set on it.
type ReservedCgroup struct {
	Name, What string // What: "system reserved", "kube reserved compressible"...
	Resources  Resources
}

// Enforcement is upstream's enforceNodeAllocatableCgroups as a decision: the cgroup of all pods
// gets the node's allocatable with enforceNodeAllocatable [pods] (its default), else the
// capacity (never the kernel's default, whose shares would starve the pods); each
// system-reserved or kube-reserved enforcement sets its reservation on its cgroup: cpu shares,
// memory and pids (cpu shares only when -compressible).
func Enforcement(r Reservations) (pods Resources, reserved []ReservedCgroup) {
	limits := r.Capacity
	if slices.Contains(r.Enforce, EnforcePods) {
		limits = Allocatable(r.Capacity, r.KubeReserved, r.SystemReserved)
	}
	for _, e := range []struct {
		key, cgroup, what string
		rl                v1.ResourceList
		compressibleOnly  bool
	}{
		{EnforceSystemReserved, r.SystemReservedCgroup, "system reserved", r.SystemReserved, false},
		{EnforceKubeReserved, r.KubeReservedCgroup, "kube reserved", r.KubeReserved, false},
		{EnforceSystemReservedCompressed, r.SystemReservedCgroup, "system reserved compressible", r.SystemReserved, true},
		{EnforceKubeReservedCompressed, r.KubeReservedCgroup, "kube reserved compressible", r.KubeReserved, true},
	} {
		if slices.Contains(r.Enforce, e.key) {
			reserved = append(reserved, ReservedCgroup{Name: e.cgroup, What: e.what, Resources: reservedResources(e.rl, e.compressibleOnly)})
		}
	}
	return Node(limits), reserved
}

// reservedResources is upstream's getCgroupConfig for a reservation: cpu shares from its cpu;
// unless compressibleOnly, its memory as the limit and its pids as pids.max.
func reservedResources(rl v1.ResourceList, compressibleOnly bool) Resources {
	var r Resources
	if q, ok := rl[v1.ResourceCPU]; ok {
		s := uint64(criconfig.MilliCPUToShares(q.MilliValue()))
		r.CPUShares = &s
	}
	if compressibleOnly {
		return r
	}
	if q, ok := rl[v1.ResourceMemory]; ok {
		m := q.Value()
		r.Memory = &m
	}
	if q, ok := rl[ResourcePIDs]; ok {
		p := q.Value()
		r.PidsLimit = &p
	}
	return r
}
