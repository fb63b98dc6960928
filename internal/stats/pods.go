package stats

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// podStats lists the pods' stats from the runtime: from ListPodSandboxStats (pod cgroup, network
// namespace and containers in one call, containerd on Linux), or, when the runtime does not
// implement it, from ListContainerStats with the pod's CPU and memory the sum of its
// containers'. full adds what the summary has beyond the resource metrics: network, IO,
// processes, container rootfs and logs, volumes and ephemeral storage.
func (p *Provider) podStats(ctx context.Context, ps *pass, full bool) ([]statsapi.PodStats, error) {
	sandboxList, err := p.runtime.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{})
	if err != nil {
		return nil, fmt.Errorf("list pod sandboxes: %w", err)
	}
	containerList, err := p.runtime.ListContainers(ctx, &runtimeapi.ContainerFilter{})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	sandboxes := latestSandboxes(sandboxList)
	containers := runningContainers(containerList)

	var pods []statsapi.PodStats
	fromSandboxStats := false
	if !p.noSandboxStats.Load() {
		stats, err := p.runtime.ListPodSandboxStats(ctx, &runtimeapi.PodSandboxStatsFilter{})
		switch {
		case err == nil:
			pods, fromSandboxStats = p.podsFromSandboxStats(ps, stats, sandboxes, containers, full), true
		case status.Code(err) == codes.Unimplemented:
			p.noSandboxStats.Store(true)
			klog.InfoS("The runtime does not implement ListPodSandboxStats; pod CPU and memory will be the sum of their containers' and pod network stats are not reported", "err", err)
		default:
			klog.ErrorS(err, "ListPodSandboxStats failed; this summary's pod CPU and memory are the sum of their containers'")
		}
	}
	if !fromSandboxStats {
		stats, err := p.runtime.ListContainerStats(ctx, &runtimeapi.ContainerStatsFilter{})
		if err != nil {
			return nil, fmt.Errorf("list container stats: %w", err)
		}
		pods = p.podsFromContainerStats(ps, stats, sandboxes, containers, full)
	}
	slices.SortFunc(pods, func(a, b statsapi.PodStats) int {
		return cmp.Or(cmp.Compare(a.PodRef.Namespace, b.PodRef.Namespace), cmp.Compare(a.PodRef.Name, b.PodRef.Name),
			cmp.Compare(a.PodRef.UID, b.PodRef.UID))
	})
	if pods == nil {
		pods = []statsapi.PodStats{}
	}
	return pods, nil
}

func newPodStats(sb *runtimeapi.PodSandbox) statsapi.PodStats {
	md := sb.GetMetadata()
	return statsapi.PodStats{
		PodRef:    statsapi.PodReference{Name: md.GetName(), Namespace: md.GetNamespace(), UID: md.GetUid()},
		StartTime: unixNano(sb.GetCreatedAt()),
	}
}

// podsFromSandboxStats builds a pod for each sandbox the runtime gave stats of (containerd: the
// ready ones) and kept by latestSandboxes, with its running containers.
func (p *Provider) podsFromSandboxStats(ps *pass, stats []*runtimeapi.PodSandboxStats, sandboxes map[string]*runtimeapi.PodSandbox,
	containers map[string]*runtimeapi.Container, full bool) []statsapi.PodStats {
	pods := make([]statsapi.PodStats, 0, len(stats))
	for _, st := range stats {
		id := st.GetAttributes().GetId()
		sb, ok := sandboxes[id]
		if !ok {
			continue
		}
		linux := st.GetLinux()
		s := newPodStats(sb)
		for _, cs := range linux.GetContainers() {
			if c, ok := containers[cs.GetAttributes().GetId()]; ok && c.GetPodSandboxId() == id {
				s.Containers = append(s.Containers, p.container(ps, cs, c, s.PodRef, full))
			}
		}
		sortContainers(s.Containers)
		s.CPU = podCPUFromCRI(linux.GetCpu(), p.criNanoCores("pod/"+id, linux.GetCpu()))
		if s.CPU == nil {
			s.CPU = sumContainerCPU(s.Containers)
		}
		if s.Memory = podMemoryFromCRI(linux.GetMemory()); s.Memory == nil {
			s.Memory = sumContainerMemory(s.Containers)
		}
		s.Swap = sumContainerSwap(s.Containers)
		if full {
			s.Network = podNetworkFromCRI(linux.GetNetwork())
			s.IO = podIOFromCRI(linux.GetIo())
			s.ProcessStats = podProcessFromCRI(linux.GetProcess())
			p.addStorage(ps, &s)
		}
		pods = append(pods, s)
	}
	return pods
}

// podsFromContainerStats builds a pod for each kept sandbox with a running container the
// runtime gave stats of; the pod's CPU, memory and swap are its containers' sums.
func (p *Provider) podsFromContainerStats(ps *pass, stats []*runtimeapi.ContainerStats, sandboxes map[string]*runtimeapi.PodSandbox,
	containers map[string]*runtimeapi.Container, full bool) []statsapi.PodStats {
	bySandbox := make(map[string]*statsapi.PodStats)
	for _, cs := range stats {
		c, ok := containers[cs.GetAttributes().GetId()]
		if !ok {
			continue
		}
		sb, ok := sandboxes[c.GetPodSandboxId()]
		if !ok {
			continue
		}
		s, ok := bySandbox[sb.GetId()]
		if !ok {
			ns := newPodStats(sb)
			s = &ns
			bySandbox[sb.GetId()] = s
		}
		s.Containers = append(s.Containers, p.container(ps, cs, c, s.PodRef, full))
	}
	pods := make([]statsapi.PodStats, 0, len(bySandbox))
	for _, s := range bySandbox {
		sortContainers(s.Containers)
		s.CPU = sumContainerCPU(s.Containers)
		s.Memory = sumContainerMemory(s.Containers)
		s.Swap = sumContainerSwap(s.Containers)
		if full {
			p.addStorage(ps, s)
		}
		pods = append(pods, *s)
	}
	return pods
}

// container converts one container's CRI stats, adding (full) its rootfs filesystem and logs.
func (p *Provider) container(ps *pass, cs *runtimeapi.ContainerStats, c *runtimeapi.Container, ref statsapi.PodReference, full bool) statsapi.ContainerStats {
	out := containerStats(cs, c.GetCreatedAt(), p.criNanoCores("container/"+c.GetId(), cs.GetCpu()), ps.now, full)
	if out.Name == "" {
		out.Name = c.GetMetadata().GetName()
	}
	if !full {
		return out
	}
	if mp := cs.GetWritableLayer().GetFsId().GetMountpoint(); mp != "" {
		withCapacity(out.Rootfs, p.statfs(ps, mp))
	}
	out.Logs = p.containerLogs(ps, ref, out.Name)
	return out
}

// criNanoCores is the CPU rate of a CRI reading: the runtime's when it gives one (containerd
// does), else computed from the previous reading of key.
func (p *Provider) criNanoCores(key string, cpu *runtimeapi.CpuUsage) *uint64 {
	if cpu == nil {
		return nil
	}
	if v := cpu.GetUsageNanoCores(); v != nil {
		return u64(v.GetValue())
	}
	if cpu.GetUsageCoreNanoSeconds() == nil {
		return nil
	}
	return p.rates.observe(key, cpuSample{usage: cpu.GetUsageCoreNanoSeconds().GetValue(), at: time.Unix(0, cpu.GetTimestamp())})
}

func sortContainers(cs []statsapi.ContainerStats) {
	slices.SortFunc(cs, func(a, b statsapi.ContainerStats) int { return cmp.Compare(a.Name, b.Name) })
}
