package stats

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Pure conversions from CRI stats to the summary API, following upstream's CRI stats provider
// (makeContainerStats, makeContainerCPUAndMemoryStats, addCRIPod*Stats).

func unixNano(ns int64) metav1.Time { return metav1.NewTime(time.Unix(0, ns)) }

func zero() *uint64 { var z uint64; return &z }

// value returns v's value, nil when absent, or 0 when absent and zeroMissing.
func value(v *runtimeapi.UInt64Value, zeroMissing bool) *uint64 {
	if v != nil {
		x := v.GetValue()
		return &x
	}
	if zeroMissing {
		return zero()
	}
	return nil
}

func psiFromCRI(p *runtimeapi.PsiStats) *statsapi.PSIStats {
	if p == nil {
		return nil
	}
	out := &statsapi.PSIStats{}
	if f := p.GetFull(); f != nil {
		out.Full = statsapi.PSIData{Total: f.GetTotal(), Avg10: f.GetAvg10(), Avg60: f.GetAvg60(), Avg300: f.GetAvg300()}
	}
	if s := p.GetSome(); s != nil {
		out.Some = statsapi.PSIData{Total: s.GetTotal(), Avg10: s.GetAvg10(), Avg60: s.GetAvg60(), Avg300: s.GetAvg300()}
	}
	return out
}

// containerStats converts a container's CRI stats. full is the /stats/summary form (upstream's
// makeContainerStats: CPU, memory, swap, IO and rootfs always present, the missing readings
// stamped now); otherwise the resource-metrics form (makeContainerCPUAndMemoryStats with
// zeroMissingValues: every missing value 0). nanoCores is the CPU rate, from the runtime or
// computed by the caller. Rootfs usage and logs are the caller's (they need the filesystems).
func containerStats(s *runtimeapi.ContainerStats, createdAt int64, nanoCores *uint64, now time.Time, full bool) statsapi.ContainerStats {
	zeroMissing := !full
	out := statsapi.ContainerStats{
		Name:      s.GetAttributes().GetMetadata().GetName(),
		StartTime: unixNano(createdAt),
	}
	if cpu := s.GetCpu(); cpu != nil {
		out.CPU = &statsapi.CPUStats{
			Time:                 unixNano(cpu.GetTimestamp()),
			UsageNanoCores:       nanoCores,
			UsageCoreNanoSeconds: value(cpu.GetUsageCoreNanoSeconds(), zeroMissing),
			PSI:                  psiFromCRI(cpu.GetPsi()),
		}
	} else {
		out.CPU = &statsapi.CPUStats{Time: metav1.NewTime(now), UsageNanoCores: zero(), UsageCoreNanoSeconds: zero()}
	}
	if m := s.GetMemory(); m != nil {
		out.Memory = &statsapi.MemoryStats{
			Time:            unixNano(m.GetTimestamp()),
			AvailableBytes:  value(m.GetAvailableBytes(), zeroMissing),
			UsageBytes:      value(m.GetUsageBytes(), zeroMissing),
			WorkingSetBytes: value(m.GetWorkingSetBytes(), zeroMissing),
			RSSBytes:        value(m.GetRssBytes(), zeroMissing),
			PageFaults:      value(m.GetPageFaults(), zeroMissing),
			MajorPageFaults: value(m.GetMajorPageFaults(), zeroMissing),
			PSI:             psiFromCRI(m.GetPsi()),
		}
	} else {
		out.Memory = &statsapi.MemoryStats{Time: metav1.NewTime(now), UsageBytes: zero(), WorkingSetBytes: zero(), RSSBytes: zero()}
		if !full {
			out.Memory.AvailableBytes, out.Memory.PageFaults, out.Memory.MajorPageFaults = zero(), zero(), zero()
		}
	}
	if sw := s.GetSwap(); sw != nil {
		out.Swap = &statsapi.SwapStats{
			Time:               unixNano(sw.GetTimestamp()),
			SwapAvailableBytes: value(sw.GetSwapAvailableBytes(), zeroMissing),
			SwapUsageBytes:     value(sw.GetSwapUsageBytes(), zeroMissing),
		}
	} else {
		out.Swap = &statsapi.SwapStats{Time: metav1.NewTime(now), SwapAvailableBytes: zero(), SwapUsageBytes: zero()}
	}
	if !full {
		return out
	}
	out.IO = &statsapi.IOStats{Time: metav1.NewTime(now)}
	if io := s.GetIo(); io != nil {
		out.IO = &statsapi.IOStats{Time: unixNano(io.GetTimestamp()), PSI: psiFromCRI(io.GetPsi())}
	}
	out.Rootfs = &statsapi.FsStats{}
	if wl := s.GetWritableLayer(); wl != nil {
		out.Rootfs.Time = unixNano(wl.GetTimestamp())
		out.Rootfs.UsedBytes = value(wl.GetUsedBytes(), false)
		out.Rootfs.InodesUsed = value(wl.GetInodesUsed(), false)
	}
	return out
}

// podCPUFromCRI is a sandbox's CPU from ListPodSandboxStats; nil when the runtime gave none.
func podCPUFromCRI(cpu *runtimeapi.CpuUsage, nanoCores *uint64) *statsapi.CPUStats {
	if cpu == nil {
		return nil
	}
	return &statsapi.CPUStats{
		Time:                 unixNano(cpu.GetTimestamp()),
		UsageNanoCores:       nanoCores,
		UsageCoreNanoSeconds: value(cpu.GetUsageCoreNanoSeconds(), false),
		PSI:                  psiFromCRI(cpu.GetPsi()),
	}
}

