package podworkers

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var (
	t0  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now = t0.Add(time.Minute)
)

func i64(v int64) *int64 { return &v }

// newPod returns pod uid at generation gen, with a 30s termination grace period.
func newPod(uid string, gen int64) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Name: uid, Namespace: "default", Generation: gen},
		Spec:       v1.PodSpec{TerminationGracePeriodSeconds: i64(30)},
	}
}

func deleted(p *v1.Pod, grace int64) *v1.Pod {
	p = p.DeepCopy()
	ts := metav1.NewTime(t0)
	p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &ts, &grace
	return p
}

func withPhase(p *v1.Pod, phase v1.PodPhase) *v1.Pod {
	p = p.DeepCopy()
	p.Status.Phase = phase
	return p
}

func upd(t UpdateType, p *v1.Pod) UpdatePodOptions { return UpdatePodOptions{UpdateType: t, Pod: p} }

func kill(p *v1.Pod, override *int64, reason string) UpdatePodOptions {
	return UpdatePodOptions{UpdateType: SyncPodKill, Pod: p,
		KillPodOptions: &KillPodOptions{PodTerminationGracePeriodSecondsOverride: override, Reason: reason}}
}

// killed is the pending kill the pod worker stores for a terminating pod.
func killed(p *v1.Pod, grace int64, reason string, evict bool) *UpdatePodOptions {
	return &UpdatePodOptions{UpdateType: SyncPodKill, Pod: p,
		KillPodOptions: &KillPodOptions{PodTerminationGracePeriodSecondsOverride: &grace, Reason: reason, Evict: evict}}
}

func ptr(u UpdatePodOptions) *UpdatePodOptions { return &u }

func mod(s podSyncStatus, f func(*podSyncStatus)) podSyncStatus { f(&s); return s }

var (
	v0, v1p, v2, v3 = newPod("a", 0), newPod("a", 1), newPod("a", 2), newPod("a", 3)

	// syncing: the worker has synced v0 and is idle.
	syncing = podSyncStatus{firstSeenAt: t0, active: ptr(upd(SyncPodCreate, v0))}
	// busy: the worker is in SyncPod for v0.
	busy = mod(syncing, func(s *podSyncStatus) { s.working = true })
	// busyPending: busy, and v1 is waiting.
	busyPending = mod(busy, func(s *podSyncStatus) { s.pending = ptr(upd(SyncPodUpdate, v1p)) })
	// terminating: killed with 30s while busy; the kill is pending.
	terminating = mod(busy, func(s *podSyncStatus) {
		s.terminatingAt, s.gracePeriod, s.kill.Reason = t0, 30, "Preempted"
		s.pending = killed(v0, 30, "Preempted", false)
	})
	// terminatingBusy: the worker is in SyncTerminatingPod with 30s, nothing pending.
	terminatingBusy = mod(terminating, func(s *podSyncStatus) {
		s.pending, s.startedTerminating, s.active = nil, true, killed(v0, 30, "Preempted", false)
	})
	// terminated: SyncTerminatingPod succeeded; the worker is in SyncTerminatedPod.
	terminated = mod(terminatingBusy, func(s *podSyncStatus) { s.terminatedAt = t0 })
	// finished: SyncTerminatedPod succeeded.
	finished = mod(terminated, func(s *podSyncStatus) { s.finished, s.working = true, false })
)

