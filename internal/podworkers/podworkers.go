package podworkers

import (
	"context"
	"errors"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// PodWorkers runs one goroutine per pod UID and is the source of truth for whether a pod may
// have running containers. Create it with New; Stop it when done.
type PodWorkers struct {
	clock    clock.PassiveClock
	timing   timing
	jitter   float64
	syncer   Syncer
	cache    Cache
	requeuer Requeuer
	metrics  Metrics          // nil: no metrics
	finished chan<- types.UID // nil: nobody listens

	// ctx is the parent of every sync's context; cancelled by Stop.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	workers map[types.UID]*worker
	// podsSynced is set by the first SyncKnownPods: from then on every pod that should exist
	// has been given to UpdatePod, so an unknown UID has no business running.
	podsSynced bool
	stopped    bool
}

// worker is one pod's state and the handles of its goroutine. Guarded by PodWorkers.mu.
type worker struct {
	status podSyncStatus
	// wake holds at most one token: "look at status.pending".
	wake chan struct{}
	// running is true while the goroutine exists.
	running bool
	// cancelSync cancels the work in flight; nil when idle.
	cancelSync context.CancelFunc
}

// New returns pod workers with cfg's timing (zero fields take their defaults); Syncer, Cache
// and Requeuer are required.
func New(cfg Config, deps Deps) (*PodWorkers, error) {
	if deps.Syncer == nil || deps.Cache == nil || deps.Requeuer == nil {
		return nil, errors.New("podworkers: Syncer, Cache and Requeuer are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.ResyncInterval <= 0 {
		cfg.ResyncInterval = defaultResyncInterval
	}
	if cfg.BackOffPeriod <= 0 {
		cfg.BackOffPeriod = defaultBackOffPeriod
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &PodWorkers{
		clock:    cfg.Clock,
		timing:   timing{resync: cfg.ResyncInterval, backOff: cfg.BackOffPeriod},
		jitter:   cfg.JitterFactor,
		syncer:   deps.Syncer,
		cache:    deps.Cache,
		requeuer: deps.Requeuer,
		metrics:  deps.Metrics,
		finished: deps.Finished,
		ctx:      ctx,
		cancel:   cancel,
		workers:  map[types.UID]*worker{},
	}, nil
}

// Stop cancels every sync in flight, waits for all pod worker goroutines to end and makes later
// calls to UpdatePod no-ops. Pod state stays readable.
func (p *PodWorkers) Stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
}

// UpdatePod hands a change of a pod to its worker, starting the worker if needed. It never
// blocks on a sync: the worker takes up the latest pending update when it is free.
func (p *PodWorkers) UpdatePod(opts UpdatePodOptions) {
	if opts.Pod == nil {
		klog.ErrorS(nil, "Pod update without a pod ignored, programmer error", "updateType", opts.UpdateType)
		return
	}
	uid := opts.Pod.UID
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		klog.V(4).InfoS("Pod workers stopped; update ignored", "pod", klog.KObj(opts.Pod), "podUID", uid, "updateType", opts.UpdateType)
		return
	}
	w := p.workers[uid]
	if w == nil {
		w = &worker{wake: make(chan struct{}, 1)}
		p.workers[uid] = w
	}
	p.apply(uid, w, opts.Pod, func(s podSyncStatus) (podSyncStatus, decision) {
		return transition(s, opts, p.clock.Now())
	}, opts.UpdateType.String())
}

// apply runs a pure decision on w's state and carries it out. Must be called with p.mu held.
func (p *PodWorkers) apply(uid types.UID, w *worker, pod *v1.Pod, decide func(podSyncStatus) (podSyncStatus, decision), updateType string) {
	before := w.status.workType()
	var d decision
	w.status, d = decide(w.status)
	if v := klog.V(4); v.Enabled() { // the arguments alone cost 4 allocations per update
		v.InfoS(d.why, "pod", klog.KObj(pod), "podUID", uid, "updateType", updateType, "workType", w.status.workType())
	}
	if after := w.status.workType(); after != before {
		klog.V(2).InfoS("Pod worker state changed", "pod", klog.KObj(pod), "podUID", uid, "from", before, "to", after,
			"gracePeriod", w.status.gracePeriod)
	}
	if d.cancel && w.cancelSync != nil {
		klog.V(3).InfoS("Cancelling the sync in flight", "pod", klog.KObj(pod), "podUID", uid, "workType", w.status.workType())
		w.cancelSync()
	}
	if !d.queued {
		return
	}
	signal(w)
	if !w.running && !p.stopped {
		w.running = true
		p.wg.Add(1)
		go p.run(uid, w)
	}
}

// signal leaves a wake-up token for w's goroutine, unless one is already there.
func signal(w *worker) {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// SyncKnownPods is housekeeping (upstream's SyncKnownPods): desired is every pod that should
// exist. A pod worker not desired is driven to termination; a finished worker that is not
// desired, or whose UID was re-created, is forgotten, so that the UID may start afresh with a
// new create. It returns the work type of every worker still known.
func (p *PodWorkers) SyncKnownPods(desired []*v1.Pod) map[types.UID]WorkType {
	want := make(map[types.UID]bool, len(desired))
	for _, pod := range desired {
		want[pod.UID] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.podsSynced = true
	out := make(map[types.UID]WorkType, len(p.workers))
	for uid, w := range p.workers {
		switch {
		case !want[uid]:
			forget := false
			p.apply(uid, w, lastPod(w.status), func(s podSyncStatus) (podSyncStatus, decision) {
				var d decision
				s, d, forget = orphan(s, p.clock.Now())
				return s, d
			}, "orphaned")
			if forget {
				p.forget(uid, w)
				continue
			}
		case w.status.restartRequested && w.status.finished:
			klog.V(4).InfoS("Pod was re-created with the same UID; forgetting the finished worker so it can restart", "podUID", uid)
			p.forget(uid, w)
			continue
		}
		out[uid] = w.status.workType()
	}
	return out
}

// forget drops a worker's state; its goroutine, if any, ends when it next wakes. Must be called
// with p.mu held.
func (p *PodWorkers) forget(uid types.UID, w *worker) {
	delete(p.workers, uid)
	signal(w)
}

// lastPod is the newest pod the worker was given, or nil.
func lastPod(s podSyncStatus) *v1.Pod {
	switch {
	case s.pending != nil:
		return s.pending.Pod
	case s.active != nil:
		return s.active.Pod
	}
	return nil
}

// status returns a copy of the state of uid. Must be called with p.mu held.
func (p *PodWorkers) status(uid types.UID) (podSyncStatus, bool) {
	w, ok := p.workers[uid]
	if !ok {
		return podSyncStatus{}, false
	}
	return w.status, true
}

// IsPodTerminationRequested reports whether the pod has been asked to terminate (deleted,
// terminal, killed or no longer desired). An unknown pod is not terminating.
func (p *PodWorkers) IsPodTerminationRequested(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.status(uid)
	return ok && s.terminationRequested()
}

// ShouldPodContainersBeTerminating reports whether the worker has stopped syncing the pod for
// good, so no new container can start in it. Unknown pods should be torn down once SyncKnownPods
// has run.
func (p *PodWorkers) ShouldPodContainersBeTerminating(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.status(uid); ok {
		return s.startedTerminating
	}
	return p.podsSynced
}

// CouldHaveRunningContainers reports whether containers of the pod may be running: true until
// SyncTerminatingPod has succeeded; for an unknown pod, true until SyncKnownPods has run.
func (p *PodWorkers) CouldHaveRunningContainers(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.status(uid); ok {
		return !s.terminated()
	}
	return !p.podsSynced
}

// ShouldPodRuntimeBeRemoved reports whether the pod's runtime objects (sandboxes, exited
// containers) may be removed: the pod is terminated, or unknown once SyncKnownPods has run.
func (p *PodWorkers) ShouldPodRuntimeBeRemoved(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.status(uid); ok {
		return s.terminated()
	}
	return p.podsSynced
}

// ShouldPodContentBeRemoved reports whether the pod's content (volumes, directories) may be
// removed: the pod was evicted, or it is deleted and terminated, or unknown once SyncKnownPods
// has run.
func (p *PodWorkers) ShouldPodContentBeRemoved(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.status(uid); ok {
		return s.evicted || (s.deleted && s.terminated())
	}
	return p.podsSynced
}

// IsPodKnownTerminated reports whether the pod is known and has no running container.
func (p *PodWorkers) IsPodKnownTerminated(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.status(uid)
	return ok && s.terminated()
}

// Terminating is a pod whose termination was requested and whose containers may still run.
type Terminating struct {
	Pod *v1.Pod
	// Since is when termination was requested; GracePeriod is the one in force, in seconds.
	Since       time.Time
	GracePeriod int64
}

// TerminatingPods lists the pods being terminated (asked to, not yet without containers), so
// that a pod no source wants any more can still be shown as terminating until it has stopped.
func (p *PodWorkers) TerminatingPods() []Terminating {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Terminating
	for _, w := range p.workers {
		s := &w.status
		if !s.terminationRequested() || s.terminated() {
			continue
		}
		var pod *v1.Pod
		if s.active != nil {
			pod = s.active.Pod
		} else if s.pending != nil {
			pod = s.pending.Pod
		}
		if pod != nil {
			out = append(out, Terminating{Pod: pod, Since: s.terminatingAt, GracePeriod: s.gracePeriod})
		}
	}
	return out
}

// TerminationRequest returns, for a pod whose termination was requested, the effective kill
// options: the grace period in force, the last kill reason and whether it is an eviction. The
// Syncer uses it to write the final status.
func (p *PodWorkers) TerminationRequest(uid types.UID) (KillPodOptions, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.status(uid)
	if !ok || !s.terminationRequested() {
		return KillPodOptions{}, false
	}
	grace := s.gracePeriod
	return KillPodOptions{PodTerminationGracePeriodSecondsOverride: &grace, Reason: s.kill.Reason,
		Message: s.kill.Message, DisruptionTarget: s.kill.DisruptionTarget, Evict: s.evicted}, true
}
