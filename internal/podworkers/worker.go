package podworkers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

// run is the goroutine of one pod (upstream's podWorkerLoop): it takes up the pending update,
// syncs the pod on a runtime view newer than its last sync, records the result and goes on
// until the pod is finished, forgotten, or the pod workers stop.
func (p *PodWorkers) run(uid types.UID, w *worker) {
	defer p.wg.Done()
	defer klog.V(3).InfoS("Pod worker stopped", "podUID", uid)
	// lastSyncTime is the clock reading taken when the last call to the Syncer returned; the
	// next sync waits for a runtime view newer than it. Zero for the first sync.
	var lastSyncTime time.Time
	for {
		select {
		case <-p.ctx.Done():
			p.mu.Lock()
			w.running = false
			p.mu.Unlock()
			return
		case <-w.wake:
		}
		ctx, work, ok, stop := p.take(uid, w)
		if stop {
			return
		}
		if !ok {
			continue
		}
		start := p.clock.Now()
		isTerminal, err := p.sync(ctx, uid, work, &lastSyncTime)
		exit := p.finish(uid, w, work, isTerminal, err)
		if p.metrics != nil {
			op := work.options.UpdateType.String()
			if work.workType == TerminatedPod {
				op = "terminated"
			}
			p.metrics.ObservePodWorker(op, p.clock.Since(start))
		}
		if exit {
			return
		}
	}
}

// take consumes the pending update and gives the work a context that UpdatePod can cancel. stop
// is true when the worker has been forgotten or the pod workers stopped.
func (p *PodWorkers) take(uid types.UID, w *worker) (ctx context.Context, work podWork, ok, stop bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.workers[uid] != w || p.stopped {
		w.running = false
		return nil, work, false, true
	}
	w.status, work, ok = begin(w.status)
	if !ok {
		return nil, work, false, false
	}
	select { // the token, if any, is for the update just taken
	case <-w.wake:
	default:
	}
	ctx, w.cancelSync = context.WithCancel(p.ctx)
	return ctx, work, true, false
}

// sync calls the Syncer for the work's phase on a runtime view newer than *lastSyncTime, and
// moves *lastSyncTime to the clock reading taken when the call returned, as upstream: the next
// sync then waits for a runtime view that includes what this one did (a container it just
// created), rather than acting again on a view taken while it ran.
func (p *PodWorkers) sync(ctx context.Context, uid types.UID, work podWork, lastSyncTime *time.Time) (isTerminal bool, err error) {
	pod := work.options.Pod
	klog.V(4).InfoS("Processing pod event", "pod", klog.KObj(pod), "podUID", uid,
		"updateType", work.options.UpdateType, "workType", work.workType)
	status, err := p.cache.GetNewerThan(ctx, uid, *lastSyncTime)
	if err != nil {
		return false, fmt.Errorf("determining pod status: %w", err)
	}
	defer func() { *lastSyncTime = p.clock.Now() }()
	switch work.workType {
	case TerminatedPod:
		return false, p.syncer.SyncTerminatedPod(ctx, pod, status)
	case TerminatingPod:
		return false, p.syncer.SyncTerminatingPod(ctx, pod, status, work.gracePeriod, work.failure)
	}
	return p.syncer.SyncPod(ctx, work.options.UpdateType, pod, status)
}

// finish records the result of the work, requeues the pod with the Requeuer and wakes the
// worker again if an update is pending. It reports whether the goroutine must end.
func (p *PodWorkers) finish(uid types.UID, w *worker, work podWork, isTerminal bool, err error) (exit bool) {
	pod := work.options.Pod
	switch {
	case errors.Is(err, context.Canceled):
		klog.V(2).InfoS("Sync cancelled", "pod", klog.KObj(pod), "podUID", uid, "workType", work.workType)
	case err != nil:
		klog.ErrorS(err, "Error syncing pod, skipping", "pod", klog.KObj(pod), "podUID", uid, "workType", work.workType)
	}

	p.mu.Lock()
	w.cancelSync()
	w.cancelSync = nil
	stopping := p.stopped
	if p.workers[uid] != w { // forgotten meanwhile; never happens to a started pod, but be safe
		w.running = false
		p.mu.Unlock()
		return true
	}
	before := w.status.workType()
	var o outcome
	w.status, o = complete(w.status, work, isTerminal, err, p.clock.Now(), p.timing)
	if after := w.status.workType(); after != before {
		klog.V(2).InfoS("Pod worker state changed", "pod", klog.KObj(pod), "podUID", uid, "from", before, "to", after,
			"gracePeriod", w.status.gracePeriod)
	}
	if o.exit {
		w.running = false
		klog.V(2).InfoS("Pod worker finished", "pod", klog.KObj(pod), "podUID", uid)
	}
	if o.again {
		signal(w)
	}
	p.mu.Unlock()

	if o.requeue && !stopping {
		after := o.requeueAfter
		if p.jitter > 0 && !o.exact {
			after = wait.Jitter(after, p.jitter)
		}
		p.requeuer.Enqueue(uid, after)
	}
	if o.exit && !stopping {
		p.notifyFinished(uid)
	}
	return o.exit
}

// notifyFinished tells Deps.Finished that the worker is done with the pod. It blocks until the
// UID is received or the pod workers stop.
func (p *PodWorkers) notifyFinished(uid types.UID) {
	if p.finished == nil {
		return
	}
	select {
	case p.finished <- uid:
	case <-p.ctx.Done():
	}
}