func TestTransition(t *testing.T) {
	tests := []struct {
		name   string
		state  podSyncStatus
		update UpdatePodOptions
		want   podSyncStatus
		queued bool
		cancel bool
	}{{
		name:   "create of an unknown pod is queued",
		update: upd(SyncPodCreate, v0),
		want:   podSyncStatus{firstSeenAt: now, pending: ptr(upd(SyncPodCreate, v0)), working: true},
		queued: true,
	}, {
		name:   "update while busy with one pending replaces it (coalescing)",
		state:  busyPending,
		update: upd(SyncPodUpdate, v2),
		want:   mod(busyPending, func(s *podSyncStatus) { s.pending = ptr(upd(SyncPodUpdate, v2)) }),
		queued: true,
	}, {
		name:   "kill options on an update of a syncing pod are dropped",
		state:  syncing,
		update: UpdatePodOptions{UpdateType: SyncPodSync, Pod: v0, KillPodOptions: &KillPodOptions{Reason: "x"}},
		want:   mod(syncing, func(s *podSyncStatus) { s.pending, s.working = ptr(upd(SyncPodSync, v0)), true }),
		queued: true,
	}, {
		name:   "kill while busy: terminating with the spec's grace period, the sync is cancelled",
		state:  busyPending,
		update: kill(v1p, nil, "Preempted"),
		want: mod(busyPending, func(s *podSyncStatus) {
			s.terminatingAt, s.gracePeriod, s.kill.Reason = now, 30, "Preempted"
			s.pending = killed(v1p, 30, "Preempted", false)
		}),
		queued: true, cancel: true,
	}, {
		name:   "an eviction marks the pod evicted",
		state:  busy,
		update: UpdatePodOptions{UpdateType: SyncPodKill, Pod: v0, KillPodOptions: &KillPodOptions{Evict: true, Reason: "Evicted"}},
		want: mod(busy, func(s *podSyncStatus) {
			s.terminatingAt, s.gracePeriod, s.kill.Reason, s.evicted = now, 30, "Evicted", true
			s.pending = killed(v0, 30, "Evicted", true)
		}),
		queued: true, cancel: true,
	}, {
		name:   "a later update does not displace a pending kill: it becomes the kill, with the latest pod",
		state:  terminating,
		update: upd(SyncPodUpdate, v2),
		want:   mod(terminating, func(s *podSyncStatus) { s.pending = killed(v2, 30, "Preempted", false) }),
		queued: true,
	}, {
		name:   "a second kill with a shorter grace period shrinks it and cancels the termination in flight",
		state:  terminatingBusy,
		update: kill(v0, i64(10), ""),
		want: mod(terminatingBusy, func(s *podSyncStatus) {
			s.gracePeriod, s.pending, s.working = 10, killed(v0, 10, "Preempted", false), true
		}),
		queued: true, cancel: true,
	}, {
		name:   "a second kill with a longer grace period does not grow it",
		state:  terminatingBusy,
		update: kill(v0, i64(60), "Evicted"),
		want: mod(terminatingBusy, func(s *podSyncStatus) {
			s.kill.Reason, s.pending, s.working = "Evicted", killed(v0, 30, "Evicted", false), true
		}),
		queued: true,
	}, {
		name:   "a kill with a zero grace period gets one second",
		state:  busy,
		update: kill(v0, i64(0), ""),
		want: mod(busy, func(s *podSyncStatus) {
			s.terminatingAt, s.gracePeriod, s.pending = now, 1, killed(v0, 1, "", false)
		}),
		queued: true, cancel: true,
	}, {
		name:   "deletionTimestamp: terminating with the pod's deletionGracePeriodSeconds",
		state:  busy,
		update: upd(SyncPodUpdate, deleted(v1p, 5)),
		want: mod(busy, func(s *podSyncStatus) {
			s.terminatingAt, s.gracePeriod, s.deleted = now, 5, true
			s.pending = killed(deleted(v1p, 5), 5, "", false)
		}),
		queued: true, cancel: true,
	}, {
		name:   "a shorter deletionGracePeriodSeconds shrinks the grace period of a terminating pod",
		state:  terminatingBusy,
		update: upd(SyncPodUpdate, deleted(v1p, 3)),
		want: mod(terminatingBusy, func(s *podSyncStatus) {
			s.gracePeriod, s.pending, s.working = 3, killed(deleted(v1p, 3), 3, "Preempted", false), true
		}),
		queued: true, cancel: true,
	}, {
		name:   "a terminal phase moves the pod to terminating",
		state:  syncing,
		update: upd(SyncPodUpdate, withPhase(v1p, v1.PodSucceeded)),
		want: mod(syncing, func(s *podSyncStatus) {
			s.terminatingAt, s.gracePeriod, s.working = now, 30, true
			s.pending = killed(withPhase(v1p, v1.PodSucceeded), 30, "", false)
		}),
		queued: true, cancel: true,
	}, {
		name:   "an unknown pod already deleted goes straight to terminating",
		update: upd(SyncPodCreate, deleted(v0, 0)),
		want: podSyncStatus{firstSeenAt: now, terminatingAt: now, gracePeriod: 1, deleted: true, working: true,
			pending: &UpdatePodOptions{UpdateType: SyncPodKill, Pod: deleted(v0, 0),
				KillPodOptions: &KillPodOptions{PodTerminationGracePeriodSecondsOverride: i64(1)}}},
		queued: true, cancel: true,
	}, {
		name:   "create of a terminating pod with the same UID only asks for a restart",
		state:  terminating,
		update: upd(SyncPodCreate, v3),
		want:   mod(terminating, func(s *podSyncStatus) { s.restartRequested = true }),
	}, {
		name:   "update of a terminated pod is queued for SyncTerminatedPod, without kill options",
		state:  terminated,
		update: kill(v2, i64(1), "x"),
		want:   mod(terminated, func(s *podSyncStatus) { s.pending = &UpdatePodOptions{UpdateType: SyncPodKill, Pod: v2} }),
		queued: true,
	}, {
		name:   "a finished pod ignores updates",
		state:  finished,
		update: upd(SyncPodUpdate, v3),
		want:   finished,
	}, {
		name:   "a finished pod re-created with the same UID asks for a restart",
		state:  finished,
		update: upd(SyncPodCreate, v3),
		want:   mod(finished, func(s *podSyncStatus) { s.restartRequested = true }),
	}, {
		name:   "re-creation with a new UID is a new pod",
		update: upd(SyncPodCreate, newPod("b", 0)),
		want:   podSyncStatus{firstSeenAt: now, pending: ptr(upd(SyncPodCreate, newPod("b", 0))), working: true},
		queued: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, d := transition(tt.state, tt.update, now)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("state:\n got  %+v\n want %+v", got, tt.want)
				if got.pending != nil && tt.want.pending != nil {
					t.Errorf("pending: got %+v %+v, want %+v %+v", *got.pending, got.pending.KillPodOptions, *tt.want.pending, tt.want.pending.KillPodOptions)
				}
			}
			if d.queued != tt.queued || d.cancel != tt.cancel {
				t.Errorf("decision = queued %v cancel %v, want %v %v (%s)", d.queued, d.cancel, tt.queued, tt.cancel, d.why)
			}
		})
	}
}

