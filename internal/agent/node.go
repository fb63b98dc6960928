package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/admission"
	"github.com/nodelet/nodelet/internal/allocation"
	"github.com/nodelet/nodelet/internal/certificates"
	"github.com/nodelet/nodelet/internal/cgroups"
	"github.com/nodelet/nodelet/internal/checkpoint"
	"github.com/nodelet/nodelet/internal/containergc"
	"github.com/nodelet/nodelet/internal/credentialplugin"
	"github.com/nodelet/nodelet/internal/cri"
	"github.com/nodelet/nodelet/internal/events"
	"github.com/nodelet/nodelet/internal/eviction"
	"github.com/nodelet/nodelet/internal/imagegc"
	"github.com/nodelet/nodelet/internal/kuberuntime"
	"github.com/nodelet/nodelet/internal/kuberuntime/criconfig"
	"github.com/nodelet/nodelet/internal/lifecycle"
	"github.com/nodelet/nodelet/internal/logrotation"
	"github.com/nodelet/nodelet/internal/metrics"
	"github.com/nodelet/nodelet/internal/nodeshutdown"
	"github.com/nodelet/nodelet/internal/pleg"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/podmanager"
	"github.com/nodelet/nodelet/internal/podsync"
	"github.com/nodelet/nodelet/internal/podworkers"
	"github.com/nodelet/nodelet/internal/prober"
	"github.com/nodelet/nodelet/internal/server"
	"github.com/nodelet/nodelet/internal/stats"
	"github.com/nodelet/nodelet/internal/statusmanager"
	"github.com/nodelet/nodelet/internal/syncloop"
	"github.com/nodelet/nodelet/internal/volumes"
)

// node is the agent's components, wired. newNode builds them all before anything runs: the
// CRI client connects on its first call, so the servers get the real stats provider, stream
// targets and health checks from the start, and /healthz can say that the runtime is not
// ready. run starts them. It holds components, not pod state.
type node struct {
	cfg   Config
	deps  Deps
	facts nodeFacts

	client       *cri.Client
	rs           *runtimeState
	checks       *admission.Checks // Handlers are set once the runtime answered
	mux          *podconfig.Mux
	queue        *syncloop.WorkQueue
	store        *events.Store
	recorder     *teeRecorder
	km           *metrics.Kubelet
	probeMetrics *metrics.Probes
	cl           *cluster // nil in standalone mode

	pods       *podmanager.Manager
	statuses   *statusmanager.Manager
	logs       *logrotation.Manager
	rt         *kuberuntime.Manager
	provider   *stats.Provider
	images     *imagegc.Manager
	relister   relister
	probes     *prober.Manager
	syncer     *podsync.Syncer
	keeper     *checkpoint.Keeper
	workers    *podworkers.PodWorkers
	containers *containergc.Manager
	dispatcher *syncloop.Dispatcher
	evictions  *eviction.Manager
	shutdown   *nodeshutdown.Manager
	qos        *cgroups.QoSManager
	unified    bool // the host runs cgroup v2
	oomGroup   bool // containers get memory.oom.group (cgroups.OOMGroup)
	// cgroupNames names the pods' cgroups for the driver, the runtime's once it answered
	// (run sets it before anything makes a cgroup).
	cgroupNames *cgroups.Layout
	finished    chan types.UID // pods whose worker finished: the sync loop has them removed

	servers []runnable // the read-only API and, in cluster mode, the kubelet API
}

// cgroupSetter writes the pods' and QoS cgroups: the host's cgroup file system (unified: cgroup
// v2), or Deps.Cgroups in tests.
func (n *node) cgroupSetter() cgroups.Writer {
	if n.deps.Cgroups != nil {
		return n.deps.Cgroups
	}
	return cgroups.Manager{Root: n.cfg.CgroupFSRoot, Unified: n.unified, Names: n.cgroupNames}
}

