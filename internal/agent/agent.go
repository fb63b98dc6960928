package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/admission"
	"github.com/nodelet/nodelet/internal/allocation"
	"github.com/nodelet/nodelet/internal/containergc"
	"github.com/nodelet/nodelet/internal/cri"
	"github.com/nodelet/nodelet/internal/eviction"
	"github.com/nodelet/nodelet/internal/imagegc"
	"github.com/nodelet/nodelet/internal/lifecycle"
	"github.com/nodelet/nodelet/internal/logrotation"
	"github.com/nodelet/nodelet/internal/metrics"
	"github.com/nodelet/nodelet/internal/pleg"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/podmanager"
	"github.com/nodelet/nodelet/internal/podsync"
	"github.com/nodelet/nodelet/internal/podworkers"
	"github.com/nodelet/nodelet/internal/prober"
	"github.com/nodelet/nodelet/internal/runtime"
	"github.com/nodelet/nodelet/internal/runtime/criconfig"
	"github.com/nodelet/nodelet/internal/server"
	"github.com/nodelet/nodelet/internal/stats"
	"github.com/nodelet/nodelet/internal/statusmanager"
	"github.com/nodelet/nodelet/internal/syncloop"
	"github.com/nodelet/nodelet/internal/volumes"
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
	// Profiling serves Go's profiles under /debug/pprof/ (enableProfilingHandler) on the kubelet
	// API, and on the read-only API when it listens on loopback.
	Profiling bool
	// StaticPodPath is a manifest directory or file; empty disables the file source.
	StaticPodPath      string
	FileCheckFrequency time.Duration
	// StaticPodURL is polled for a Pod or PodList; empty disables the HTTP source.
	StaticPodURL        string
	StaticPodURLHeader  http.Header
	HTTPCheckFrequency  time.Duration
	SyncFrequency       time.Duration
	ClusterDNS          []string
	ClusterDomain       string
	ResolvConf          string
	SerializeImagePulls bool
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
	// Cluster enables API-server mode when Cluster.Kubeconfig is set.
	Cluster ClusterConfig
}