func TestEffectiveGracePeriod(t *testing.T) {
	noSpec := &v1.Pod{}
	tests := []struct {
		name          string
		current       int64
		pod           *v1.Pod
		opts          *KillPodOptions
		want          int64
		wantShortened bool
	}{
		{"spec default", 0, v0, nil, 30, false},
		{"no spec: at least 1", 0, noSpec, nil, 1, false},
		{"deletion grace wins over spec", 0, deleted(v0, 45), nil, 45, false},
		{"override wins over deletion grace when shorter", 0, deleted(v0, 45), &KillPodOptions{PodTerminationGracePeriodSecondsOverride: i64(2)}, 2, false},
		{"shorter override shrinks", 30, v0, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: i64(10)}, 10, true},
		{"longer override ignored", 30, v0, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: i64(60)}, 30, false},
		{"zero override is 1", 30, v0, &KillPodOptions{PodTerminationGracePeriodSecondsOverride: i64(0)}, 1, true},
		{"kept when nothing new", 12, v0, nil, 12, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, shortened := effectiveGracePeriod(tt.current, tt.pod, tt.opts)
			if got != tt.want || shortened != tt.wantShortened {
				t.Errorf("effectiveGracePeriod = %d, %v; want %d, %v", got, shortened, tt.want, tt.wantShortened)
			}
		})
	}
}

func TestBegin(t *testing.T) {
	tests := []struct {
		name   string
		state  podSyncStatus
		want   podSyncStatus
		work   podWork
		wantOK bool
	}{{
		name:  "nothing pending",
		state: busy,
		want:  mod(busy, func(s *podSyncStatus) { s.working = false }),
	}, {
		name:   "a pending update is taken up and becomes active",
		state:  busyPending,
		want:   mod(busy, func(s *podSyncStatus) { s.active = ptr(upd(SyncPodUpdate, v1p)) }),
		work:   podWork{workType: SyncPod, options: upd(SyncPodUpdate, v1p)},
		wantOK: true,
	}, {
		name:  "a pending kill starts the termination with the grace period in force",
		state: terminating,
		want: mod(terminating, func(s *podSyncStatus) {
			s.pending, s.active, s.startedTerminating = nil, killed(v0, 30, "Preempted", false), true
		}),
		work:   podWork{workType: TerminatingPod, options: *killed(v0, 30, "Preempted", false), gracePeriod: 30, failure: Failure{Reason: "Preempted"}},
		wantOK: true,
	}, {
		name:  "terminated work keeps the last kill options in the active update",
		state: mod(terminated, func(s *podSyncStatus) { s.pending = ptr(upd(SyncPodKill, v2)) }),
		want: mod(terminated, func(s *podSyncStatus) {
			s.active = &UpdatePodOptions{UpdateType: SyncPodKill, Pod: v2, KillPodOptions: terminated.active.KillPodOptions}
		}),
		work:   podWork{workType: TerminatedPod, options: upd(SyncPodKill, v2)},
		wantOK: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, work, ok := begin(tt.state)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("state:\n got  %+v\n want %+v", got, tt.want)
			}
			if ok != tt.wantOK || !reflect.DeepEqual(work, tt.work) {
				t.Errorf("begin = %+v, %v; want %+v, %v", work, ok, tt.work, tt.wantOK)
			}
		})
	}
}
