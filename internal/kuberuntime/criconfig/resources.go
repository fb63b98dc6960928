package criconfig

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// CFS and OOM constants, as upstream (pkg/kubelet/cm, pkg/kubelet/qos).
const (
	QuotaPeriod     = 100000 // µs, cpuCFSQuotaPeriod default
	minShares       = 2
	maxShares       = 262144
	minQuotaPeriod  = 1000
	guaranteedOOM   = -997
	bestEffortOOM   = 1000
	burstableMinOOM = 2
	burstableMaxOOM = 999
)

// MilliCPUToShares converts a cpu request to cgroup v1 cpu.shares.
func MilliCPUToShares(milliCPU int64) int64 {
	if milliCPU == 0 {
		return minShares
	}
	shares := milliCPU * 1024 / 1000
	switch {
	case shares < minShares:
		return minShares
	case shares > maxShares:
		return maxShares
	}
	return shares
}

// MilliCPUToQuota converts a cpu limit to a CFS quota for the period; 0 means no limit.
func MilliCPUToQuota(milliCPU, period int64) int64 {
	if milliCPU == 0 {
		return 0
	}
	q := milliCPU * period / 1000
	if q < minQuotaPeriod {
		q = minQuotaPeriod
	}
	return q
}

// OOMScoreAdj is upstream's GetContainerOOMScoreAdjust. containerd configured with
// restrict_oom_score_adj raises negative values to its own score; nodelet does not depend on
// negative scores being applied.
func OOMScoreAdj(qos v1.PodQOSClass, c *v1.Container, memoryCapacity int64) int64 {
	switch qos {
	case v1.PodQOSGuaranteed:
		return guaranteedOOM
	case v1.PodQOSBestEffort:
		return bestEffortOOM
	}
	if memoryCapacity <= 0 {
		return burstableMaxOOM
	}
	req := c.Resources.Requests.Memory().Value()
	adj := 1000 - (1000*req)/memoryCapacity
	switch {
	case adj < burstableMinOOM:
		return burstableMinOOM
	case adj >= bestEffortOOM:
		return burstableMaxOOM
	}
	return adj
}

// Resources maps the container's requests and limits to LinuxContainerResources. oomGroup asks
// the runtime for memory.oom.group=1 on the container's cgroup (cgroup v2 without
// singleProcessOOMKill, cgroups.OOMGroup), as upstream's generateLinuxContainerResources: an
// OOM kill then takes every process of the container.
func Resources(qos v1.PodQOSClass, c *v1.Container, memoryCapacity int64, oomGroup bool) *runtimeapi.LinuxContainerResources {
	r := &runtimeapi.LinuxContainerResources{
		CpuShares:   MilliCPUToShares(c.Resources.Requests.Cpu().MilliValue()),
		OomScoreAdj: OOMScoreAdj(qos, c, memoryCapacity),
	}
	if oomGroup {
		r.Unified = map[string]string{"memory.oom.group": "1"}
	}
	if lim := c.Resources.Limits.Cpu().MilliValue(); lim > 0 {
		r.CpuPeriod = QuotaPeriod
		r.CpuQuota = MilliCPUToQuota(lim, QuotaPeriod)
	}
	if mem := c.Resources.Limits.Memory().Value(); mem > 0 {
		r.MemoryLimitInBytes = mem
	}
	return r
}

// SandboxResources is upstream's calculateSandboxResources: the pod's requests and limits
// without its overhead (cpu shares from the request, or from the limit when no container
// requests cpu; CFS quota and memory limit from the limits), for runtimes that size the
// sandbox (VM-based handlers) and for the pod cgroup.
func SandboxResources(pod *v1.Pod) *runtimeapi.LinuxContainerResources {
	opts := resourcehelper.PodResourcesOptions{ExcludeOverhead: true, SkipPodLevelResources: true}
	req, lim := resourcehelper.PodRequests(pod, opts), resourcehelper.PodLimits(pod, opts)
	var cpuRequest *resource.Quantity
	if _, ok := req[v1.ResourceCPU]; ok {
		cpuRequest = req.Cpu()
	}
	return linuxResources(cpuRequest, lim.Cpu(), lim.Memory())
}

// OverheadResources is upstream's convertOverheadToLinuxResources: the pod's overhead (from
// its RuntimeClass) as guaranteed resources, requests equal to limits; empty without one.
func OverheadResources(pod *v1.Pod) *runtimeapi.LinuxContainerResources {
	if pod.Spec.Overhead == nil {
		return &runtimeapi.LinuxContainerResources{}
	}
	cpu := pod.Spec.Overhead.Cpu()
	return linuxResources(cpu, cpu, pod.Spec.Overhead.Memory())
}

// linuxResources is upstream's calculateLinuxResources with the CFS quota on (cpuCFSQuota,
// default true) and its 100 ms period.
func linuxResources(cpuRequest, cpuLimit, memoryLimit *resource.Quantity) *runtimeapi.LinuxContainerResources {
	r := &runtimeapi.LinuxContainerResources{CpuPeriod: QuotaPeriod, CpuQuota: MilliCPUToQuota(cpuLimit.MilliValue(), QuotaPeriod)}
	if cpuRequest == nil && cpuLimit != nil {
		r.CpuShares = MilliCPUToShares(cpuLimit.MilliValue())
	} else {
		r.CpuShares = MilliCPUToShares(cpuRequest.MilliValue())
	}
	if m := memoryLimit.Value(); m != 0 {
		r.MemoryLimitInBytes = m
	}
	return r
}

func sortStrings(s []string) { sort.Strings(s) }
