package eviction

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Observation is one signal's available amount and capacity, at the time of its stats.
type Observation struct {
	Available, Capacity resource.Quantity
	Time                time.Time
}

// Observations are the signals observed in one summary.
type Observations map[Signal]Observation

// Observe is upstream's makeSignalObservations: the signals from the stats summary.
// memory.available is the root cgroup's available bytes, and its capacity available plus the
// working set (capacity minus working set, as upstream on cgroup v1 and v2);
// allocatableMemory.available is the same for the "pods" system container.
func Observe(s *statsapi.Summary) Observations {
	out := Observations{}
	bytes := func(v uint64) resource.Quantity { return *resource.NewQuantity(int64(v), resource.BinarySI) }
	count := func(v uint64) resource.Quantity { return *resource.NewQuantity(int64(v), resource.DecimalSI) }
	memory := func(sig Signal, m *statsapi.MemoryStats) {
		if m != nil && m.AvailableBytes != nil && m.WorkingSetBytes != nil {
			out[sig] = Observation{Available: bytes(*m.AvailableBytes), Capacity: bytes(*m.AvailableBytes + *m.WorkingSetBytes), Time: m.Time.Time}
		}
	}
	fs := func(avail, inodes Signal, f *statsapi.FsStats) {
		if f == nil {
			return
		}
		if f.AvailableBytes != nil && f.CapacityBytes != nil {
			out[avail] = Observation{Available: bytes(*f.AvailableBytes), Capacity: bytes(*f.CapacityBytes), Time: f.Time.Time}
		}
		if f.InodesFree != nil && f.Inodes != nil {
			out[inodes] = Observation{Available: count(*f.InodesFree), Capacity: count(*f.Inodes), Time: f.Time.Time}
		}
	}
	memory(SignalMemoryAvailable, s.Node.Memory)
	for i := range s.Node.SystemContainers {
		if c := &s.Node.SystemContainers[i]; c.Name == statsapi.SystemContainerPods {
			memory(SignalAllocatableMemoryAvailable, c.Memory)
		}
	}
	fs(SignalNodeFsAvailable, SignalNodeFsInodesFree, s.Node.Fs)
	if rt := s.Node.Runtime; rt != nil {
		fs(SignalImageFsAvailable, SignalImageFsInodesFree, rt.ImageFs)
		fs(SignalContainerFsAvailable, SignalContainerFsInodesFree, rt.ContainerFs)
	}
	if r := s.Node.Rlimit; r != nil && r.NumOfRunningProcesses != nil && r.MaxPID != nil {
		out[SignalPIDAvailable] = Observation{Available: count(uint64(max(*r.MaxPID-*r.NumOfRunningProcesses, 0))),
			Capacity: count(uint64(*r.MaxPID)), Time: r.Time.Time}
	}
	return out
}

// PodStats finds a pod's stats in a summary by UID.
type PodStats func(uid string) (statsapi.PodStats, bool)

// PodStatsOf indexes the summary's pods.
func PodStatsOf(s *statsapi.Summary) PodStats {
	byUID := make(map[string]statsapi.PodStats, len(s.Pods))
	for _, p := range s.Pods {
		byUID[p.PodRef.UID] = p
	}
	return func(uid string) (statsapi.PodStats, bool) {
		p, ok := byUID[uid]
		return p, ok
	}
}