// buildQoS is the manager of the pods' and QoS cgroups: node allocatable enforced (the
// capacity less kubeReserved and systemReserved on <cgroupRoot>/kubepods, the reservations on
// their cgroups), the QoS tiers' cpu shares from the dispatcher's active pods (read once the
// node runs).
func (n *node) buildQoS(setter cgroups.Writer) (*cgroups.QoSManager, error) {
	cfg := n.cfg
	enforce := cfg.EnforceNodeAllocatable
	if enforce == nil {
		enforce = []string{cgroups.EnforcePods}
	}
	return cgroups.NewQoSManager(cgroups.QoSConfig{PodsCgroup: cfg.PodsCgroup,
		Reservations: cgroups.Reservations{Enforce: enforce, Capacity: n.facts.allocatable,
			KubeReserved: cfg.Cluster.KubeReserved, SystemReserved: cfg.Cluster.SystemReserved,
			KubeReservedCgroup: cfg.KubeReservedCgroup, SystemReservedCgroup: cfg.SystemReservedCgroup}},
		cgroups.QoSDeps{Clock: n.deps.Clock, Cgroups: setter, Recorder: n.recorder, ActivePods: func() []*v1.Pod { return n.dispatcher.ActivePods() }})
}

// runnable is a server or loop the node starts.
type runnable struct {
	name string
	run  func(ctx context.Context) error
}

// newNode validates cfg and deps and builds every component. It reads the node's facts and
// the checkpoints under the root directory; it starts nothing.
func newNode(cfg Config, deps Deps) (*node, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if deps.Clock == nil || deps.Reporter == nil {
		return nil, errors.New("agent: Clock and Reporter are required")
	}
	if cfg.CgroupFSRoot == "" {
		cfg.CgroupFSRoot = "/sys/fs/cgroup"
	}
	if cfg.PodsCgroup == "" {
		cfg.PodsCgroup = "/kubepods"
	}
	// The cgroup version, read once: failCgroupV1 and singleProcessOOMKill check it, the cgroup
	// manager writes v1 or v2.
	var unified bool
	if cfg.FailCgroupV1 || cfg.SingleProcessOOMKill != nil || deps.Cgroups == nil {
		var err error
		if unified, err = cgroups.Unified(cfg.CgroupFSRoot); err != nil {
			return nil, err
		}
	}
	if err := cgroups.CheckVersion(cfg.FailCgroupV1, unified); err != nil {
		return nil, err
	}
	oomGroup, err := cgroups.OOMGroup(cfg.SingleProcessOOMKill, unified)
	if err != nil {
		return nil, err
	}
	if cfg.LogRotation == (logrotation.Config{}) {
		cfg.LogRotation = logrotation.DefaultConfig()
	}
	n := &node{cfg: cfg, deps: deps, unified: unified, oomGroup: oomGroup, cgroupNames: cgroups.NewLayout(cfg.PodsCgroup, cfg.CgroupDriver),
		rs: newRuntimeState(), finished: make(chan types.UID, 128)}
	if n.facts, err = readNodeFacts(cfg.NodeIP); err != nil {
		return nil, err
	}
	sysctls, err := admission.NewSysctlAllowlist(append(admission.SafeSysctls(n.facts.kernel), cfg.AllowedUnsafeSysctls...))
	if err != nil {
		return nil, fmt.Errorf("allowedUnsafeSysctls: %w", err)
	}
	n.checks = &admission.Checks{Sysctls: sysctls, AppArmorHostErr: n.facts.appArmorErr}
	for _, dir := range []string{cfg.RootDir, cfg.PodLogsDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", dir, err)
		}
	}
	n.pods = podmanager.New()
	n.statuses = statusmanager.New(n.pods)
	n.store = newRecorder(deps.Clock, cfg.NodeName)
	n.recorder = &teeRecorder{local: n.store, nodeName: cfg.NodeName}
	// A rejected manifest is also a node event, so `nodelet events` shows it beside the log.
	n.deps.Reporter = eventReporter{next: deps.Reporter, recorder: n.recorder}
	n.mux = podconfig.NewMux(deps.Clock, n.deps.Reporter, 50)
	n.queue = syncloop.NewWorkQueue(deps.Clock)
	n.km, n.probeMetrics = metrics.New(deps.Clock), metrics.NewProbes()
	if n.client, err = cri.New(cfg.RuntimeEndpoint, n.km.DialOptions()...); err != nil {
		return nil, fmt.Errorf("container runtime endpoint: %w", err)
	}
	var desired syncloop.Desired = n.pods
	if cfg.Cluster.Kubeconfig != "" {
		if n.cl, err = newCluster(cfg, deps, n.pods, n.queue, certificates.NewMetrics(n.km.Registry())); err != nil {
			return nil, err
		}
		n.recorder.api = n.cl.events
		desired = registeringDesired{Manager: n.pods, objects: n.cl.objects}
		n.checks.RuntimeClasses = n.cl.classes
	}
	if err := n.buildPods(desired); err != nil {
		return nil, err
	}
	return n, n.buildServers()
}

