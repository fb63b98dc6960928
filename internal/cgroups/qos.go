package cgroups

import (
	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/nodelet/nodelet/internal/kuberuntime/criconfig"
	"github.com/nodelet/nodelet/internal/status"
)

// MinShares is the smallest cpu.shares the kernel takes (upstream's cm.MinShares): what the
// BestEffort QoS cgroup and a pod that requests no cpu get.
const MinShares = 2

// Resources is what nodelet sets on one cgroup (upstream's cm.ResourceConfig); a nil field is
// left as it is.
type Resources struct {
	CPUShares *uint64 // cgroup v1 cpu.shares; cgroup v2's cpu.weight is converted from it
	CPUQuota  *int64  // µs of cpu time per CPUPeriod (cpu.cfs_quota_us, cpu.max)
	CPUPeriod *uint64 // µs
	Memory    *int64  // bytes (memory.limit_in_bytes, memory.max)
	PidsLimit *int64  // pids.max; set on a pod's cgroup from podPidsLimit
}

// QoS is what upstream's QoS container manager sets on the QoS cgroups (setCPUCgroupConfig):
// BestEffort gets MinShares; Burstable the cpu requests of its active pods, as shares. pods
// are the active pods (admitted, not terminated).
func QoS(pods []*v1.Pod) (burstable, bestEffort Resources) {
	var milli int64
	for _, pod := range pods {
		if status.QOSClass(pod) != v1.PodQOSBurstable {
			continue
		}
		if q, ok := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})[v1.ResourceCPU]; ok {
			milli += q.MilliValue()
		}
	}
	b, be := uint64(criconfig.MilliCPUToShares(milli)), uint64(MinShares)
	return Resources{CPUShares: &b}, Resources{CPUShares: &be}
}

// Node is what upstream sets on the cgroup of all pods (kubepods) with enforceNodeAllocatable
// [pods], its default: cpu shares from the allocatable cpu and the memory limit from the
// allocatable memory, allocatable being the capacity less kubeReserved and systemReserved (not
// the eviction thresholds: upstream's GetNodeAllocatableAbsolute).
func Node(allocatable v1.ResourceList) Resources {
	var r Resources
	if q, ok := allocatable[v1.ResourceCPU]; ok {
		s := uint64(criconfig.MilliCPUToShares(q.MilliValue()))
		r.CPUShares = &s
	}
	if q, ok := allocatable[v1.ResourceMemory]; ok {
		m := q.Value()
		r.Memory = &m
	}
	return r
}

// Allocatable is upstream's GetNodeAllocatableAbsolute: each capacity resource less what the
// reservations (kubeReserved, systemReserved) hold of it, never below zero.
func Allocatable(capacity v1.ResourceList, reserved ...v1.ResourceList) v1.ResourceList {
	out := v1.ResourceList{}
	for name, q := range capacity {
		left := q.DeepCopy()
		for _, r := range reserved {
			if rq, ok := r[name]; ok {
				left.Sub(rq)
			}
		}
		if left.Sign() < 0 {
			left.Set(0)
		}
		out[name] = left
	}
	return out
}

// SharesToWeight converts cpu.shares to cgroup v2's cpu.weight as the kubelet does for the pod
// and QoS cgroups it manages (cm.CpuSharesToCpuWeight, linear: [2, 262144] → [1, 10000]); runc
// converts the containers' own shares with another formula.
func SharesToWeight(shares uint64) uint64 {
	if shares < MinShares {
		shares = MinShares
	}
	return 1 + ((shares-2)*9999)/262142
}