// Deps are the agent's collaborators.
type Deps struct {
	Clock    clock.WithTicker
	Reporter podconfig.Reporter
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

// Run builds every component, starts them in order and blocks until ctx ends and all of them
// have stopped.
func Run(ctx context.Context, cfg Config, deps Deps) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if deps.Clock == nil || deps.Reporter == nil {
		return errors.New("agent: Clock and Reporter are required")
	}
	facts, err := readNodeFacts(cfg.NodeIP)
	if err != nil {
		return err
	}
	sysctls, err := admission.NewSysctlAllowlist(append(admission.SafeSysctls(facts.kernel), cfg.AllowedUnsafeSysctls...))
	if err != nil {
		return fmt.Errorf("allowedUnsafeSysctls: %w", err)
	}
	pressure := &latePressure{}
	checks := admission.Checks{Sysctls: sysctls, AppArmorHostErr: facts.appArmorErr, Pressure: pressure}
	for _, dir := range []string{cfg.RootDir, cfg.PodLogsDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", dir, err)
		}
	}
	var g group
	defer g.wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	pods := podmanager.New()
	var desired syncloop.Desired = pods
	statuses := statusmanager.New(pods)
	mux := podconfig.NewMux(deps.Clock, deps.Reporter, 50)
	rs := newRuntimeState()
	plegHealth := &lateCheck{name: "pleg", err: errors.New("pleg has not started: nodelet is waiting for the container runtime")}
	store := newRecorder(deps.Clock, cfg.NodeName)
	recorder := &teeRecorder{local: store, nodeName: cfg.NodeName}
	queue := syncloop.NewWorkQueue(deps.Clock)
	nodeFor := standaloneNode(cfg, facts, rs)
	var cl *cluster
	if cfg.Cluster.Kubeconfig != "" {
		if cl, err = newCluster(cfg, deps, pods, queue); err != nil {
			return err
		}
		defer cl.stopEvents()
		recorder.api = cl.events
		desired = registeringDesired{Manager: pods, objects: cl.objects}
		g.start("api objects", func() error { cl.objects.Run(ctx); return nil })
		g.start("services", func() error { cl.services.Run(ctx); return nil })
		g.start("runtime classes", func() error { cl.classes.Run(ctx); return nil })
		checks.RuntimeClasses = cl.classes
		cl.startAPISource(ctx, &g, cfg, deps, mux)
	}
	km, probeMetrics := metrics.New(deps.Clock), metrics.NewProbes()
	targets, summary := &runtimeTargets{pods: pods}, &lateStats{}
	resourceMetrics := prometheus.NewRegistry()
	resourceMetrics.MustRegister(stats.NewResourceMetricsCollector(summary))
	serverDeps := server.Deps{Pods: statuses, Checks: []server.HealthCheck{rs, plegHealth},
		Logs: logLocator{podLogsDir: cfg.PodLogsDir, pods: pods}, Events: store, Summary: summary,
		Metrics: map[string]http.Handler{"/metrics": km.Handler(), "/metrics/probes": probeMetrics.Handler(),
			"/metrics/resource": metrics.Handler(resourceMetrics)},
		Streams: &server.Streams{Targets: targets, Streaming: targets, Runner: targets, RunningPods: targets}}
	if cfg.ReadOnlyAddress != "" {
		srv, err := server.New(server.Config{Address: cfg.ReadOnlyAddress, Clock: deps.Clock, Profiling: cfg.Profiling}, serverDeps)
		if err != nil {
			return err
		}
		g.start("read-only API", func() error { return srv.Run(ctx) })
	}
	if cl != nil && cfg.Cluster.KubeletAPI.Address != "" {
		if err := cl.startKubeletAPI(ctx, &g, cfg, deps, serverDeps, facts.hostIPs); err != nil {
			return err
		}
	}
	startSources(ctx, &g, cfg, deps, mux)
	if err := startOOMWatcher(ctx, &g, deps.Clock, recorder); err != nil {
		return err
	}

	client, err := dialRuntime(ctx, cfg.RuntimeEndpoint, deps.Clock, rs, km.DialOptions()...)
	if err != nil {
		return nil //nolint:nilerr // ctx ended while waiting for the runtime
	}
	defer client.Close()
	rs.update(ctx, client)
	_, checks.Handlers = rs.RuntimeFeatures()
	g.start("runtime status", func() error { rs.run(ctx, client, deps.Clock, 5*time.Second); return nil })
	if cl != nil {
		ready := func() []error {
			var errs []error
			for _, c := range []server.HealthCheck{rs, plegHealth} {
				if err := c.Check(); err != nil {
					errs = append(errs, err)
				}
			}
			return errs
		}
		if err := cl.startNodeStatus(ctx, &g, cfg, deps, client, rs, ready, pressure); err != nil {
			return err
		}
		nodeFor = cl.admissionNode(nodeFor)
	}

	if cfg.LogRotation == (logrotation.Config{}) {
		cfg.LogRotation = logrotation.DefaultConfig()
	}
	logs, err := logrotation.New(cfg.LogRotation, logrotation.Deps{Runtime: client, Clock: deps.Clock})
	if err != nil {
		return err
	}
	g.start("container log rotation", func() error { logs.Run(ctx); return nil })

	volCfg := volumes.Config{RootDir: cfg.RootDir, ClusterDomain: cfg.ClusterDomain, Clock: deps.Clock,
		NodeAllocatableMemory: facts.memoryCapacity, NodeAllocatable: facts.allocatable, SubPathEnv: subPathEnv(facts, nil, nil)}
	rtDeps := runtime.Deps{Sandboxes: client, Containers: client, Reader: client, Images: client,
		Recorder: recorder, Clock: deps.Clock, Hooks: lifecycle.New(deps.Clock, client), Logs: logs}
	if cl != nil {
		volCfg.Objects, volCfg.SubPathEnv = cl.objects, subPathEnv(facts, cl.objects, cl.services)
		rtDeps.Objects, rtDeps.Services, rtDeps.RuntimeClasses = cl.objects, cl.services, cl.classes
	}
	vols := volumes.New(volCfg, volumes.NewSystemMounter())
	rtDeps.Volumes = vols
	alloc, err := allocation.New(allocation.Config{RootDir: cfg.RootDir}, allocation.Deps{
		Admission: nodeAdmission{node: func() *v1.Node { return nodeFor() }, checks: checks, statuses: statuses, recorder: recorder},
		Recorder:  recorder, Clock: deps.Clock})
	if err != nil {
		return err
	}
	rtDeps.Actuations = alloc
	resolv, _ := os.ReadFile(cfg.ResolvConf)
	rt, err := runtime.New(runtime.Config{
		NodeName: cfg.NodeName, PodLogsDir: cfg.PodLogsDir, CgroupRoot: "/kubepods",
		ClusterDNS: criconfig.ClusterDNS{Servers: cfg.ClusterDNS, Domain: cfg.ClusterDomain},
		HostResolv: criconfig.ParseResolvConf(resolv), HostIPs: facts.hostIPs,
		MemoryCapacity: facts.memoryCapacity, Allocatable: facts.allocatable, SerializeImagePulls: cfg.SerializeImagePulls,
		CgroupFSRoot: "/sys/fs/cgroup", Runtime: client.Version(), HostMaskedPaths: facts.maskedPaths,
		Seccomp: criconfig.Seccomp{Default: cfg.SeccompDefault, Root: filepath.Join(cfg.RootDir, "seccomp")}, DeadContainers: cfg.ContainerGC,
	}, rtDeps)
	if err != nil {
		return err
	}
	targets.set(rt, client)
	provider, err := stats.New(stats.Config{NodeName: cfg.NodeName, RootDir: cfg.RootDir, PodLogsDir: cfg.PodLogsDir, CgroupRoot: "/kubepods",
		VolumeStatsAge: cfg.VolumeStatsAggPeriod}, stats.Deps{Runtime: client, Images: client, Clock: deps.Clock})
	if err != nil {
		return err
	}
	summary.set(provider)
	images, err := imagegc.New(cfg.ImageGC, imagegc.Deps{Images: client, Containers: client, Fs: provider, Recorder: recorder, Clock: deps.Clock})
	if err != nil {
		return fmt.Errorf("image garbage collection: %w", err)
	}
	g.start("image garbage collection", func() error { images.Run(ctx); return nil })
	km.WatchRuntime(rt)
	cache := pleg.NewCache()
	relister, err := newPLEG(cfg, deps, rt, cache, client, km)
	if err != nil {
		return err
	}
	plegHealth.set(func() error { _, err := relister.Healthy(); return err })
	probes := prober.NewManager(prober.Config{Clock: deps.Clock}, prober.Deps{Statuses: statuses, Exec: client, Recorder: recorder, Metrics: probeMetrics})
	defer probes.Stop()
	syncer := podsync.New(podsync.Config{HostIPs: facts.hostIPs}, rt, statuses, probes, deps.Clock).WithMetrics(km).WithAllocations(alloc).WithVolumes(vols)
	if cl != nil {
		syncer = syncer.WithMirrors(cl.mirrors)
	}
	workers := podworkers.New(podworkers.Config{Clock: deps.Clock, ResyncInterval: cfg.SyncFrequency, JitterFactor: 0.5},
		podworkers.Deps{Syncer: syncer, Cache: cache, Requeuer: queue, Metrics: km})
	defer workers.Stop()
	containers, err := newContainerGC(cfg, deps, client, rt, workers, recorder, mux)
	if err != nil {
		return err
	}
	g.start("container garbage collection", func() error { containers.Run(ctx); return nil })
	dispatcher := syncloop.NewDispatcher(desired, workers, rt, vols, statuses, probes).WithAdmission(alloc).WithResizer(alloc).WithHousekeepers(rt)
	if cl != nil {
		if err := cl.startStatusSync(ctx, &g, deps, statuses, workers); err != nil {
			return err
		}
		dispatcher.WithHousekeepers(cl.mirrors)
	}
	evictions, err := eviction.New(cfg.Eviction, eviction.Deps{Clock: deps.Clock, Summary: provider, Pods: dispatcher, Metrics: km,
		Killer: podEvicter{workers}, Recorder: recorder, ImageGC: eviction.ReclaimFunc(images.DeleteUnusedImages),
		ContainerGC: eviction.ReclaimFunc(containers.DeleteAllUnusedContainers)})
	if err != nil {
		return err
	}
	pressure.m.Store(evictions)
	g.start("eviction manager", func() error { evictions.Run(ctx); return nil })
	relister.Start(ctx)
	sources := cfg.Sources()
	klog.InfoS("Starting the sync loop", "node", cfg.NodeName, "hostIPs", facts.hostIPs, "sources", sources)
	syncloop.Run(ctx, syncloop.Config{
		Clock: deps.Clock, SyncPeriod: time.Second, HousekeepingPeriod: 2 * time.Second,
		Updates: mux.Updates(), PLEG: relister.Watch(), Queue: queue, Runtime: rs,
		SourcesReady: func() bool { return mux.SeenAllSources(sources...) },
		ProbeResults: probes.Updates(),
		Handler:      dispatcher,
	})
	return nil
}

