package stats

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/nodelet/nodelet/internal/stats/host"
)

// nodeReading is the node's part read from the root cgroup.
type nodeReading struct {
	CPU    *statsapi.CPUStats
	Memory *statsapi.MemoryStats
	Swap   *statsapi.SwapStats
	IO     *statsapi.IOStats
}

// nodeCgroup reads the root cgroup, the whole machine, and updates its CPU rate.
func (p *Provider) nodeCgroup() (nodeReading, error) {
	c, t, rate, err := p.cgroup("/")
	if err != nil {
		return nodeReading{}, fmt.Errorf("stats: root cgroup: %w", err)
	}
	return nodeReading{CPU: cgroupCPU(t, c, rate), Memory: cgroupMemory(t, c), Swap: cgroupSwap(t, c), IO: cgroupIO(t, c)}, nil
}

// cgroup reads a cgroup, stamps it now and returns its CPU rate since the previous reading.
func (p *Provider) cgroup(name string) (host.Cgroup, time.Time, *uint64, error) {
	c, err := p.host.Cgroup(name)
	if err != nil {
		return host.Cgroup{}, time.Time{}, nil, err
	}
	t := p.clock.Now()
	return c, t, p.rates.observe("cgroup:"+name, cpuSample{usage: c.CPU.UsageNanosecs, at: t}), nil
}

// systemContainers reads upstream's system containers: "pods" (the cgroup root of all pods),
// "kubelet" (its cgroup when configured, else this process), and "runtime" and "misc" when
// their cgroups are configured. One that cannot be read is left out (logged). Without full,
// IO pressure is left out, as in upstream's CPU-and-memory summary.
func (p *Provider) systemContainers(full bool) []statsapi.ContainerStats {
	type sys struct {
		name, cgroup string
		start        time.Time
	}
	var out []statsapi.ContainerStats
	for _, s := range []sys{
		{statsapi.SystemContainerKubelet, p.cfg.KubeletCgroup, p.started},
		{statsapi.SystemContainerRuntime, p.cfg.RuntimeCgroup, time.Time{}},
		{statsapi.SystemContainerMisc, p.cfg.SystemCgroup, time.Time{}},
		{statsapi.SystemContainerPods, p.podsCgroup(), time.Time{}},
	} {
		if s.cgroup == "" {
			if s.name == statsapi.SystemContainerKubelet {
				if c, ok := p.selfContainer(); ok {
					out = append(out, c)
				}
			}
			continue
		}
		c, t, rate, err := p.cgroup(s.cgroup)
		if err != nil {
			if host.IsNotExist(err) {
				klog.V(4).InfoS("System container's cgroup does not exist (yet); left out of the stats", "containerName", s.name, "cgroup", s.cgroup)
			} else {
				klog.ErrorS(err, "Failed to get system container stats", "containerName", s.name, "cgroup", s.cgroup)
			}
			continue
		}
		start := s.start
		if start.IsZero() {
			start = c.Created
		}
		cs := cgroupContainer(s.name, start, t, c, rate)
		if !full {
			cs.IO = nil
		}
		out = append(out, cs)
	}
	slices.SortFunc(out, func(a, b statsapi.ContainerStats) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// selfContainer is the "kubelet" system container read from /proc/self.
func (p *Provider) selfContainer() (statsapi.ContainerStats, bool) {
	proc, err := p.host.Self()
	if err != nil {
		klog.ErrorS(err, "Failed to get system container stats", "containerName", statsapi.SystemContainerKubelet)
		return statsapi.ContainerStats{}, false
	}
	t := p.clock.Now()
	rate := p.rates.observe("process:self", cpuSample{usage: proc.CPUUsageNanosecs, at: t})
	return processContainer(statsapi.SystemContainerKubelet, p.started, t, proc, rate), true
}

// imageFs is the runtime's image filesystem (the first the runtime reports, as upstream) and
// container filesystem (its own entry when the runtime reports one, else the image
// filesystem's), each with the size of the filesystem holding its mountpoint.
func (p *Provider) imageFs(ctx context.Context, ps *pass) (image, container *statsapi.FsStats, err error) {
	resp, err := p.images.ImageFsInfo(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("stats: image filesystem info: %w", err)
	}
	if len(resp.GetImageFilesystems()) == 0 {
		return nil, nil, errors.New("stats: the runtime reports no image filesystem")
	}
	image = p.runtimeFs(ps, resp.GetImageFilesystems()[0])
	container = image
	if cfs := resp.GetContainerFilesystems(); len(cfs) > 0 {
		container = p.runtimeFs(ps, cfs[0])
	}
	return image, container, nil
}

func (p *Provider) runtimeFs(ps *pass, u *runtimeapi.FilesystemUsage) *statsapi.FsStats {
	out := &statsapi.FsStats{
		Time:       unixNano(u.GetTimestamp()),
		UsedBytes:  value(u.GetUsedBytes(), false),
		InodesUsed: value(u.GetInodesUsed(), false),
	}
	if mp := u.GetFsId().GetMountpoint(); mp != "" {
		withCapacity(out, p.statfs(ps, mp))
	}
	return out
}

// podsCgroup is the cgroup of all pods as the cgroup driver names it.
func (p *Provider) podsCgroup() string {
	if p.names == nil {
		return p.cfg.CgroupRoot
	}
	return p.names.Literal(p.cfg.CgroupRoot)
}
