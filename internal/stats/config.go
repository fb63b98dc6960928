package stats

import (
	"context"
	"errors"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
)

// Runtime is the part of the CRI runtime service the provider reads. *cri.Client and cri-api's
// FakeRuntimeService satisfy it.
type Runtime interface {
	ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error)
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
	ListContainerStats(ctx context.Context, filter *runtimeapi.ContainerStatsFilter) ([]*runtimeapi.ContainerStats, error)
	ListPodSandboxStats(ctx context.Context, filter *runtimeapi.PodSandboxStatsFilter) ([]*runtimeapi.PodSandboxStats, error)
}

// ImageService is the part of the CRI image service the provider reads. *cri.Client and
// cri-api's FakeImageService satisfy it.
type ImageService interface {
	ImageFsInfo(ctx context.Context) (*runtimeapi.ImageFsInfoResponse, error)
}

// Defaults of the Config fields.
const (
	DefaultRoot                 = "/"
	DefaultPodLogsDir           = "/var/log/pods"
	DefaultCgroupRoot           = "/kubepods"
	DefaultMinCPUSampleInterval = time.Second
	// DefaultVolumeStatsAge is upstream's --volume-stats-agg-period.
	DefaultVolumeStatsAge = time.Minute
	// rateCacheAge is how long a CPU sample of something not seen again is kept (upstream's
	// defaultCachePeriod of the CRI stats provider).
	rateCacheAge = 10 * time.Minute
)

// Config is what the provider reads and where.
type Config struct {
	// NodeName is reported as node.nodeName. Required.
	NodeName string
	// RootDir is the agent's --root-dir (pods/<uid>/volumes, pods/<uid>/etc-hosts); its
	// filesystem is the nodefs. Required.
	RootDir string
	// PodLogsDir holds the pods' CRI logs, <ns>_<name>_<uid>/<container>/N.log. Default
	// /var/log/pods.
	PodLogsDir string
	// CgroupRoot is the cgroup holding all pods (the "pods" system container). Default /kubepods.
	CgroupRoot string
	// KubeletCgroup, RuntimeCgroup and SystemCgroup are upstream's --kubelet-cgroups,
	// --runtime-cgroups and --system-cgroups: when set, the cgroup is reported as the system
	// container "kubelet", "runtime" and "misc". Without KubeletCgroup, "kubelet" is this
	// process, read from /proc/self.
	KubeletCgroup, RuntimeCgroup, SystemCgroup string
	// Root is where the host's tree is read: <Root>/proc, <Root>/sys/fs/cgroup and every host
	// path above. Default "/"; tests point it at a fake tree.
	Root string
	// MinCPUSampleInterval is the shortest window usageNanoCores is computed over: a summary
	// sooner than that after the previous sample reports the previous rate. Default 1s.
	MinCPUSampleInterval time.Duration
	// VolumeStatsAge is how long a volume's disk usage (a walk of its tree) is reused. Default
	// one minute, upstream's volume stats aggregation period.
	VolumeStatsAge time.Duration
}

// Deps are the provider's collaborators.
type Deps struct {
	// Runtime and Images are the CRI services (one *cri.Client serves both). Required.
	Runtime Runtime
	Images  ImageService
	// Clock stamps host readings and drives rate windows and caches. Default the real clock.
	Clock clock.PassiveClock
	// CgroupNames turns Config.CgroupRoot into the cgroup driver's name of it (/kubepods.slice
	// with systemd; cgroups.Layout). Optional: the name as it is (cgroupfs).
	CgroupNames CgroupNames
}

// CgroupNames is the cgroup driver's naming (cgroups.Layout).
type CgroupNames interface {
	Literal(name string) string
}

func (c *Config) setDefaults() error {
	if c.NodeName == "" || c.RootDir == "" {
		return errors.New("stats: NodeName and RootDir are required")
	}
	if c.PodLogsDir == "" {
		c.PodLogsDir = DefaultPodLogsDir
	}
	if c.CgroupRoot == "" {
		c.CgroupRoot = DefaultCgroupRoot
	}
	if c.Root == "" {
		c.Root = DefaultRoot
	}
	if c.MinCPUSampleInterval <= 0 {
		c.MinCPUSampleInterval = DefaultMinCPUSampleInterval
	}
	if c.VolumeStatsAge <= 0 {
		c.VolumeStatsAge = DefaultVolumeStatsAge
	}
	return nil
}

func (d *Deps) setDefaults() error {
	if d.Runtime == nil || d.Images == nil {
		return errors.New("stats: Deps.Runtime and Deps.Images are required")
	}
	if d.Clock == nil {
		d.Clock = clock.RealClock{}
	}
	return nil
}