// buildPods builds what runs pods: the runtime manager and its helpers, the PLEG, the prober,
// the pod workers, the dispatcher, the garbage collectors, the eviction manager and, in cluster
// mode, the node status and pod status managers.
func (n *node) buildPods(desired syncloop.Desired) error {
	cfg, deps, client, facts, cl := n.cfg, n.deps, n.client, n.facts, n.cl
	var err error
	if n.logs, err = logrotation.New(cfg.LogRotation, logrotation.Deps{Runtime: client, Clock: deps.Clock}); err != nil {
		return err
	}
	volCfg := volumes.Config{RootDir: cfg.RootDir, ClusterDomain: cfg.ClusterDomain, Clock: deps.Clock,
		NodeAllocatableMemory: facts.memoryCapacity, NodeAllocatable: facts.allocatable, SubPathEnv: subPathEnv(facts, nil, nil)}
	rtDeps := kuberuntime.Deps{Sandboxes: client, Containers: client, Reader: client, Images: client, Version: client,
		Recorder: n.recorder, Clock: deps.Clock, Hooks: lifecycle.New(deps.Clock, client), Logs: n.logs}
	if cl != nil {
		volCfg.Objects, volCfg.SubPathEnv = cl.objects, subPathEnv(facts, cl.objects, cl.services)
		rtDeps.Objects, rtDeps.Services, rtDeps.RuntimeClasses = cl.objects, cl.services, cl.classes
	}
	vols := volumes.New(volCfg, volumes.NewSystemMounter())
	rtDeps.Volumes = vols
	// The Node pods are admitted against: the API server's once registered (cluster mode), the
	// locally built one before and in standalone mode. Set below, once the node status manager
	// exists; read only once the sync loop runs.
	nodeFor := standaloneNode(cfg, facts, n.rs)
	alloc, err := allocation.New(allocation.Config{RootDir: cfg.RootDir}, allocation.Deps{
		Admission: nodeAdmission{node: func() *v1.Node { return nodeFor() }, checks: n.checks, statuses: n.statuses, recorder: n.recorder,
			shutdown: func() *nodeshutdown.Manager { return n.shutdown }},
		Recorder: n.recorder, Clock: deps.Clock})
	if err != nil {
		return err
	}
	rtDeps.Actuations = alloc
	setter := n.cgroupSetter()
	if n.qos, err = n.buildQoS(setter); err != nil {
		return err
	}
	rtDeps.QoS, rtDeps.PodCgroups, rtDeps.CgroupNames = n.qos, setter, n.cgroupNames
	if len(cfg.CredentialProviders) > 0 {
		plugins, err := credentialplugin.New(credentialplugin.Config{Providers: cfg.CredentialProviders, BinDir: cfg.CredentialProviderBinDir}, deps.Clock)
		if err != nil {
			return fmt.Errorf("--image-credential-provider-bin-dir: %w", err)
		}
		rtDeps.CredentialPlugins = plugins
	}
	resolv, err := readResolvConf(cfg.ResolvConf)
	if err != nil {
		return err
	}
	if n.rt, err = kuberuntime.New(kuberuntime.Config{
		NodeName: cfg.NodeName, PodLogsDir: cfg.PodLogsDir, CgroupRoot: cfg.PodsCgroup,
		ClusterDNS: criconfig.ClusterDNS{Servers: cfg.ClusterDNS, Domain: cfg.ClusterDomain},
		HostResolv: resolv, HostIPs: facts.hostIPs,
		MemoryCapacity: facts.memoryCapacity, Allocatable: facts.allocatable, SerializeImagePulls: cfg.SerializeImagePulls,
		OOMGroup: n.oomGroup, PodPidsLimit: cfg.PodPidsLimit,
		CgroupFSRoot: cfg.CgroupFSRoot, HostMaskedPaths: facts.maskedPaths,
		Seccomp: criconfig.Seccomp{Default: cfg.SeccompDefault, Root: filepath.Join(cfg.RootDir, "seccomp")}, DeadContainers: cfg.ContainerGC,
	}, rtDeps); err != nil {
		return err
	}
	if n.provider, err = stats.New(stats.Config{NodeName: cfg.NodeName, RootDir: cfg.RootDir, PodLogsDir: cfg.PodLogsDir, CgroupRoot: cfg.PodsCgroup,
		VolumeStatsAge: cfg.VolumeStatsAggPeriod}, stats.Deps{Runtime: client, Images: client, Clock: deps.Clock, CgroupNames: n.cgroupNames}); err != nil {
		return err
	}
	if n.images, err = imagegc.New(cfg.ImageGC, imagegc.Deps{Images: client, Containers: client, Fs: n.provider, Recorder: n.recorder, Clock: deps.Clock}); err != nil {
		return fmt.Errorf("image garbage collection: %w", err)
	}
	n.km.WatchRuntime(n.rt)
	cache := pleg.NewCache()
	if n.relister, err = newPLEG(cfg, deps, n.rt, cache, client, n.km); err != nil {
		return err
	}
	n.probes = prober.NewManager(prober.Config{Clock: deps.Clock}, prober.Deps{Statuses: n.statuses, Exec: client, Recorder: n.recorder, Metrics: n.probeMetrics})
	syncDeps := podsync.Deps{Runtime: n.rt, Statuses: n.statuses, Probes: n.probes, Clock: deps.Clock, Metrics: n.km,
		Allocations: alloc, Volumes: vols, Version: client}
	if cl != nil {
		syncDeps.Mirrors = cl.mirrors
	}
	if n.syncer, err = podsync.New(podsync.Config{HostIPs: facts.hostIPs}, syncDeps); err != nil {
		return err
	}
	if n.keeper, err = restoreCheckpoint(cfg, deps, n.syncer, n.rt); err != nil {
		return err
	}
	if n.workers, err = podworkers.New(podworkers.Config{Clock: deps.Clock, ResyncInterval: cfg.SyncFrequency, JitterFactor: 0.5},
		podworkers.Deps{Syncer: n.syncer, Cache: cache, Requeuer: n.queue, Metrics: n.km, Finished: n.finished}); err != nil {
		return err
	}
	if n.containers, err = newContainerGC(cfg, deps, client, n.rt, n.workers, n.recorder, n.mux); err != nil {
		return err
	}
	housekeepers := []syncloop.Housekeeper{n.rt}
	if cl != nil {
		housekeepers = append(housekeepers, cl.mirrors)
	}
	if n.dispatcher, err = syncloop.NewDispatcher(syncloop.DispatcherDeps{Desired: desired, Workers: n.workers, Cleaner: n.rt,
		Dirs: vols, Statuses: n.statuses, Probes: n.probes, Admission: alloc, Resizer: alloc, Housekeepers: housekeepers}); err != nil {
		return err
	}
	if n.evictions, err = eviction.New(cfg.Eviction, eviction.Deps{Clock: deps.Clock, Summary: n.provider, Pods: n.dispatcher, Metrics: n.km,
		Killer: podEvicter{n.workers}, Recorder: n.recorder, ImageGC: eviction.ReclaimFunc(n.images.DeleteUnusedImages),
		ContainerGC: eviction.ReclaimFunc(n.containers.DeleteAllUnusedContainers)}); err != nil {
		return err
	}
	n.checks.Pressure = n.evictions
	if n.shutdown, err = nodeshutdown.New(nodeshutdown.Config{Periods: cfg.ShutdownPeriods}, nodeshutdown.Deps{Logind: deps.Logind,
		Pods: n.dispatcher, Killer: shutdownKiller{n.workers}, Recorder: n.recorder, Clock: deps.Clock,
		ShuttingDown: func(bool) { n.triggerNodeStatus() }}); err != nil {
		return err
	}
	if cl != nil {
		if err := cl.buildNodeStatus(cfg, deps, client, n.rs, n.readiness, n.evictions); err != nil {
			return err
		}
		nodeFor = cl.admissionNode(nodeFor)
		if err := cl.buildStatusSync(deps, n.statuses, n.workers); err != nil {
			return err
		}
	}
	return nil
}

