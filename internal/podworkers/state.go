package podworkers

import (
	"errors"
	"time"

	v1 "k8s.io/api/core/v1"
)

// podSyncStatus is one pod's state machine: plain data, changed only by the pure functions in
// this file (transition, begin, complete, orphan), which the PodWorkers call under its lock.
type podSyncStatus struct {
	// firstSeenAt is when the pod worker first heard of the pod; zero for an unknown pod.
	firstSeenAt time.Time
	// terminatingAt is when termination was requested; terminatedAt is when SyncTerminatingPod
	// succeeded (no container runs any more).
	terminatingAt time.Time
	terminatedAt  time.Time
	// startedTerminating is set once the worker has stopped calling SyncPod for good: from then
	// on no new container can start.
	startedTerminating bool
	// gracePeriod is the effective grace period in seconds (>= 1) once terminating; it only
	// shrinks.
	gracePeriod int64
	// kill is the last KillPodOptions with a non-empty Reason.
	kill Failure

	// pending is the next update for the worker: the latest one wins, except that once the pod
	// is terminating every pending update is a kill.
	pending *UpdatePodOptions
	// active is what the worker last took up, with KillPodOptions accumulated; nil until the
	// worker has started on the pod.
	active *UpdatePodOptions
	// working is true while an update is pending or being synced.
	working bool

	deleted          bool // deletionTimestamp seen, or orphaned by SyncKnownPods
	evicted          bool // the kill that started the termination was an eviction
	finished         bool // SyncTerminatedPod succeeded; the worker is gone
	restartRequested bool // a create arrived for this UID after termination was requested
}

func (s *podSyncStatus) known() bool                { return !s.firstSeenAt.IsZero() }
func (s *podSyncStatus) terminationRequested() bool { return !s.terminatingAt.IsZero() }
func (s *podSyncStatus) terminated() bool           { return !s.terminatedAt.IsZero() }

func (s *podSyncStatus) workType() WorkType {
	switch {
	case s.terminated():
		return TerminatedPod
	case s.terminationRequested():
		return TerminatingPod
	}
	return SyncPod
}

// decision is what transition tells the PodWorkers to do besides storing the new state.
type decision struct {
	// queued: a pending update was stored; wake the worker (start it if it does not run).
	queued bool
	// cancel: cancel the sync in flight (the pod began terminating or its grace period shrank).
	cancel bool
	// why explains the decision, for the log.
	why string
}

// transition applies an UpdatePod request to a pod's state. It is upstream's UpdatePod minus
// the locking, channels and goroutines.
func transition(s podSyncStatus, u UpdatePodOptions, now time.Time) (podSyncStatus, decision) {
	pod := u.Pod
	first := !s.known()
	if first {
		s.firstSeenAt = now
	}
	// A create for a UID already on its way out means the source re-created the pod with the
	// same UID (static pods with a fixed UID): it restarts once SyncKnownPods forgets the old one.
	if !first && s.terminationRequested() && u.UpdateType == SyncPodCreate {
		s.restartRequested = true
		return s, decision{why: "Pod is terminating but was re-created with the same UID; it restarts once its worker is forgotten"}
	}
	// Once finished, a UID never runs again until SyncKnownPods forgets it.
	if s.finished {
		return s, decision{why: "Pod worker is finished; update ignored"}
	}

	why := "Pod update queued"
	became := false
	if !s.terminationRequested() {
		became = true
		switch {
		case pod.DeletionTimestamp != nil:
			s.deleted = true
			why = "Pod is marked for deletion; begin teardown"
		case pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed:
			why = "Pod is in a terminal phase; begin teardown"
		case u.UpdateType == SyncPodKill:
			why = "Pod is being killed; begin teardown"
			if u.KillPodOptions != nil && u.KillPodOptions.Evict {
				s.evicted = true
				why = "Pod is being evicted; begin teardown"
			}
		default:
			became = false
		}
		if became {
			s.terminatingAt = now
		}
	}

	shortened := false
	switch {
	case s.terminated():
		// Only SyncTerminatedPod remains; the update carries the latest pod to it (or retries it).
		u.KillPodOptions = nil
	case s.terminationRequested():
		u, shortened = asKill(&s, u)
		if shortened {
			why = "Pod grace period shortened"
		}
	default:
		// KillPodOptions mean nothing to a pod that is syncing.
		u.KillPodOptions = nil
	}

	s.pending = &u
	s.working = true
	return s, decision{queued: true, cancel: became || shortened, why: why}
}

// asKill turns an update of a terminating pod into a kill carrying the effective grace period,
// reason and eviction, so that a pending kill is never overwritten by anything but a kill. It
// records the new grace period and reason in s and reports whether the grace period shrank.
func asKill(s *podSyncStatus, u UpdatePodOptions) (UpdatePodOptions, bool) {
	if o := u.KillPodOptions; o != nil && o.Reason != "" {
		s.kill = Failure{Reason: o.Reason, Message: o.Message, DisruptionTarget: o.DisruptionTarget}
	}
	grace, shortened := effectiveGracePeriod(s.gracePeriod, u.Pod, u.KillPodOptions)
	s.gracePeriod = grace
	u.UpdateType = SyncPodKill
	u.KillPodOptions = &KillPodOptions{
		PodTerminationGracePeriodSecondsOverride: &grace,
		Reason:                                   s.kill.Reason,
		Message:                                  s.kill.Message,
		DisruptionTarget:                         s.kill.DisruptionTarget,
		Evict:                                    s.evicted,
	}
	return u, shortened
}

