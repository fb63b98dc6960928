package podworkers

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestComplete(t *testing.T) {
	tm := timing{resync: time.Minute, backOff: 10 * time.Second}
	errSync := errors.New("boom")
	syncWork := podWork{workType: SyncPod, options: upd(SyncPodCreate, v0)}
	terminatingWork := podWork{workType: TerminatingPod, options: *killed(v0, 30, "Preempted", false), gracePeriod: 30}
	terminatedWork := podWork{workType: TerminatedPod, options: *killed(v0, 30, "Preempted", false)}
	tests := []struct {
		name       string
		state      podSyncStatus
		work       podWork
		isTerminal bool
		err        error
		timing     timing
		want       podSyncStatus
		outcome    outcome
	}{{
		name:    "sync succeeded, nothing pending: resync later, idle",
		state:   busy,
		work:    syncWork,
		want:    syncing,
		outcome: outcome{requeue: true, requeueAfter: time.Minute},
	}, {
		name:    "sync succeeded with an update pending: resync later and take it up now",
		state:   busyPending,
		work:    syncWork,
		want:    busyPending,
		outcome: outcome{requeue: true, requeueAfter: time.Minute, again: true},
	}, {
		name:    "sync failed: back off",
		state:   busy,
		work:    syncWork,
		err:     errSync,
		want:    syncing,
		outcome: outcome{requeue: true, requeueAfter: 10 * time.Second},
	}, {
		name:    "an error that says when to retry is requeued then, exactly",
		state:   busy,
		work:    syncWork,
		err:     errors.Join(errSync, retryAt(now.Add(17*time.Second))),
		want:    syncing,
		outcome: outcome{requeue: true, requeueAfter: 17 * time.Second, exact: true},
	}, {
		name:    "a retry time already past requeues at once",
		state:   busy,
		work:    syncWork,
		err:     retryAt(now.Add(-time.Second)),
		want:    syncing,
		outcome: outcome{requeue: true, requeueAfter: 0, exact: true},
	}, {
		name:    "the back-off never exceeds the resync interval",
		state:   busy,
		work:    syncWork,
		err:     errSync,
		timing:  timing{resync: 5 * time.Second, backOff: 10 * time.Second},
		want:    syncing,
		outcome: outcome{requeue: true, requeueAfter: 5 * time.Second},
	}, {
		name:       "sync reports the pod terminal: terminating at once with the spec's grace period",
		state:      busy,
		work:       syncWork,
		isTerminal: true,
		want: mod(busy, func(s *podSyncStatus) {
			s.terminatingAt, s.startedTerminating, s.gracePeriod = now, true, 30
			s.pending = killed(v0, 30, "", false)
		}),
		outcome: outcome{again: true},
	}, {
		name:       "sync reports the pod terminal with an update pending: the update becomes the kill",
		state:      busyPending,
		work:       syncWork,
		isTerminal: true,
		want: mod(busyPending, func(s *podSyncStatus) {
			s.terminatingAt, s.startedTerminating, s.gracePeriod = now, true, 30
			s.pending = killed(v1p, 30, "", false)
		}),
		outcome: outcome{again: true},
	}, {
		name:       "sync reports the pod terminal after a kill arrived: the kill stands",
		state:      terminating,
		work:       syncWork,
		isTerminal: true,
		want:       mod(terminating, func(s *podSyncStatus) { s.startedTerminating = true }),
		outcome:    outcome{again: true},
	}, {
		name:    "sync cancelled by a kill: back off, and take the kill up now",
		state:   terminating,
		work:    syncWork,
		err:     errSync,
		want:    terminating,
		outcome: outcome{requeue: true, requeueAfter: 10 * time.Second, again: true},
	}, {
		name:  "termination succeeded: terminated, replay the last update for SyncTerminatedPod",
		state: terminatingBusy,
		work:  terminatingWork,
		want: mod(terminatingBusy, func(s *podSyncStatus) {
			s.terminatedAt, s.pending = now, killed(v0, 30, "Preempted", false)
		}),
		outcome: outcome{again: true},
	}, {
		name:    "termination failed: still terminating, back off",
		state:   terminatingBusy,
		work:    terminatingWork,
		err:     errSync,
		want:    mod(terminatingBusy, func(s *podSyncStatus) { s.working = false }),
		outcome: outcome{requeue: true, requeueAfter: 10 * time.Second},
	}, {
		name:    "terminated pod cleaned up: finished, the worker exits, a pending update is dropped",
		state:   mod(terminated, func(s *podSyncStatus) { s.pending = ptr(upd(SyncPodSync, v2)) }),
		work:    terminatedWork,
		want:    finished,
		outcome: outcome{exit: true},
	}, {
		name:    "terminated cleanup failed: back off",
		state:   terminated,
		work:    terminatedWork,
		err:     errSync,
		want:    mod(terminated, func(s *podSyncStatus) { s.working = false }),
		outcome: outcome{requeue: true, requeueAfter: 10 * time.Second},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmg := tm
			if tt.timing != (timing{}) {
				tmg = tt.timing
			}
			got, o := complete(tt.state, tt.work, tt.isTerminal, tt.err, now, tmg)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("state:\n got  %+v\n want %+v", got, tt.want)
			}
			if o != tt.outcome {
				t.Errorf("outcome = %+v, want %+v", o, tt.outcome)
			}
		})
	}
}

func TestOrphan(t *testing.T) {
	notStarted := podSyncStatus{firstSeenAt: t0, pending: ptr(upd(SyncPodCreate, v0)), working: true}
	tests := []struct {
		name   string
		state  podSyncStatus
		want   podSyncStatus
		forget bool
		queued bool
		cancel bool
	}{{
		name:   "finished: forgotten",
		state:  finished,
		want:   finished,
		forget: true,
	}, {
		name:   "never taken up by the worker: forgotten",
		state:  notStarted,
		want:   mod(notStarted, func(s *podSyncStatus) { s.deleted = true }),
		forget: true,
	}, {
		name:  "syncing: terminating with the last pod's grace period, the sync is cancelled",
		state: busyPending,
		want: mod(busyPending, func(s *podSyncStatus) {
			s.deleted, s.terminatingAt, s.gracePeriod = true, now, 30
			s.pending = killed(v1p, 30, "", false)
		}),
		queued: true, cancel: true,
	}, {
		name:  "terminating and idle (backing off): the termination is retried",
		state: mod(terminatingBusy, func(s *podSyncStatus) { s.working = false }),
		want: mod(terminatingBusy, func(s *podSyncStatus) {
			s.deleted, s.pending = true, killed(v0, 30, "Preempted", false)
		}),
		queued: true,
	}, {
		name:  "terminated: SyncTerminatedPod is retried",
		state: mod(terminated, func(s *podSyncStatus) { s.working = false }),
		want: mod(terminated, func(s *podSyncStatus) {
			s.deleted, s.pending = true, ptr(upd(SyncPodKill, v0))
		}),
		queued: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, d, forget := orphan(tt.state, now)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("state:\n got  %+v\n want %+v", got, tt.want)
			}
			if forget != tt.forget || d.queued != tt.queued || d.cancel != tt.cancel {
				t.Errorf("orphan = forget %v queued %v cancel %v, want %v %v %v", forget, d.queued, d.cancel, tt.forget, tt.queued, tt.cancel)
			}
		})
	}
}

type retryAt time.Time

func (r retryAt) Error() string      { return "back-off" }
func (r retryAt) RetryAt() time.Time { return time.Time(r) }

var _ RetryAt = retryAt{}
