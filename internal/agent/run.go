package agent

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/cgroups"
	"github.com/nodelet/nodelet/internal/cri"
	"github.com/nodelet/nodelet/internal/metrics"
	"github.com/nodelet/nodelet/internal/pleg"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/syncloop"
)

// run starts the components in order and blocks until ctx ends and all of them have stopped:
// the API watches, the servers and the pod sources at once; once the runtime answers, the
// runtime's status, the node status, the garbage collectors, the eviction manager, the PLEG,
// the removals and the sync loop.
func (n *node) run(ctx context.Context) error {
	cfg, deps, cl := n.cfg, n.deps, n.cl
	var g group
	defer g.wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer n.client.Close()
	if cl != nil {
		defer cl.stopEvents()
		cl.start(ctx, &g, cfg, deps, n.mux)
	}
	for _, s := range n.servers {
		g.start(s.name, func() error { return s.run(ctx) })
	}
	startSources(ctx, &g, cfg, deps, n.mux)
	if err := startOOMWatcher(ctx, &g, deps.Clock, n.recorder); err != nil {
		return err
	}

	if !waitForRuntime(ctx, n.client, deps.Clock, n.rs) {
		return nil // ctx ended while waiting for the runtime
	}
	systemdRunning := cgroups.SystemdRunning
	if deps.SystemdRunning != nil {
		systemdRunning = deps.SystemdRunning
	}
	driver, err := checkCgroupDriver(ctx, n.client, cfg.CgroupDriver, systemdRunning())
	if err != nil {
		return err
	}
	n.cgroupNames.UseDriver(driver)
	if err := n.qos.Start(); err != nil {
		return err
	}
	g.start("QoS cgroups", func() error { n.qos.Run(ctx); return nil })
	n.rs.update(ctx, n.client)
	_, n.checks.Handlers = n.rs.RuntimeFeatures()
	g.start("runtime status", func() error { n.rs.run(ctx, n.client, deps.Clock, 5*time.Second); return nil })
	if cl != nil {
		cl.startNodeStatus(ctx, &g, deps)
		cl.startStatusSync(ctx, &g)
	}
	g.start("container log rotation", func() error { n.logs.Run(ctx); return nil })
	g.start("image garbage collection", func() error { n.images.Run(ctx); return nil })
	defer n.probes.Stop()
	defer n.workers.Stop()
	g.start("container garbage collection", func() error { n.containers.Run(ctx); return nil })
	g.start("eviction manager", func() error { n.evictions.Run(ctx); return nil })
	g.start("node shutdown manager", func() error { n.shutdown.Run(ctx); return nil })
	n.relister.Start(ctx)
	g.start("checkpoint", func() error { n.keeper.Run(ctx); return nil })
	g.start("pod cleanup", func() error { n.dispatcher.Run(ctx); return nil })
	sources := cfg.Sources()
	klog.InfoS("Starting the sync loop", "node", cfg.NodeName, "hostIPs", n.facts.hostIPs, "sources", sources)
	syncloop.Run(ctx, syncloop.Config{
		Clock: deps.Clock, SyncPeriod: time.Second, HousekeepingPeriod: 2 * time.Second,
		Updates: n.mux.Updates(), PLEG: n.relister.Watch(), Queue: n.queue, Runtime: n.rs,
		SourcesReady: func() bool { return n.mux.SeenAllSources(sources...) },
		ProbeResults: n.probes.Updates(),
		Finished:     n.finished,
		Handler:      n.dispatcher,
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

// checkCgroupDriver asks the runtime for its cgroup driver (CRI RuntimeConfig) and decides the
// one nodelet uses (cgroups.Driver), as upstream's getCgroupDriverFromCRI: a runtime that does
// not implement RuntimeConfig leaves the configured one. A driver nodelet cannot use ends the
// start with an error that says what to change.
func checkCgroupDriver(ctx context.Context, c *cri.Client, configured string, systemdRunning bool) (string, error) {
	fromRuntime := ""
	rc, err := c.RuntimeConfig(ctx)
	switch {
	case status.Code(err) == codes.Unimplemented:
		klog.InfoS("The container runtime does not implement RuntimeConfig; using cgroupDriver from the configuration", "cgroupDriver", configured)
	case err != nil:
		return "", fmt.Errorf("ask the container runtime for its cgroup driver (RuntimeConfig): %w", err)
	case rc.GetLinux() != nil:
		switch d := rc.GetLinux().GetCgroupDriver(); d {
		case runtimeapi.CgroupDriver_SYSTEMD:
			fromRuntime = cgroups.DriverSystemd
		case runtimeapi.CgroupDriver_CGROUPFS:
			fromRuntime = cgroups.DriverCgroupfs
		default:
			return "", fmt.Errorf("the container runtime returned an unknown cgroup driver %d", d)
		}
	}
	driver, err := cgroups.Driver(configured, fromRuntime, systemdRunning)
	if err != nil {
		return "", err
	}
	if fromRuntime != "" {
		klog.InfoS("Using cgroup driver setting received from the CRI runtime", "cgroupDriver", driver)
		if configured != driver {
			klog.InfoS("The configured cgroupDriver is not the container runtime's; the runtime's is used, as upstream does", "cgroupDriver", configured, "runtime", driver)
		}
	}
	return driver, nil
}

// waitForRuntime asks the runtime for its version, retrying with back-off (1 s doubling to
// 30 s), until it answers (true) or ctx ends (false). Meanwhile the runtime health check says
// why the node is not ready.
func waitForRuntime(ctx context.Context, c *cri.Client, clk clock.Clock, rs *runtimeState) bool {
	backOff := time.Second
	for {
		err := c.Ready(ctx, 10*time.Second)
		if err == nil {
			v := c.Version()
			klog.InfoS("Connected to the container runtime", "endpoint", c.Endpoint(), "runtime", v.GetRuntimeName(), "version", v.GetRuntimeVersion())
			return true
		}
		rs.set(fmt.Errorf("cannot reach the container runtime: %w", err))
		klog.ErrorS(err, "Cannot reach the container runtime; check that it runs and that --container-runtime-endpoint points at its socket", "endpoint", c.Endpoint(), "retryIn", backOff)
		select {
		case <-ctx.Done():
			return false
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
