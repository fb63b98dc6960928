package agent

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/admission"
	"github.com/nodelet/nodelet/internal/apiobjects"
	"github.com/nodelet/nodelet/internal/certificates"
	"github.com/nodelet/nodelet/internal/checkpoint"
	"github.com/nodelet/nodelet/internal/cri"
	"github.com/nodelet/nodelet/internal/eviction"
	"github.com/nodelet/nodelet/internal/kubeclient"
	"github.com/nodelet/nodelet/internal/mirrorpods"
	"github.com/nodelet/nodelet/internal/nodeshutdown"
	"github.com/nodelet/nodelet/internal/nodestatus"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/podmanager"
	"github.com/nodelet/nodelet/internal/statusmanager"
	"github.com/nodelet/nodelet/internal/syncloop"
)

// ClusterConfig is what API-server mode needs beyond the standalone settings.
type ClusterConfig struct {
	// Kubeconfig holds the node's credentials (system:node:<name>); empty means standalone.
	Kubeconfig string
	NodeLabels map[string]string
	Taints     []v1.Taint
	MaxPods    int32
	// MaxImages is nodeStatusMaxImages (status.images; -1 all).
	MaxImages       int32
	KubeReserved    v1.ResourceList
	SystemReserved  v1.ResourceList
	UpdateFrequency time.Duration
	ReportFrequency time.Duration
	LeaseDuration   time.Duration
	KubeletPort     int32
	KubeletAPI      KubeletAPIConfig
	Certs           CertConfig
}

// enqueuer asks for pods to be synced (the sync loop's work queue).
type enqueuer interface {
	Enqueue(uid types.UID, delay time.Duration)
}

// cluster holds the components only API-server mode has.
type cluster struct {
	client    *kubeclient.Clients
	heartbeat *kubeclient.Clients
	closeAll  func()
	// clientCerts rotates the client certificate (rotateCertificates); nil when off.
	clientCerts *certificates.Manager
	certMetrics *certificates.Metrics
	events      record.EventRecorder
	stopEvents  func()
	objects     *apiobjects.Manager
	services    *apiobjects.Services
	classes     *apiobjects.RuntimeClasses
	mirrors     *mirrorpods.Manager
	// node is the node status manager (buildNodeStatus); until it exists there is no Node.
	node       atomic.Pointer[nodestatus.Manager]
	statusSync *statusmanager.APISync
}