// LocalSocketName is the local API's socket in the root directory.
const LocalSocketName = "nodelet.sock"

// maxSocketPath is the longest unix socket path Linux takes (sun_path less its NUL).
const maxSocketPath = 107

// buildServers builds the read-only API, the local API and, in cluster mode, the kubelet API.
func (n *node) buildServers() error {
	cfg, deps := n.cfg, n.deps
	targets := &runtimeTargets{pods: n.pods, lister: n.rt, client: n.client}
	resourceMetrics := prometheus.NewRegistry()
	resourceMetrics.MustRegister(stats.NewResourceMetricsCollector(n.provider))
	serverDeps := server.Deps{Pods: podList{desired: n.statuses, workers: n.workers}, Checks: n.healthChecks(),
		Logs: logLocator{podLogsDir: cfg.PodLogsDir, pods: n.pods}, Events: n.store, Summary: n.provider,
		Metrics: map[string]http.Handler{"/metrics": n.km.Handler(), "/metrics/probes": n.probeMetrics.Handler(),
			"/metrics/resource": metrics.Handler(resourceMetrics)},
		Streams: &server.Streams{Targets: targets, Streaming: targets, Runner: targets, RunningPods: targets}}
	if cfg.ReadOnlyAddress != "" {
		srv, err := server.New(server.Config{Address: cfg.ReadOnlyAddress, Clock: deps.Clock, Profiling: cfg.Profiling}, serverDeps)
		if err != nil {
			return err
		}
		n.servers = append(n.servers, runnable{"read-only API", srv.Run})
	}
	if cfg.LocalSocket != "" {
		if len(cfg.LocalSocket) > maxSocketPath {
			klog.InfoS("The root directory's path is too long for a unix socket; the local API (nodelet exec, attach) is not served", "socket", cfg.LocalSocket)
		} else {
			srv, err := server.New(server.Config{Address: server.UnixPrefix + cfg.LocalSocket, Clock: deps.Clock, Profiling: cfg.Profiling}, serverDeps)
			if err != nil {
				return err
			}
			n.servers = append(n.servers, runnable{"local API", srv.Run})
		}
	}
	if n.cl != nil && cfg.Cluster.KubeletAPI.Address != "" {
		srv, err := n.cl.buildKubeletAPI(cfg, deps, serverDeps, n.facts.hostIPs)
		if err != nil {
			return err
		}
		n.servers = append(n.servers, srv...)
	}
	return nil
}

