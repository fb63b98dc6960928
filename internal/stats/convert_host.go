package stats

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/nodelet/nodelet/internal/stats/host"
)

// Pure conversions from host readings to the summary API, following upstream's conversions of
// cadvisor's data (cadvisorInfoToCPUandMemoryStats, cadvisorInfoToNetworkStats, RootFsStats).

// defaultInterface is the interface reported as the node's (and upstream's) network stats.
const defaultInterface = "eth0"

func u64(v uint64) *uint64 { return &v }

func psiFromHost(p *host.PSI) *statsapi.PSIStats {
	if p == nil {
		return nil
	}
	conv := func(d host.PSIData) statsapi.PSIData {
		return statsapi.PSIData{Total: d.Total, Avg10: d.Avg10, Avg60: d.Avg60, Avg300: d.Avg300}
	}
	return &statsapi.PSIStats{Full: conv(p.Full), Some: conv(p.Some)}
}

// cgroupCPU is a cgroup's CPU; usageNanoCores is 0 until there is a rate, as with cadvisor.
func cgroupCPU(t time.Time, c host.Cgroup, nanoCores *uint64) *statsapi.CPUStats {
	if nanoCores == nil {
		nanoCores = zero()
	}
	return &statsapi.CPUStats{
		Time:                 metav1.NewTime(t),
		UsageNanoCores:       nanoCores,
		UsageCoreNanoSeconds: u64(c.CPU.UsageNanosecs),
		PSI:                  psiFromHost(c.CPUPressure),
	}
}

// cgroupMemory is a cgroup's memory; availableBytes is limit - working set when there is a limit
// (the root's is the RAM).
func cgroupMemory(t time.Time, c host.Cgroup) *statsapi.MemoryStats {
	m := c.Memory
	out := &statsapi.MemoryStats{
		Time:            metav1.NewTime(t),
		UsageBytes:      u64(m.Usage),
		WorkingSetBytes: u64(m.WorkingSet),
		RSSBytes:        u64(m.RSS),
		PageFaults:      u64(m.PageFaults),
		MajorPageFaults: u64(m.MajorPageFaults),
		PSI:             psiFromHost(c.MemoryPressure),
	}
	if m.Limit != nil {
		out.AvailableBytes = u64(saturatingSub(*m.Limit, m.WorkingSet))
	}
	return out
}

// cgroupSwap is a cgroup's swap, nil when swap is not accounted.
func cgroupSwap(t time.Time, c host.Cgroup) *statsapi.SwapStats {
	m := c.Memory
	if m.Swap == nil {
		return nil
	}
	out := &statsapi.SwapStats{Time: metav1.NewTime(t), SwapUsageBytes: u64(*m.Swap)}
	if m.SwapLimit != nil {
		out.SwapAvailableBytes = u64(saturatingSub(*m.SwapLimit, *m.Swap))
	}
	return out
}

// cgroupIO is a cgroup's IO (only its pressure), nil without one.
func cgroupIO(t time.Time, c host.Cgroup) *statsapi.IOStats {
	if c.IOPressure == nil {
		return nil
	}
	return &statsapi.IOStats{Time: metav1.NewTime(t), PSI: psiFromHost(c.IOPressure)}
}

// cgroupContainer is a system container: its cgroup's CPU, memory, swap and IO, no filesystems.
func cgroupContainer(name string, start, t time.Time, c host.Cgroup, nanoCores *uint64) statsapi.ContainerStats {
	return statsapi.ContainerStats{
		Name:      name,
		StartTime: metav1.NewTime(start),
		CPU:       cgroupCPU(t, c, nanoCores),
		Memory:    cgroupMemory(t, c),
		Swap:      cgroupSwap(t, c),
		IO:        cgroupIO(t, c),
	}
}

// processContainer is the "kubelet" system container read from this process: its resident set
// is its usage and working set.
func processContainer(name string, start, t time.Time, p host.Process, nanoCores *uint64) statsapi.ContainerStats {
	if nanoCores == nil {
		nanoCores = zero()
	}
	return statsapi.ContainerStats{
		Name:      name,
		StartTime: metav1.NewTime(start),
		CPU:       &statsapi.CPUStats{Time: metav1.NewTime(t), UsageNanoCores: nanoCores, UsageCoreNanoSeconds: u64(p.CPUUsageNanosecs)},
		Memory: &statsapi.MemoryStats{Time: metav1.NewTime(t), UsageBytes: u64(p.RSS), WorkingSetBytes: u64(p.RSS),
			RSSBytes: u64(p.RSS), PageFaults: u64(p.PageFaults), MajorPageFaults: u64(p.MajorPageFaults)},
	}
}

// nodeNetwork is the node's interfaces; the embedded default is eth0's when there is one.
func nodeNetwork(t time.Time, ifs []host.Interface) *statsapi.NetworkStats {
	out := &statsapi.NetworkStats{Time: metav1.NewTime(t)}
	for _, i := range ifs {
		s := statsapi.InterfaceStats{Name: i.Name, RxBytes: u64(i.RxBytes), RxErrors: u64(i.RxErrors), TxBytes: u64(i.TxBytes), TxErrors: u64(i.TxErrors)}
		if i.Name == defaultInterface {
			out.InterfaceStats = s
		}
		out.Interfaces = append(out.Interfaces, s)
	}
	return out
}

// fsCapacity is a filesystem's size without usage (what container logs, rootfs and the
// ephemeral storage of pods report of their filesystem).
func fsCapacity(t time.Time, fs host.FsInfo) *statsapi.FsStats {
	return &statsapi.FsStats{
		Time:           metav1.NewTime(t),
		AvailableBytes: u64(fs.Available),
		CapacityBytes:  u64(fs.Capacity),
		InodesFree:     u64(fs.InodesFree),
		Inodes:         u64(fs.Inodes),
	}
}

// nodeFs is the nodefs: a filesystem's size and usage.
func nodeFs(t time.Time, fs host.FsInfo) *statsapi.FsStats {
	out := fsCapacity(t, fs)
	out.UsedBytes = u64(fs.Usage)
	out.InodesUsed = u64(saturatingSub(fs.Inodes, fs.InodesFree))
	return out
}

// rlimit is the node's task limit and count.
func rlimit(t time.Time, r host.Rlimit) *statsapi.RlimitStats {
	return &statsapi.RlimitStats{Time: metav1.NewTime(t), MaxPID: r.MaxPID, NumOfRunningProcesses: r.Tasks}
}

func saturatingSub(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}
