package prober

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// maxProbeRetries: a probe that errors (gives no answer at all) is tried this many times in a
// row before the tick gives up, as upstream.
const maxProbeRetries = 3

type probeKey struct {
	uid       types.UID
	container string
	kind      kind
}

// published is what a worker shows the manager: the result it holds for an instance.
type published struct {
	containerID string
	has         bool
	result      result
}

// worker probes one container with one probe, in its own goroutine, until it is stopped or
// the container will not run again (upstream's worker).
type worker struct {
	m         *Manager
	key       probeKey
	container v1.Container // as when the worker was created: probe settings are not updated
	spec      *v1.Probe
	sidecar   bool
	period    time.Duration
	ctx       context.Context
	cancel    context.CancelFunc
	trigger   chan struct{} // a manual run (upstream's manualTriggerCh)

	mu  sync.Mutex
	pod *v1.Pod // the newest pod object AddPod handed over
	pub published

	st state // owned by the worker's goroutine
}

func newWorker(m *Manager, k kind, pod *v1.Pod, c *v1.Container, sidecar bool) *worker {
	var spec *v1.Probe
	switch k {
	case liveness:
		spec = c.LivenessProbe
	case readiness:
		spec = c.ReadinessProbe
	case startup:
		spec = c.StartupProbe
	}
	period := time.Duration(spec.PeriodSeconds) * time.Second
	if period <= 0 {
		period = 10 * time.Second // the API default
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &worker{m: m, key: probeKey{pod.UID, c.Name, k}, container: *c, spec: spec, sidecar: sidecar,
		period: period, ctx: ctx, cancel: cancel, trigger: make(chan struct{}, 1), pod: pod, st: newState(k, spec)}
}

func (w *worker) setPod(pod *v1.Pod) {
	w.mu.Lock()
	w.pod = pod
	w.mu.Unlock()
}

func (w *worker) currentPod() *v1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pod
}

func (w *worker) published() published {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pub
}

// runNow asks for a probe now rather than at the next tick; it never blocks.
func (w *worker) runNow() {
	select {
	case w.trigger <- struct{}{}:
	default:
	}
}

// run probes at every period until the worker is stopped or decides to exit.
func (w *worker) run() {
	defer w.m.wg.Done()
	defer w.m.forget(w)
	clk := w.m.cfg.Clock

	// Workers created together right after a (re)start would probe in lockstep: spread their
	// first probes over a period, as upstream.
	if w.period > clk.Since(w.m.start) {
		if d := time.Duration(w.m.rand() * float64(w.period)); d > 0 {
			t := clk.NewTimer(d)
			select {
			case <-t.C():
			case <-w.ctx.Done():
				t.Stop()
				return
			}
		}
	}

	timer := clk.NewTimer(w.period)
	defer timer.Stop()
	for w.tick() {
		select {
		case <-w.ctx.Done():
			return
		case <-timer.C():
			timer.Reset(w.period)
		case <-w.trigger:
			// The next periodic probe is a period after this one.
			if !timer.Stop() {
				select {
				case <-timer.C():
				default:
				}
			}
			timer.Reset(w.period)
			klog.V(4).InfoS("Probe run on demand", "probeType", w.key.kind, "pod", klog.KObj(w.currentPod()), "container", w.key.container)
		}
	}
}

// tick is one probe: observe, decide (step), probe if the decision needs it, publish.
// It reports whether the worker goes on.
func (w *worker) tick() (keepGoing bool) {
	pod := w.currentPod()
	logger := klog.LoggerWithValues(klog.Background(), "probeType", w.key.kind, "pod", klog.KObj(pod), "container", w.key.container)
	defer func() {
		if r := recover(); r != nil {
			logger.Error(nil, "Probe worker panicked", "panic", r)
			keepGoing = true
		}
	}()

	st, known := w.m.deps.Statuses.GetPodStatus(pod.UID)
	o := observe(w.m.cfg.Clock.Now(), w.m.start, pod, &w.container, w.sidecar, st, known)
	next, v := step(w.st, o)
	if v.Probe {
		out := w.probe(pod, st.PodIP, next.ContainerID)
		if w.ctx.Err() != nil {
			return false // stopped while probing: the outcome is moot
		}
		logOutcome(logger, out)
		o.Probe = &out
		next, v = step(w.st, o)
	}
	switch {
	case !known:
		logger.V(3).Info("No status for pod")
	case o.ContainerID == "":
		logger.V(3).Info("Probe target container not found")
	case !o.Running && !next.OnHold:
		logger.V(3).Info("Non-running container probed")
	}

	w.st = next
	w.mu.Lock()
	w.pub = published{containerID: next.ContainerID, has: next.HasResult, result: next.Result}
	w.mu.Unlock()

	if v.Event != nil && w.m.deps.Recorder != nil {
		w.m.deps.Recorder.Eventf(pod, v.Event.Type, v.Event.Reason, v.Event.Fmt, v.Event.Args...)
	}
	if v.Changed {
		logger.V(2).Info("Probe result changed", "containerID", next.ContainerID, "result", next.Result)
		if w.ctx.Err() == nil {
			w.m.notify(pod.UID)
		}
	}
	if v.Stop {
		logger.V(3).Info("Probe worker exits")
	}
	return !v.Stop
}

// probe runs the probe, again while it errors, at most maxProbeRetries times.
func (w *worker) probe(pod *v1.Pod, podIP, containerID string) outcome {
	var out outcome
	start := w.m.cfg.Clock.Now()
	for range maxProbeRetries {
		out = runProbe(w.ctx, w.m.deps.Exec, w.spec, pod, &w.container, podIP, normaliseID(containerID))
		if out.Err == nil || w.ctx.Err() != nil {
			break
		}
	}
	if m := w.m.deps.Metrics; m != nil && out.Err == nil && w.ctx.Err() == nil {
		// As upstream, a probe that errored is not counted: its result is thrown away.
		m.ObserveProbe(w.key.kind.String(), pod, w.key.container, metricResult(out.Result), w.m.cfg.Clock.Since(start))
	}
	return out
}

// metricResult is upstream's result label: a warning is a success.
func metricResult(r probeResult) string {
	switch r {
	case probeSuccess, probeWarning:
		return "successful"
	case probeFailure:
		return "failed"
	}
	return "unknown"
}

func logOutcome(logger klog.Logger, out outcome) {
	switch {
	case out.Err != nil:
		logger.V(1).Info("Probe errored", "probeResult", out.Result, "err", out.Err)
	case out.Result == probeSuccess:
		logger.V(3).Info("Probe succeeded")
	case out.Result == probeWarning:
		logger.V(3).Info("Probe succeeded with a warning", "output", out.Output)
	default:
		logger.V(1).Info("Probe failed", "probeResult", out.Result, "output", out.Output)
	}
}
