package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/klog/v2"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/cgroups"
	"github.com/nodelet/nodelet/internal/containergc"
	"github.com/nodelet/nodelet/internal/eviction"
	"github.com/nodelet/nodelet/internal/imagegc"
	"github.com/nodelet/nodelet/internal/kubeclient"
	"github.com/nodelet/nodelet/internal/logrotation"
	"github.com/nodelet/nodelet/internal/nodeshutdown"
	"github.com/nodelet/nodelet/internal/podconfig"
)

// Config is what the agent needs to know, already resolved from flags and the config file.
type Config struct {
	NodeName string
	NodeIP   string
	RootDir  string
	// PodLogsDir holds the CRI logs (podLogsDir, /var/log/pods).
	PodLogsDir      string
	RuntimeEndpoint string
	// ReadOnlyAddress is where the read-only API listens ("" disables it).
	ReadOnlyAddress string
	// LocalSocket is the local API's unix socket (<root-dir>/nodelet.sock: exec, attach and
	// everything the kubelet API serves, to whoever may open the socket); "" disables it.
	LocalSocket string
	// Profiling serves Go's profiles under /debug/pprof/ (enableProfilingHandler) on the kubelet
	// API, and on the read-only API when it listens on loopback.
	Profiling bool
	// StaticPodPath is a manifest directory or file; empty disables the file source.
	StaticPodPath      string
	FileCheckFrequency time.Duration
	// StaticPodURL is polled for a Pod or PodList; empty disables the HTTP source.
	StaticPodURL       string
	StaticPodURLHeader http.Header
	HTTPCheckFrequency time.Duration
	SyncFrequency      time.Duration
	ClusterDNS         []string
	ClusterDomain      string
	ResolvConf         string
	// CredentialProviders are the image credential provider plugins (credentialplugin.ReadConfig
	// of --image-credential-provider-config), their binaries in CredentialProviderBinDir.
	CredentialProviders      []kubeletconfigv1.CredentialProvider
	CredentialProviderBinDir string
	SerializeImagePulls      bool
	// ImageGC is the image garbage collection policy (imageGC*ThresholdPercent,
	// imageMinimumGCAge, imageMaximumGCAge, --image-gc-period).
	ImageGC imagegc.Policy
	// ContainerGC is the container garbage collection policy (--minimum-container-ttl-duration,
	// --maximum-dead-containers-per-container, --maximum-dead-containers; nil: upstream's
	// defaults), ContainerGCPeriod its period (--container-gc-period; zero: 1 minute).
	ContainerGC       *containergc.Policy
	ContainerGCPeriod time.Duration
	// SeccompDefault gives RuntimeDefault to containers that set no seccomp profile.
	SeccompDefault bool
	// PodsCgroup is the cgroup all pods are under, <cgroupRoot>/kubepods ("/kubepods" when
	// empty); CgroupDriver is the configured driver (the runtime's wins at start).
	PodsCgroup, CgroupDriver string
	// FailCgroupV1 refuses to start on a host using cgroup v1 (failCgroupV1; upstream's default
	// is true, the zero value here is false).
	FailCgroupV1 bool
	// SingleProcessOOMKill (singleProcessOOMKill; nil: upstream's default, false on cgroup v2)
	// keeps the kernel's OOM killer to one process of a container: without it, on cgroup v2,
	// containers get memory.oom.group. Refused when false on cgroup v1.
	SingleProcessOOMKill *bool
	// PodPidsLimit is each pod cgroup's pids.max (podPidsLimit; -1 or 0: none).
	PodPidsLimit int64
	// EnforceNodeAllocatable is what node allocatable enforces (enforceNodeAllocatable; nil:
	// upstream's default, pods), on KubeReservedCgroup and SystemReservedCgroup for the
	// reservations (kubeReservedCgroup, systemReservedCgroup, as the cgroup driver names them).
	EnforceNodeAllocatable                   []string
	KubeReservedCgroup, SystemReservedCgroup string
	// ShutdownPeriods are graceful node shutdown's priority bands (shutdownGracePeriod,
	// shutdownGracePeriodCriticalPods or shutdownGracePeriodByPodPriority; nodeshutdown.Periods);
	// none turns it off.
	ShutdownPeriods []nodeshutdown.Period
	// AllowedUnsafeSysctls are the sysctls and patterns (net.core.*) pods may set beyond the
	// safe ones (allowedUnsafeSysctls).
	AllowedUnsafeSysctls []string
	// DisableEventedPLEG relists every second instead of following the runtime's container
	// events (featureGates: EventedPLEG: false).
	DisableEventedPLEG bool
	// VolumeStatsAggPeriod is how long a volume's measured disk usage is reused
	// (volumeStatsAggPeriod; zero: upstream's 1 minute).
	VolumeStatsAggPeriod time.Duration
	// Eviction is the eviction policy (evictionHard, evictionSoft...).
	Eviction eviction.Config
	// LogRotation is the container log rotation policy; zero: upstream's defaults.
	LogRotation logrotation.Config
	// CgroupFSRoot is where the cgroup hierarchies are mounted ("/sys/fs/cgroup" when empty):
	// housekeeping removes the cgroups of pods that are gone under it.
	CgroupFSRoot string
	// Cluster enables API-server mode when Cluster.Kubeconfig is set.
	Cluster ClusterConfig
}