// podMemoryFromCRI is a sandbox's memory from ListPodSandboxStats; nil when the runtime gave none.
func podMemoryFromCRI(m *runtimeapi.MemoryUsage) *statsapi.MemoryStats {
	if m == nil {
		return nil
	}
	return &statsapi.MemoryStats{
		Time:            unixNano(m.GetTimestamp()),
		AvailableBytes:  value(m.GetAvailableBytes(), false),
		UsageBytes:      value(m.GetUsageBytes(), false),
		WorkingSetBytes: value(m.GetWorkingSetBytes(), false),
		RSSBytes:        value(m.GetRssBytes(), false),
		PageFaults:      value(m.GetPageFaults(), false),
		MajorPageFaults: value(m.GetMajorPageFaults(), false),
		PSI:             psiFromCRI(m.GetPsi()),
	}
}

func interfaceFromCRI(i *runtimeapi.NetworkInterfaceUsage) statsapi.InterfaceStats {
	return statsapi.InterfaceStats{
		Name:     i.GetName(),
		RxBytes:  value(i.GetRxBytes(), false),
		RxErrors: value(i.GetRxErrors(), false),
		TxBytes:  value(i.GetTxBytes(), false),
		TxErrors: value(i.GetTxErrors(), false),
	}
}

// podNetworkFromCRI is a sandbox's network (its namespace's interfaces) from ListPodSandboxStats.
func podNetworkFromCRI(n *runtimeapi.NetworkUsage) *statsapi.NetworkStats {
	if n == nil {
		return nil
	}
	out := &statsapi.NetworkStats{
		Time:       unixNano(n.GetTimestamp()),
		Interfaces: make([]statsapi.InterfaceStats, 0, len(n.GetInterfaces())),
	}
	if d := n.GetDefaultInterface(); d != nil {
		out.InterfaceStats = interfaceFromCRI(d)
	}
	for _, i := range n.GetInterfaces() {
		out.Interfaces = append(out.Interfaces, interfaceFromCRI(i))
	}
	return out
}

func podIOFromCRI(io *runtimeapi.IoUsage) *statsapi.IOStats {
	if io == nil {
		return nil
	}
	return &statsapi.IOStats{Time: unixNano(io.GetTimestamp()), PSI: psiFromCRI(io.GetPsi())}
}

func podProcessFromCRI(p *runtimeapi.ProcessUsage) *statsapi.ProcessStats {
	if p == nil {
		return nil
	}
	return &statsapi.ProcessStats{ProcessCount: value(p.GetProcessCount(), false)}
}

func sum(a, b *uint64) *uint64 {
	var x uint64
	if a != nil {
		x += *a
	}
	if b != nil {
		x += *b
	}
	return &x
}

// sumContainerCPU is the pod's CPU as the sum of its containers' (upstream's fallback when the
// pod's own cgroup reading is missing); nil without any container CPU.
func sumContainerCPU(cs []statsapi.ContainerStats) *statsapi.CPUStats {
	var out *statsapi.CPUStats
	for _, c := range cs {
		if c.CPU == nil {
			continue
		}
		if out == nil {
			out = &statsapi.CPUStats{}
		}
		out.Time = c.CPU.Time
		out.UsageCoreNanoSeconds = sum(out.UsageCoreNanoSeconds, c.CPU.UsageCoreNanoSeconds)
		out.UsageNanoCores = sum(out.UsageNanoCores, c.CPU.UsageNanoCores)
	}
	return out
}

// sumContainerMemory is the pod's memory as the sum of its containers'; nil without any.
func sumContainerMemory(cs []statsapi.ContainerStats) *statsapi.MemoryStats {
	var out *statsapi.MemoryStats
	for _, c := range cs {
		m := c.Memory
		if m == nil {
			continue
		}
		if out == nil {
			out = &statsapi.MemoryStats{}
		}
		out.Time = m.Time
		out.AvailableBytes = sum(out.AvailableBytes, m.AvailableBytes)
		out.UsageBytes = sum(out.UsageBytes, m.UsageBytes)
		out.WorkingSetBytes = sum(out.WorkingSetBytes, m.WorkingSetBytes)
		out.RSSBytes = sum(out.RSSBytes, m.RSSBytes)
		out.PageFaults = sum(out.PageFaults, m.PageFaults)
		out.MajorPageFaults = sum(out.MajorPageFaults, m.MajorPageFaults)
	}
	return out
}

// sumContainerSwap is upstream's aggregatePodSwapStats: the pod's swap is its containers'
// (CRI has no pod-level swap); nil without any.
func sumContainerSwap(cs []statsapi.ContainerStats) *statsapi.SwapStats {
	var out *statsapi.SwapStats
	for _, c := range cs {
		if c.Swap == nil {
			continue
		}
		if out == nil {
			out = &statsapi.SwapStats{}
		}
		out.Time = c.Swap.Time
		out.SwapAvailableBytes = sum(out.SwapAvailableBytes, c.Swap.SwapAvailableBytes)
		out.SwapUsageBytes = sum(out.SwapUsageBytes, c.Swap.SwapUsageBytes)
	}
	return out
}
