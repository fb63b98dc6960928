package stats

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/stats/host"
)

// Provider assembles the kubelet's stats summary from the host (cgroups, /proc, statfs) and the
// CRI runtime. It is safe for concurrent use.
type Provider struct {
	cfg     Config
	host    *host.Reader
	runtime Runtime
	images  ImageService
	clock   clock.PassiveClock
	names   CgroupNames // nil: cgroupfs

	started  time.Time // the "kubelet" system container's start time
	bootTime time.Time
	rates    *rateTracker
	volumes  *volumeCache
	// noSandboxStats is set once the runtime answered Unimplemented to ListPodSandboxStats.
	noSandboxStats atomic.Bool
}

// New returns a Provider. It reads the boot time and takes a first CPU sample of the node and
// the system containers, so that the first summary already has their usageNanoCores.
func New(cfg Config, deps Deps) (*Provider, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	if err := deps.setDefaults(); err != nil {
		return nil, err
	}
	p := &Provider{
		cfg:     cfg,
		host:    host.NewReader(cfg.Root),
		runtime: deps.Runtime,
		images:  deps.Images,
		clock:   deps.Clock,
		names:   deps.CgroupNames,
		started: deps.Clock.Now(),
		rates:   newRateTracker(deps.Clock, cfg.MinCPUSampleInterval, rateCacheAge),
		volumes: &volumeCache{clock: deps.Clock, age: cfg.VolumeStatsAge, entries: make(map[string]volumeEntry)},
	}
	bt, err := p.host.BootTime()
	if err != nil {
		klog.InfoS("Cannot read the boot time; the node's startTime in the stats summary will be zero", "err", err)
	}
	p.bootTime = bt
	if _, err := p.nodeCgroup(); err != nil {
		klog.InfoS("Cannot read the root cgroup; the stats summary will fail until it can", "err", err)
	}
	p.systemContainers(false)
	return p, nil
}

// Summary is /stats/summary: the node (CPU, memory, swap, IO pressure, network, nodefs, image
// and container filesystems, task limits, system containers) and every pod with a ready sandbox
// (CPU, memory, swap, network, IO, processes, containers with rootfs and logs, volumes,
// ephemeral storage).
func (p *Provider) Summary(ctx context.Context) (*statsapi.Summary, error) {
	node, err := p.nodeCgroup()
	if err != nil {
		return nil, err
	}
	now := p.clock.Now()
	rootFs, err := p.host.Statfs(p.cfg.RootDir)
	if err != nil {
		return nil, fmt.Errorf("stats: nodefs: %w", err)
	}
	ps := &pass{now: now, rootFs: rootFs, fs: make(map[string]*host.FsInfo)}
	imageFs, containerFs, err := p.imageFs(ctx, ps)
	if err != nil {
		return nil, err
	}
	pods, err := p.podStats(ctx, ps, true)
	if err != nil {
		return nil, fmt.Errorf("stats: pods: %w", err)
	}
	ifs, netErr := p.host.NetDev()
	if netErr != nil {
		klog.ErrorS(netErr, "Cannot read the node's network interfaces; the summary leaves them out")
	}
	n := statsapi.NodeStats{
		NodeName:         p.cfg.NodeName,
		SystemContainers: p.systemContainers(true),
		StartTime:        metav1.NewTime(p.bootTime),
		CPU:              node.CPU,
		Memory:           node.Memory,
		IO:               node.IO,
		Fs:               nodeFs(now, rootFs),
		Runtime:          &statsapi.RuntimeStats{ImageFs: imageFs, ContainerFs: containerFs},
		Rlimit:           rlimit(now, p.host.Rlimit()),
		Swap:             node.Swap,
	}
	if netErr == nil {
		n.Network = nodeNetwork(now, ifs)
	}
	p.rates.prune()
	p.volumes.prune()
	return &statsapi.Summary{Node: n, Pods: pods}, nil
}

// CPUAndMemorySummary is the lighter summary behind /metrics/resource (upstream's
// GetCPUAndMemoryStats): the node's and system containers' CPU, memory and swap, and the pods'
// and their containers', every missing container value 0.
func (p *Provider) CPUAndMemorySummary(ctx context.Context) (*statsapi.Summary, error) {
	node, err := p.nodeCgroup()
	if err != nil {
		return nil, err
	}
	ps := &pass{now: p.clock.Now(), fs: make(map[string]*host.FsInfo)}
	pods, err := p.podStats(ctx, ps, false)
	if err != nil {
		return nil, fmt.Errorf("stats: pods: %w", err)
	}
	p.rates.prune()
	return &statsapi.Summary{
		Node: statsapi.NodeStats{
			NodeName:         p.cfg.NodeName,
			SystemContainers: p.systemContainers(false),
			StartTime:        metav1.NewTime(p.bootTime),
			CPU:              node.CPU,
			Memory:           node.Memory,
			Swap:             node.Swap,
		},
		Pods: pods,
	}, nil
}

// ImageFsStats is the runtime's image filesystem with its capacity and free space (upstream's
// ImageFsStats), for image garbage collection.
func (p *Provider) ImageFsStats(ctx context.Context) (*statsapi.FsStats, error) {
	ps := &pass{now: p.clock.Now(), fs: make(map[string]*host.FsInfo)}
	image, _, err := p.imageFs(ctx, ps)
	return image, err
}

// HasDedicatedImageFs says the runtime's image filesystem is another filesystem than the one
// holding the root directory (upstream's HasDedicatedImageFs, which compares devices).
func (p *Provider) HasDedicatedImageFs(ctx context.Context) (bool, error) {
	resp, err := p.images.ImageFsInfo(ctx)
	if err != nil {
		return false, fmt.Errorf("stats: image filesystem info: %w", err)
	}
	fss := resp.GetImageFilesystems()
	if len(fss) == 0 || fss[0].GetFsId().GetMountpoint() == "" {
		return false, fmt.Errorf("stats: the runtime reports no image filesystem mountpoint")
	}
	return host.DifferentDevices(fss[0].GetFsId().GetMountpoint(), p.cfg.RootDir)
}