// Deps are the agent's collaborators.
type Deps struct {
	Clock    clock.WithTicker
	Reporter podconfig.Reporter
	// Clients and HeartbeatClients, when set, are the API clients in cluster mode instead of
	// those built from Cluster.Kubeconfig (tests give fakes).
	Clients, HeartbeatClients *kubeclient.Clients
	// Cgroups, when set, stands in for the host's cgroup file system (tests).
	Cgroups cgroups.Writer
	// Logind, when set, connects to logind for graceful node shutdown instead of the system bus
	// (tests).
	Logind func() (nodeshutdown.Logind, error)
	// SystemdRunning, when set, says whether systemd is the host's init instead of the host
	// itself (cgroups.SystemdRunning), for the cgroup driver check (tests).
	SystemdRunning func() bool
}

func (c Config) validate() error {
	switch {
	case c.NodeName == "":
		return errors.New("agent: NodeName is required")
	case c.RootDir == "" || c.PodLogsDir == "" || c.RuntimeEndpoint == "":
		return errors.New("agent: RootDir, PodLogsDir and RuntimeEndpoint are required")
	case c.StaticPodPath != "" && c.FileCheckFrequency <= 0:
		return fmt.Errorf("agent: fileCheckFrequency must be positive, got %v", c.FileCheckFrequency)
	case c.StaticPodURL != "" && c.HTTPCheckFrequency <= 0:
		return fmt.Errorf("agent: httpCheckFrequency must be positive, got %v", c.HTTPCheckFrequency)
	case c.SyncFrequency <= 0:
		return fmt.Errorf("agent: syncFrequency must be positive, got %v", c.SyncFrequency)
	}
	return nil
}

// Sources lists the pod sources the config enables, in the order they are started.
func (c Config) Sources() []string {
	var out []string
	if c.StaticPodPath != "" {
		out = append(out, podconfig.FileSource)
	}
	if c.StaticPodURL != "" {
		out = append(out, podconfig.HTTPSource)
	}
	if c.Cluster.Kubeconfig != "" {
		out = append(out, podconfig.APISource)
	}
	return out
}

// group runs components and waits for them.
type group struct{ wg sync.WaitGroup }

func (g *group) start(name string, run func() error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := run(); err != nil {
			klog.ErrorS(err, "Component stopped with an error", "component", name)
		}
	}()
}

// Run builds every component (newNode: nothing runs yet, the CRI client connects on first
// use), then starts them in order (node.run) and blocks until ctx ends and all of them have
// stopped.
//
// With --bootstrap-kubeconfig, the node's client certificate is first obtained (TLS bootstrap),
// which waits for the request's approval as upstream does.
func Run(ctx context.Context, cfg Config, deps Deps) error {
	if deps.Clients == nil {
		if err := bootstrap(ctx, cfg, deps.Clock); err != nil {
			return err
		}
	}
	n, err := newNode(cfg, deps)
	if err != nil {
		return err
	}
	return n.run(ctx)
}