// newCluster builds the API client, the event recorder, the API-object cache and the mirror
// pod manager; the node status manager comes later, once the runtime answers.
func newCluster(cfg Config, deps Deps, desired *podmanager.Manager, queue enqueuer, certMetrics *certificates.Metrics) (*cluster, error) {
	hbTimeout := min(cfg.Cluster.UpdateFrequency, cfg.Cluster.LeaseDuration)
	if hbTimeout <= 0 {
		hbTimeout = 10 * time.Second
	}
	client, heartbeat, closeAll := deps.Clients, deps.HeartbeatClients, func() {}
	var clientCerts *certificates.Manager
	if client == nil {
		var err error
		if client, heartbeat, closeAll, clientCerts, err = newKubeClients(cfg, deps.Clock, certMetrics, hbTimeout); err != nil {
			return nil, err
		}
	}
	if heartbeat == nil {
		heartbeat = client
	}
	c := &cluster{client: client, heartbeat: heartbeat, closeAll: closeAll, clientCerts: clientCerts, certMetrics: certMetrics}
	var err error
	c.events, c.stopEvents = startAPIEvents(client, cfg.NodeName)
	c.objects, err = apiobjects.New(apiobjects.Config{Client: client.Core, Clock: deps.Clock, OnChange: func(uids []types.UID) {
		for _, uid := range uids {
			queue.Enqueue(uid, 0)
		}
	}})
	if err != nil {
		return nil, err
	}
	if c.services, err = apiobjects.NewServices(client.Core, deps.Clock); err != nil {
		return nil, err
	}
	if c.classes, err = apiobjects.NewRuntimeClasses(client.RuntimeClasses, deps.Clock); err != nil {
		return nil, err
	}
	c.mirrors, err = mirrorpods.New(mirrorpods.Config{NodeName: cfg.NodeName, OnChange: func(pods []types.NamespacedName) {
		for _, key := range pods {
			if pod, ok := desired.ByFullName(key.Name, key.Namespace); ok {
				queue.Enqueue(pod.UID, 0)
			}
		}
	}}, mirrorpods.Deps{Client: client.Core, Clock: deps.Clock, NodeUID: c.nodeUID})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// nodeUID is the registered Node's UID: "" until registration, and while the Node is being
// deleted (mirror pods must not be owned by a Node that is going away).
func (c *cluster) nodeUID() types.UID {
	m := c.node.Load()
	if m == nil {
		return ""
	}
	n := m.Node()
	if n.DeletionTimestamp != nil {
		return ""
	}
	return n.UID
}

// registered reports whether the Node is known from the API server; the API source waits for
// it, as upstream waits for its node informer, so that pods are admitted against the real Node.
func (c *cluster) registered() bool { return c.nodeUID() != "" }

// admissionNode is the Node to admit pods against: the API server's once registered, the
// locally built one (the machine's resources, maxPods, the default labels) before.
func (c *cluster) admissionNode(local func() *v1.Node) func() *v1.Node {
	return func() *v1.Node {
		if c.registered() {
			return c.node.Load().Node()
		}
		return local()
	}
}

// buildNodeStatus builds the node status manager, which registers the node and keeps its
// status and lease once started.
func (c *cluster) buildNodeStatus(cfg Config, deps Deps, rt *cri.Client, features nodestatus.RuntimeFeaturesReporter, ready func() []error, pressure nodestatus.PressureReporter) error {
	var ips []net.IP
	for _, s := range strings.Split(cfg.NodeIP, ",") {
		if ip := net.ParseIP(strings.TrimSpace(s)); ip != nil {
			ips = append(ips, ip)
		}
	}
	cc := cfg.Cluster
	node, err := nodestatus.New(nodestatus.Config{
		NodeName: cfg.NodeName, NodeIPs: ips, Labels: cc.NodeLabels, Taints: cc.Taints, MaxPods: cc.MaxPods, MaxImages: cc.MaxImages,
		KubeReserved: cc.KubeReserved, SystemReserved: cc.SystemReserved,
		UpdateFrequency: cc.UpdateFrequency, ReportFrequency: cc.ReportFrequency, LeaseDuration: cc.LeaseDuration,
		KubeletPort: cc.KubeletPort, Version: Version, Clock: deps.Clock,
		EvictionHardMemory: hardThreshold(cfg.Eviction.Thresholds, eviction.SignalMemoryAvailable),
		EvictionHardNodefs: hardThreshold(cfg.Eviction.Thresholds, eviction.SignalNodeFsAvailable),
	}, nodestatus.Deps{Pressure: pressure, Client: nodestatus.Clients{Core: c.client.Core, Leases: c.client.Leases},
		HeartbeatClient: &nodestatus.Clients{Core: c.heartbeat.Core, Leases: c.heartbeat.Leases},
		Machine:         nodestatus.NewHostMachine(cfg.RootDir), Runtime: runtimeVersion{rt},
		RuntimeFeatures: features, Images: rt, ReadinessErrors: ready, Recorder: c.events, OnRepeatedHeartbeatFailure: c.closeAll})
	if err != nil {
		return err
	}
	c.node.Store(node)
	return nil
}

// start runs the API object watches and the API pod source.
func (c *cluster) start(ctx context.Context, g *group, cfg Config, deps Deps, mux *podconfig.Mux) {
	if c.clientCerts != nil {
		g.start("client certificate rotation", func() error { c.clientCerts.Run(ctx, c.client.CSRs); return nil })
	}
	// The checkpoint's services go in before the services' reflector starts, so that its first
	// list always replaces them.
	restored := c.restoreAPIPods(filepath.Join(cfg.RootDir, "checkpoint"))
	g.start("api objects", func() error { c.objects.Run(ctx); return nil })
	g.start("services", func() error { c.services.Run(ctx); return nil })
	g.start("runtime classes", func() error { c.classes.Run(ctx); return nil })
	c.startAPISource(ctx, g, cfg, deps, mux, restored)
}

// startNodeStatus registers the node and keeps its status and lease; it needs the runtime's
// version, so it starts once the runtime answers.
func (c *cluster) startNodeStatus(ctx context.Context, g *group, deps Deps) {
	node := c.node.Load()
	g.start("node status", func() error { node.Run(ctx); return nil })
	// Mirror pods wait for the Node's UID (their owner); retry those that waited once it is
	// known. A creation can also wait just as registration completes, so keep retrying.
	g.start("mirror pods after registration", func() error {
		t := deps.Clock.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C():
				if c.registered() {
					c.mirrors.RetryPending()
				}
			}
		}
	})
}

