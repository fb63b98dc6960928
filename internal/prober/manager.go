package prober

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/prober/probeview"
	"github.com/nodelet/nodelet/internal/status"
)

// StatusGetter is the status manager as the prober uses it: the pod's IP, and for each
// container its newest instance's ID, state (running since when) and started flag.
type StatusGetter interface {
	GetPodStatus(uid types.UID) (v1.PodStatus, bool)
}

// Execer runs exec probes: the CRI client's ExecSync (internal/cri). containerID is the bare
// CRI ID. A non-zero exit code is not an error; a timeout is reported as an error with gRPC
// code DeadlineExceeded (or wrapping context.DeadlineExceeded).
type Execer interface {
	ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (stdout, stderr []byte, exitCode int32, err error)
}

// Recorder records the pod's events.
type Recorder interface {
	Eventf(pod *v1.Pod, eventType, reason, messageFmt string, args ...any)
}

// Config configures a Manager.
type Config struct {
	// Clock times the probes; the real clock when nil.
	Clock clock.WithTicker
	// Rand returns a number in [0, 1) that places a new worker's first probe within its
	// period while the manager has just started (upstream's jitter); math/rand when nil.
	Rand func() float64
}

// Deps are the Manager's collaborators. Statuses is required; Exec is needed by exec probes
// only, and events are dropped without a Recorder.
type Deps struct {
	Statuses StatusGetter
	Exec     Execer
	Recorder Recorder
	// Metrics, if set, records each probe (prober_probe_total, prober_probe_duration_seconds).
	Metrics Metrics
}

// Metrics records probes (metrics.Probes); probeType is Liveness, Readiness or Startup and
// result successful, failed or unknown, upstream's label values.
type Metrics interface {
	ObserveProbe(probeType string, pod *v1.Pod, container, result string, d time.Duration)
	ForgetProbe(probeType string, pod *v1.Pod, container string)
}

// Manager runs the probe workers of the pods it is given. It is safe for concurrent use.
type Manager struct {
	cfg   Config
	deps  Deps
	start time.Time
	rand  func() float64

	mu      sync.Mutex
	workers map[probeKey]*worker
	stopped bool
	wg      sync.WaitGroup

	notes *notifier
	done  chan struct{}
}

// NewManager returns a running Manager.
func NewManager(cfg Config, deps Deps) *Manager {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	m := &Manager{cfg: cfg, deps: deps, start: cfg.Clock.Now(), rand: cfg.Rand,
		workers: map[probeKey]*worker{}, notes: newNotifier(), done: make(chan struct{})}
	if m.rand == nil {
		m.rand = rand.Float64
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.notes.run(m.done)
	}()
	return m
}

// AddPod starts a worker for each probe of the pod's containers and sidecars (restartable init
// containers) that has none. Workers that exist get the new pod object; their probe settings
// stay as they were, as upstream.
func (m *Manager) AddPod(pod *v1.Pod) {
	pod = pod.DeepCopy() // workers read it concurrently with whoever owns the original
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return
	}
	add := func(c *v1.Container, sidecar bool) {
		for _, k := range kinds {
			p := probeOf(c, k)
			if p == nil {
				continue
			}
			key := probeKey{pod.UID, c.Name, k}
			if w, ok := m.workers[key]; ok {
				w.setPod(pod)
				continue
			}
			w := newWorker(m, k, pod, c, sidecar)
			m.workers[key] = w
			m.wg.Add(1)
			klog.V(4).InfoS("Starting probe worker", "probeType", k, "pod", klog.KObj(pod), "container", c.Name)
			go w.run()
		}
	}
	for i := range pod.Spec.Containers {
		add(&pod.Spec.Containers[i], false)
	}
	for i := range pod.Spec.InitContainers {
		if status.IsRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			add(&pod.Spec.InitContainers[i], true)
		}
	}
}

func probeOf(c *v1.Container, k kind) *v1.Probe {
	switch k {
	case liveness:
		return c.LivenessProbe
	case readiness:
		return c.ReadinessProbe
	}
	return c.StartupProbe
}