func startSources(ctx context.Context, g *group, cfg Config, deps Deps, mux *podconfig.Mux) {
	if cfg.StaticPodPath != "" {
		klog.InfoS("Watching manifest path", "path", cfg.StaticPodPath, "period", cfg.FileCheckFrequency)
		g.start("file source", func() error {
			return podconfig.RunFileSource(ctx, podconfig.FileConfig{Path: cfg.StaticPodPath, NodeName: cfg.NodeName,
				Period: cfg.FileCheckFrequency, Clock: deps.Clock, Sink: mux, Reporter: deps.Reporter})
		})
	}
	if cfg.StaticPodURL != "" {
		klog.InfoS("Polling manifest URL", "url", cfg.StaticPodURL, "period", cfg.HTTPCheckFrequency)
		g.start("http source", func() error {
			return podconfig.RunHTTPSource(ctx, podconfig.HTTPConfig{URL: cfg.StaticPodURL, Header: cfg.StaticPodURLHeader,
				NodeName: cfg.NodeName, Period: cfg.HTTPCheckFrequency, Clock: deps.Clock, Sink: mux, Reporter: deps.Reporter})
		})
	}
	if cfg.StaticPodPath == "" && cfg.StaticPodURL == "" {
		klog.InfoS("No pod sources configured: set --pod-manifest-path or --manifest-url (staticPodPath, staticPodURL)")
	}
}