// runtimeVersion is the CRI client as the node status reports it.
type runtimeVersion struct{ c *cri.Client }

func (r runtimeVersion) RuntimeName() string { return r.c.Version().GetRuntimeName() }
func (r runtimeVersion) RuntimeVersion(context.Context) (string, error) {
	return r.c.Version().GetRuntimeVersion(), nil
}

// buildStatusSync builds the writer of pod statuses to the API server.
func (c *cluster) buildStatusSync(deps Deps, statuses *statusmanager.Manager, deletion statusmanager.DeletionSafety) error {
	s, err := statusmanager.NewAPISync(statusmanager.APISyncConfig{}, statusmanager.APISyncDeps{
		Client: c.client.Core, Statuses: statuses, Mirrors: c.mirrors, Deletion: deletion, Clock: deps.Clock})
	if err != nil {
		return err
	}
	c.statusSync = s
	return nil
}

// startStatusSync writes pod statuses to the API server.
func (c *cluster) startStatusSync(ctx context.Context, g *group) {
	g.start("pod status sync", func() error { c.statusSync.Run(ctx); return nil })
}

// startAPISource feeds the pods bound to this node into the mux, and their mirror pods to
// the mirror pod manager.
//
// The API server's pods for this node are checkpointed (<root>/checkpoint/apipods.json): after a
// restart they run as last known until the API server answers, whose first listing then
// replaces them; until then housekeeping removes nothing (the source is not seen yet).
func (c *cluster) startAPISource(ctx context.Context, g *group, cfg Config, deps Deps, mux *podconfig.Mux, restored []*v1.Pod) {
	if len(restored) > 0 {
		if err := mux.Restore(ctx, podconfig.APISource, restored); err != nil {
			return
		}
	}
	rec := checkpoint.NewAPIPods(filepath.Join(cfg.RootDir, "checkpoint"), checkpointPeriod, deps.Clock, c.services.Services)
	g.start("api pods checkpoint", func() error { rec.Run(ctx); return nil })
	klog.InfoS("Watching the API server for pods bound to this node", "node", cfg.NodeName)
	g.start("api source", func() error {
		return podconfig.RunAPISource(ctx, podconfig.APIConfig{Client: c.client.Core, NodeName: cfg.NodeName,
			Sink: recordingSink{Sink: mux, rec: rec}, Mirrors: c.mirrors, Clock: deps.Clock, NodeSynced: c.registered})
	})
}

// restoreAPIPods reads the API pods' checkpoint: it puts its services in place and returns its
// pods, for the mux.
func (c *cluster) restoreAPIPods(dir string) []*v1.Pod {
	pods, services, err := checkpoint.LoadAPIPods(dir)
	switch {
	case err != nil:
		klog.ErrorS(err, "Starting without the API pods' checkpoint: the API server's pods wait for it to answer")
	case len(pods) > 0:
		klog.InfoS("Restored the API server's pods for this node from the checkpoint; they run as last known until it answers", "pods", len(pods), "services", len(services))
		c.services.Restore(services)
	}
	return pods
}

// recordingSink passes the API source's listings on and records each for the checkpoint.
type recordingSink struct {
	podconfig.Sink
	rec *checkpoint.APIPods
}

func (s recordingSink) Send(ctx context.Context, source string, pods []*v1.Pod) error {
	if err := s.Sink.Send(ctx, source, pods); err != nil {
		return err
	}
	s.rec.Record(pods)
	return nil
}