// RemovePod stops the pod's workers (a probe in flight is cancelled) and forgets their results.
func (m *Manager) RemovePod(pod *v1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, w := range m.workers {
		if key.uid == pod.UID {
			delete(m.workers, key)
			w.cancel()
		}
	}
}

// forget removes an exiting worker, unless another has taken its place.
func (m *Manager) forget(w *worker) {
	w.cancel()
	if m.deps.Metrics != nil {
		m.deps.Metrics.ForgetProbe(w.key.kind.String(), w.currentPod(), w.key.container)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.workers[w.key] == w {
		delete(m.workers, w.key)
	}
}

// Updates delivers a pod's UID after one of its results changed. A UID not yet received is not
// queued twice, so a slow reader gets each pod once, after its latest change; workers never
// wait for the reader. The channel is never closed.
func (m *Manager) Updates() <-chan types.UID { return m.notes.out }

func (m *Manager) notify(uid types.UID) { m.notes.add(uid) }

// Results returns the pod's probe results for the container instances of currentIDs
// (container name → ID, with or without the runtime scheme); results a worker holds for
// another instance are left out. As upstream's UpdatePodStatus, it asks a readiness worker
// whose container is not (yet) known ready to probe now rather than at its next tick.
func (m *Manager) Results(pod *v1.Pod, currentIDs map[string]string) probeview.View {
	return m.results(pod, currentIDs, true)
}

func (m *Manager) results(pod *v1.Pod, currentIDs map[string]string, trigger bool) probeview.View {
	r := probeview.View{Ready: map[string]bool{}, Started: map[string]bool{}, LivenessFailed: map[string]bool{},
		StartupFailed: map[string]bool{}}
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, id := range currentIDs {
		if id == "" {
			continue
		}
		for _, k := range kinds {
			w, ok := m.workers[probeKey{pod.UID, name, k}]
			if !ok {
				continue
			}
			p := w.published()
			current := p.has && normaliseID(p.containerID) == normaliseID(id)
			if trigger && k == readiness && (!current || p.result != success) {
				w.runNow()
			}
			if !current {
				continue
			}
			switch k {
			case readiness:
				r.Ready[name] = p.result == success
			case liveness:
				r.LivenessFailed[name] = p.result == failure
			case startup:
				r.Started[name] = p.result == success
				r.StartupFailed[name] = p.result == failure
			}
		}
	}
	return r
}

// Stop stops every worker, cancelling probes in flight, and waits for them to exit.
func (m *Manager) Stop() {
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		return
	}
	m.stopped = true
	for key, w := range m.workers {
		delete(m.workers, key)
		w.cancel()
	}
	close(m.done)
	m.mu.Unlock()
	m.wg.Wait()
}

// notifier queues pod UIDs for Updates: each at most once while not yet delivered, in order.
type notifier struct {
	mu     sync.Mutex
	queue  []types.UID
	queued map[types.UID]bool
	kick   chan struct{}
	out    chan types.UID
}

func newNotifier() *notifier {
	return &notifier{queued: map[types.UID]bool{}, kick: make(chan struct{}, 1), out: make(chan types.UID)}
}

func (n *notifier) add(uid types.UID) {
	n.mu.Lock()
	if !n.queued[uid] {
		n.queued[uid] = true
		n.queue = append(n.queue, uid)
	}
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

func (n *notifier) run(done <-chan struct{}) {
	for {
		n.mu.Lock()
		if len(n.queue) == 0 {
			n.mu.Unlock()
			select {
			case <-n.kick:
				continue
			case <-done:
				return
			}
		}
		// Dequeued before it is sent: a change during the send queues the UID again, so the
		// reader never misses a change that happened after it last looked.
		uid := n.queue[0]
		n.queue = n.queue[1:]
		delete(n.queued, uid)
		n.mu.Unlock()
		select {
		case n.out <- uid:
		case <-done:
			return
		}
	}
}