// dialRuntime connects to the CRI runtime, retrying with back-off (1 s doubling to 30 s) until
// it answers or ctx ends.
func dialRuntime(ctx context.Context, endpoint string, clk clock.Clock, rs *runtimeState, opts ...grpc.DialOption) (*cri.Client, error) {
	backOff := time.Second
	for {
		c, err := cri.Dial(ctx, endpoint, 10*time.Second, opts...)
		if err == nil {
			v := c.Version()
			klog.InfoS("Connected to the container runtime", "endpoint", endpoint, "runtime", v.GetRuntimeName(), "version", v.GetRuntimeVersion())
			return c, nil
		}
		rs.set(fmt.Errorf("cannot reach the container runtime: %w", err))
		klog.ErrorS(err, "Cannot reach the container runtime; check that it runs and that --container-runtime-endpoint points at its socket", "endpoint", endpoint, "retryIn", backOff)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-clk.After(backOff):
		}
		backOff = min(2*backOff, 30*time.Second)
	}
}

// relister is the PLEG the sync loop and the health check use: pleg.Evented or pleg.Generic.
type relister interface {
	Start(ctx context.Context)
	Watch() <-chan *pleg.Event
	Healthy() (bool, error)
}

// newPLEG is the evented PLEG (CRI container events, falling back to relisting every second
// when the runtime has no event stream), or the relisting one when EventedPLEG is off.
func newPLEG(cfg Config, deps Deps, rt pleg.Runtime, cache *pleg.Cache, client *cri.Client, km *metrics.Kubelet) (relister, error) {
	base := pleg.Config{Clock: deps.Clock, Runtime: rt, Cache: cache, Metrics: km}
	if cfg.DisableEventedPLEG {
		klog.InfoS("Evented PLEG is off: relisting the runtime every second", "relistPeriod", pleg.DefaultRelistPeriod)
		return pleg.New(base)
	}
	return pleg.NewEvented(pleg.EventedConfig{Config: base, Stream: client, StreamMetrics: km})
}

// lateCheck is a health check whose real check is known only once its component is built.
type lateCheck struct {
	name  string
	mu    sync.Mutex
	err   error
	check func() error
}

func (c *lateCheck) Name() string { return c.name }

func (c *lateCheck) Check() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.check != nil {
		return c.check()
	}
	return c.err
}

func (c *lateCheck) set(check func() error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.check = check
}
