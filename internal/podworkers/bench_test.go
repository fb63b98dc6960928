package podworkers

import (
	"testing"
	"time"
)

// BenchmarkSyncCycle measures the pod worker's bookkeeping for one periodic resync of a running
// pod (every pod, every ResyncInterval, and on every PLEG event): the update is queued
// (transition), taken up (begin) and completed (complete).
func BenchmarkSyncCycle(b *testing.B) {
	t := timing{resync: time.Minute, backOff: 10 * time.Second}
	u := upd(SyncPodSync, v0)
	b.ReportAllocs()
	for b.Loop() {
		s, d := transition(syncing, u, now)
		if !d.queued {
			b.Fatal("not queued")
		}
		s, w, ok := begin(s)
		if !ok {
			b.Fatal("nothing to begin")
		}
		if _, o := complete(s, w, false, nil, now, t); !o.requeue {
			b.Fatal("not requeued")
		}
	}
}

// BenchmarkCoalesce measures an update arriving while the worker is busy and another update is
// pending: the newer replaces it (syncing), or is folded into the pending kill (terminating).
func BenchmarkCoalesce(b *testing.B) {
	for _, c := range []struct {
		name string
		s    podSyncStatus
	}{
		{"syncing", busyPending},
		{"terminating", terminating},
	} {
		b.Run(c.name, func(b *testing.B) {
			u := upd(SyncPodUpdate, v2)
			b.ReportAllocs()
			for b.Loop() {
				if _, d := transition(c.s, u, now); !d.queued {
					b.Fatal("not queued")
				}
			}
		})
	}
}

// BenchmarkUpdatePod measures UpdatePod, the sync loop's entry point, for a pod whose worker is
// busy: the update is coalesced under the lock and the worker signalled.
func BenchmarkUpdatePod(b *testing.B) {
	h := newHarness(0)
	b.Cleanup(h.pw.Stop)
	h.pw.mu.Lock()
	h.pw.workers[v0.UID] = &worker{status: busy, wake: make(chan struct{}, 1), running: true}
	h.pw.mu.Unlock()
	u := upd(SyncPodSync, v1p)
	b.ReportAllocs()
	for b.Loop() {
		h.pw.UpdatePod(u)
	}
	if s, _ := h.pw.status(v0.UID); s.pending == nil || s.pending.Pod != v1p {
		b.Fatal("update not pending")
	}
}
