package nodestatus

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Manager registers the node, keeps its status and its lease up to date, and knows the latest
// Node object.
type Manager struct {
	cfg     Config
	deps    Deps
	clock   clock.WithTicker
	trigger chan struct{}

	mu      sync.RWMutex
	node    *v1.Node
	fromAPI bool // node came from the API server (registration, patch or watch)

	// Owned by Run's goroutine.
	lastStatusReport  time.Time
	reportDelay       time.Duration // upstream's delayAfterNodeStatusChange
	rebootRecorded    bool
	lastUnschedulable bool
	randFloat         func() float64 // [0, 1); upstream's rand.Float64
}

// New validates cfg and deps, fills in cfg's defaults and returns a Manager. Nothing talks to
// the API server before Run.
func New(cfg Config, deps Deps) (*Manager, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("node status config for node %q: %w", cfg.NodeName, err)
	}
	if err := deps.validate(); err != nil {
		return nil, fmt.Errorf("node status dependencies for node %q: %w", cfg.NodeName, err)
	}
	return &Manager{
		cfg:       cfg,
		deps:      deps,
		clock:     cfg.Clock,
		trigger:   make(chan struct{}, 1),
		node:      nodeMeta(&cfg),
		randFloat: rand.Float64,
	}, nil
}

// Node returns the latest known Node: the API server's (after registration, a status patch or
// a watch event, with the labels and taints others set) or, before registration, the one
// nodelet built. It must not be modified.
func (m *Manager) Node() *v1.Node {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.node
}

// TriggerUpdate asks for a status update now rather than at the next tick, for example when
// the container runtime became (un)ready. It does not block.
func (m *Manager) TriggerUpdate() {
	select {
	case m.trigger <- struct{}{}:
	default:
	}
}

// Run registers the node (retrying with back-off), then keeps the lease and the status up to
// date until ctx ends. It blocks.
func (m *Manager) Run(ctx context.Context) {
	if !m.registerWithAPIServer(ctx) {
		return
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { m.watchNode(ctx) })
	wg.Go(func() { m.runLease(ctx) })

	m.statusLoop(ctx)
}

// setNode records the latest known Node.
func (m *Manager) setNode(node *v1.Node, fromAPI bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fromAPI && !fromAPI {
		return // never go back from the API server's Node to a locally built one
	}
	m.node, m.fromAPI = node, fromAPI
}

// apiNode returns the latest Node seen from the API server, or nil.
func (m *Manager) apiNode() *v1.Node {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if !m.fromAPI {
		return nil
	}
	return m.node
}

// watchNode keeps Node() current with an informer on this node only (the Node authorizer
// lets a node list and watch itself by name), as upstream's node lister does, until ctx ends.
// A plain informer over the typed client: the informer factory would link an informer and a
// lister for every API group.
func (m *Manager) watchNode(ctx context.Context) {
	selector := fields.OneTermEqualSelector(metav1.ObjectNameField, m.cfg.NodeName).String()
	nodes := m.deps.Client.Core.Nodes()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = selector
			return nodes.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector
			return nodes.Watch(ctx, o)
		},
	}
	observe := func(obj interface{}) {
		if node, ok := obj.(*v1.Node); ok && node.Name == m.cfg.NodeName {
			m.setNode(node, true)
		}
	}
	// The typed client tells the reflector whether it can stream the initial list (a fake
	// cannot), as the generated informers do.
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{ObjectType: &v1.Node{},
		ListerWatcher: cache.ToListWatcherWithWatchListSemantics(lw, m.deps.Client.Core),
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    observe,
			UpdateFunc: func(_, obj interface{}) { observe(obj) },
			DeleteFunc: func(obj interface{}) {
				klog.InfoS("The Node object was deleted from the API server; restart nodelet to register it again", "node", m.cfg.NodeName)
				// Forget its UID: nothing may be owned by a Node that is gone (mirror pods would
				// be garbage-collected as soon as they were created).
				if gone := m.Node().DeepCopy(); gone != nil {
					gone.UID = ""
					m.setNode(gone, true)
				}
			},
		}})
	informer.RunWithContext(ctx)
}

// observe gathers what the status setters need. It does the I/O.
func (m *Manager) observe(ctx context.Context) *observation {
	obs := &observation{now: m.clock.Now(), runtimeName: m.deps.Runtime.RuntimeName()}
	obs.machine, obs.machineErr = m.deps.Machine.MachineInfo()
	if obs.machineErr != nil {
		klog.ErrorS(obs.machineErr, "Error getting machine info; the node reports zero capacity until it can be read", "node", m.cfg.NodeName)
	}
	obs.runtimeVersion, obs.runtimeVersionErr = m.deps.Runtime.RuntimeVersion(ctx)
	if m.deps.ReadinessErrors != nil {
		obs.readinessErrs = m.deps.ReadinessErrors()
	}
	if p := m.deps.Pressure; p != nil {
		obs.memoryPressure, obs.diskPressure, obs.pidPressure = p.IsUnderMemoryPressure(), p.IsUnderDiskPressure(), p.IsUnderPIDPressure()
	}
	if f := m.deps.RuntimeFeatures; f != nil {
		obs.runtimeFeatures, obs.runtimeHandlers = f.RuntimeFeatures()
	}
	if m.deps.Images != nil {
		obs.images, obs.imagesErr = m.deps.Images.ListImages(ctx, nil)
	}
	return obs
}

// recordEvents records node events, the reboot event once per process as upstream.
func (m *Manager) recordEvents(node *v1.Node, events []nodeEvent) {
	for _, e := range events {
		if e.reason == "Rebooted" {
			if m.rebootRecorded {
				continue
			}
			m.rebootRecorded = true
		}
		if e.reason == "NodeNotReady" {
			klog.InfoS("Node became not ready", "node", node.Name, "message", readyMessage(node))
		}
		if m.deps.Recorder == nil {
			continue
		}
		ref := &v1.ObjectReference{Kind: "Node", Name: node.Name, UID: node.UID}
		m.deps.Recorder.Eventf(ref, e.eventType, e.reason, "%s", e.message)
	}
}

// schedulableEvent is upstream's recordNodeSchedulableEvent: an event when the node is
// cordoned or uncordoned.
func (m *Manager) schedulableEvent(node *v1.Node) []nodeEvent {
	if node.Spec.Unschedulable == m.lastUnschedulable {
		return nil
	}
	m.lastUnschedulable = node.Spec.Unschedulable
	if node.Spec.Unschedulable {
		return []nodeEvent{statusEvent(node.Name, "NodeNotSchedulable")}
	}
	return []nodeEvent{statusEvent(node.Name, "NodeSchedulable")}
}

func readyMessage(node *v1.Node) string {
	for _, c := range node.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Message
		}
	}
	return ""
}