// registeringDesired is the pod manager that also registers each pod's configMaps and secrets
// with the API object cache, as upstream's pod manager does with its secret and configMap
// managers.
type registeringDesired struct {
	*podmanager.Manager
	objects *apiobjects.Manager
}

var _ syncloop.Desired = registeringDesired{}

func (d registeringDesired) AddOrUpdate(pod *v1.Pod) {
	// A finished pod needs its configMaps and secrets no more (upstream unregisters it when it
	// terminates); keeping their watches would cost one per object for as long as the pod is
	// kept in the API.
	if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		d.objects.UnregisterPod(pod)
	} else {
		d.objects.RegisterPod(pod)
	}
	d.Manager.AddOrUpdate(pod)
}

func (d registeringDesired) Remove(pod *v1.Pod) {
	d.Manager.Remove(pod)
	d.objects.UnregisterPod(pod)
}

// nodeAdmission admits pods against the Node (upstream's canAdmitPod) and records a
// rejection as upstream's rejectPod: a warning event and a Failed status.
type nodeAdmission struct {
	node     func() *v1.Node
	checks   *admission.Checks
	statuses *statusmanager.Manager
	recorder podRecorder
	// shutdown refuses every pod while the node shuts down (built after this: read at Admit).
	shutdown func() *nodeshutdown.Manager
}

var _ syncloop.Admission = nodeAdmission{}

func (a nodeAdmission) Admit(pod *v1.Pod, active []*v1.Pod) (bool, string, string) {
	if a.shutdown != nil {
		if m := a.shutdown(); m != nil {
			if ok, reason, message := m.Admit(pod); !ok {
				return ok, reason, message
			}
		}
	}
	r := a.checks.Admit(a.node(), pod, active)
	return r.Admit, r.Reason, r.Message
}

func (a nodeAdmission) Reject(pod *v1.Pod, reason, message string) {
	a.recorder.Eventf(pod, v1.EventTypeWarning, reason, "%s", message)
	a.statuses.SetPodStatus(pod, admission.RejectedStatus(pod, reason, message))
}

// standaloneNode is the Node admission checks against without an API server: the capacity and
// allocatable a registered Node would report (cpu, memory, ephemeral-storage, huge pages, pods:
// kube and system reserved and the hard eviction thresholds taken out), and the default
// labels. When the machine cannot be read, the facts read at start (cpu, memory) and maxPods.
func standaloneNode(cfg Config, facts nodeFacts, rt nodestatus.RuntimeFeaturesReporter) func() *v1.Node {
	cc := cfg.Cluster
	n := &v1.Node{}
	n.Name = cfg.NodeName
	n.Labels = map[string]string{v1.LabelHostname: cfg.NodeName, v1.LabelOSStable: goos(), v1.LabelArchStable: goarch()}
	info, err := nodestatus.NewHostMachine(cfg.RootDir).MachineInfo()
	if err != nil {
		klog.ErrorS(err, "Cannot read the machine's resources; pods are admitted against cpu, memory and maxPods only")
		alloc := facts.allocatable.DeepCopy()
		alloc[v1.ResourcePods] = *resourceQuantity(int64(cc.MaxPods))
		n.Status.Allocatable, n.Status.Capacity = alloc, alloc
	} else {
		n.Status.Capacity, n.Status.Allocatable = nodestatus.NodeResources(nodestatus.Config{NodeName: cfg.NodeName,
			MaxPods: cc.MaxPods, KubeReserved: cc.KubeReserved, SystemReserved: cc.SystemReserved,
			EvictionHardMemory: hardThreshold(cfg.Eviction.Thresholds, eviction.SignalMemoryAvailable),
			EvictionHardNodefs: hardThreshold(cfg.Eviction.Thresholds, eviction.SignalNodeFsAvailable)}, info)
	}
	return func() *v1.Node {
		f, _ := rt.RuntimeFeatures()
		if f == nil {
			return n
		}
		// What the runtime can do, as the registered Node reports it (supplementalGroupsPolicy).
		withFeatures := n.DeepCopy()
		withFeatures.Status.Features = &v1.NodeFeatures{SupplementalGroupsPolicy: ptr.To(f.GetSupplementalGroupsPolicy())}
		return withFeatures
	}
}