// readiness lists why the node is not ready: the runtime, the PLEG, a shutdown under way (as
// upstream's shutdown manager's ShutdownStatus).
func (n *node) readiness() []error {
	var errs []error
	for _, c := range n.healthChecks() {
		if err := c.Check(); err != nil {
			errs = append(errs, err)
		}
	}
	if n.shutdown.ShuttingDown() {
		errs = append(errs, errors.New("node is shutting down"))
	}
	return errs
}

// healthChecks are what /healthz and the node's Ready condition check: the runtime, the PLEG.
func (n *node) healthChecks() []server.HealthCheck {
	return []server.HealthCheck{n.rs, plegCheck{n.relister}}
}

// plegCheck is the PLEG's health as a health check.
type plegCheck struct{ r relister }

func (plegCheck) Name() string { return "pleg" }

func (c plegCheck) Check() error {
	_, err := c.r.Healthy()
	return err
}

// readResolvConf reads the host's resolv.conf (resolvConf) for pods with DNS policy Default;
// "" is none, as upstream. A file that cannot be read is an error naming the field.
func readResolvConf(path string) (criconfig.ResolvConf, error) {
	if path == "" {
		return criconfig.ResolvConf{}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return criconfig.ResolvConf{}, fmt.Errorf("resolvConf %s: %w (set resolvConf to \"\" to give pods no host DNS configuration)", path, err)
	}
	return criconfig.ParseResolvConf(b), nil
}

// triggerNodeStatus has the node's status posted now (cluster mode), as upstream's shutdown
// manager syncs it at once: the node is NotReady from the shutdown's first second.
func (n *node) triggerNodeStatus() {
	if n.cl == nil {
		return
	}
	if node := n.cl.node.Load(); node != nil {
		node.TriggerUpdate()
	}
}