// effectiveGracePeriod is upstream's calculateEffectiveGracePeriod: starting from the current
// grace period (0: none yet), the pod's deletionGracePeriodSeconds and the kill's override may
// only shorten it; with neither, the pod's terminationGracePeriodSeconds is the default. The
// result is at least 1. shortened reports a change of an already set grace period.
func effectiveGracePeriod(current int64, pod *v1.Pod, opts *KillPodOptions) (grace int64, shortened bool) {
	grace = current
	overridden := false
	if d := pod.DeletionGracePeriodSeconds; d != nil && (grace == 0 || *d < grace) {
		grace, overridden = *d, true
	}
	if opts != nil {
		if o := opts.PodTerminationGracePeriodSecondsOverride; o != nil && (grace == 0 || *o < grace) {
			grace, overridden = *o, true
		}
	}
	if !overridden && grace == 0 && pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if grace < 1 {
		grace = 1
	}
	return grace, current != 0 && current != grace
}

// podWork is one unit of work taken up by the worker goroutine.
type podWork struct {
	workType    WorkType
	options     UpdatePodOptions
	gracePeriod int64   // for TerminatingPod
	failure     Failure // for TerminatingPod
}

// begin takes the pending update for the worker (upstream's startPodSync). ok is false when
// nothing is pending.
func begin(s podSyncStatus) (_ podSyncStatus, w podWork, ok bool) {
	if s.pending == nil {
		s.working = false
		return s, w, false
	}
	w = podWork{workType: s.workType(), options: *s.pending}
	s.pending = nil
	s.active = merge(s.active, w.options)
	if w.workType == TerminatingPod {
		// From here on SyncPod is never called again: no new container can start.
		s.startedTerminating = true
		w.gracePeriod, w.failure = s.gracePeriod, s.kill
	}
	return s, w, true
}

// merge records the update the worker takes up, keeping the last KillPodOptions seen.
func merge(active *UpdatePodOptions, u UpdatePodOptions) *UpdatePodOptions {
	out := u
	if out.KillPodOptions == nil && active != nil {
		out.KillPodOptions = active.KillPodOptions
	}
	return &out
}

// outcome is what complete tells the worker goroutine to do.
type outcome struct {
	// requeue asks the Requeuer to sync the pod again after requeueAfter (before jitter).
	requeue      bool
	requeueAfter time.Duration
	// exact: requeue at requeueAfter without jitter (the error said when to retry).
	exact bool
	// again: an update is pending; take it up now.
	again bool
	// exit: the pod is finished; the worker goroutine ends.
	exit bool
}

// timing is the part of Config complete needs.
type timing struct{ resync, backOff time.Duration }

// complete records the result of a piece of work (upstream's completeSync, completeTerminating,
// completeTerminated and completeWork). Phase changes take effect at once through a pending
// update, without a round trip through the Requeuer.
func complete(s podSyncStatus, w podWork, isTerminal bool, err error, now time.Time, t timing) (podSyncStatus, outcome) {
	var o outcome
	switch {
	case err != nil:
		o.requeue, o.requeueAfter = true, min(t.backOff, t.resync)
		var ra RetryAt
		if errors.As(err, &ra) && !ra.RetryAt().IsZero() {
			o.requeueAfter, o.exact = max(ra.RetryAt().Sub(now), 0), true
		}
	case w.workType == TerminatedPod:
		s.finished, s.working, s.pending = true, false, nil
		return s, outcome{exit: true}
	case w.workType == TerminatingPod:
		s.terminatedAt = now
		s = requeueLast(s)
	case isTerminal:
		// The pod completed by itself: terminate it (unless a kill got there first).
		if !s.terminationRequested() {
			s.terminatingAt = now
		}
		s.startedTerminating = true
		s = requeueLast(s)
	default:
		o.requeue, o.requeueAfter = true, t.resync
	}
	o.again = s.pending != nil
	s.working = o.again
	return s, o
}

// requeueLast makes sure an update is pending for the pod's next phase: the pending one, or else
// a replay of the last one taken up. For a terminating pod it becomes a kill.
func requeueLast(s podSyncStatus) podSyncStatus {
	if s.pending == nil && s.active != nil {
		u := *s.active
		s.pending = &u
	}
	if s.pending != nil && s.terminationRequested() && !s.terminated() {
		u, _ := asKill(&s, *s.pending)
		s.pending = &u
	}
	return s
}

// orphan applies SyncKnownPods to a pod no longer desired (upstream's removeTerminatedWorker for
// an orphan). forget says the state can be dropped: the pod is finished, or the worker never
// took it up. Otherwise the pod is driven to termination with its last known spec.
func orphan(s podSyncStatus, now time.Time) (_ podSyncStatus, d decision, forget bool) {
	if s.finished {
		return s, decision{why: "Pod is finished and no longer desired; forgetting it"}, true
	}
	s.deleted = true
	if s.active == nil {
		return s, decision{why: "Pod is no longer desired and never started; forgetting it"}, true
	}
	last := s.active
	if s.pending != nil {
		last = s.pending
	}
	s, d = transition(s, UpdatePodOptions{UpdateType: SyncPodKill, Pod: last.Pod}, now)
	d.why = "Pod is no longer desired; driving it to termination"
	return s, d, false
}
