package podworkers

import (
	"errors"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The tests below run in a synctest bubble: synctest.Wait returns once every pod worker
// goroutine is blocked (idle, or inside a held Syncer call), so no test sleeps.

func TestCoalescesUpdatesWhileBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(0)
		defer h.pw.Stop()
		h.syncer.setHold(kindSync, true)
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("a", 0)))
		synctest.Wait()
		h.syncer.wantCalls(t, syncCall("a", SyncPodCreate, 0))

		for gen := int64(1); gen <= 3; gen++ {
			h.pw.UpdatePod(upd(SyncPodUpdate, newPod("a", gen)))
		}
		h.syncer.release <- struct{}{}
		synctest.Wait()
		h.syncer.release <- struct{}{}
		synctest.Wait()
		h.syncer.wantCalls(t, syncCall("a", SyncPodCreate, 0), syncCall("a", SyncPodUpdate, 3))
		h.requeuer.wantRequeues(t, requeue{"a", time.Minute}, requeue{"a", time.Minute})
	})
}

func TestOneGoroutinePerPod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(0)
		defer h.pw.Stop()
		h.syncer.setHold(kindSync, true)
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("a", 0)))
		synctest.Wait()
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("b", 0)))
		synctest.Wait() // b syncs while a is still in SyncPod
		h.syncer.wantCalls(t, syncCall("a", SyncPodCreate, 0), syncCall("b", SyncPodCreate, 0))
	})
}

func TestKillCancelsSyncAndTerminates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(0)
		defer h.pw.Stop()
		h.syncer.setHold(kindSync, true)
		h.syncer.setHold(kindTerminating, true)
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("a", 0)))
		synctest.Wait()
		if h.pw.IsPodTerminationRequested("a") || h.pw.ShouldPodContainersBeTerminating("a") {
			t.Fatal("a syncing pod is not terminating")
		}

		h.pw.UpdatePod(kill(newPod("a", 0), nil, "Preempted"))
		synctest.Wait() // SyncPod cancelled; SyncTerminatingPod runs with the spec's 30s
		if n := h.syncer.cancelledCalls(); n != 1 {
			t.Fatalf("cancelled syncs = %d, want 1", n)
		}
		h.syncer.wantCalls(t, syncCall("a", SyncPodCreate, 0), terminatingCall("a", 0, 30))
		if !h.pw.IsPodTerminationRequested("a") || !h.pw.ShouldPodContainersBeTerminating("a") || !h.pw.CouldHaveRunningContainers("a") {
			t.Fatal("a terminating pod is terminating and may still run containers")
		}
		if req, ok := h.pw.TerminationRequest("a"); !ok || req.Reason != "Preempted" || *req.PodTerminationGracePeriodSecondsOverride != 30 {
			t.Fatalf("TerminationRequest = %+v, %v", req, ok)
		}

		h.pw.UpdatePod(upd(SyncPodUpdate, newPod("a", 2))) // never syncs again: carried to the last phase
		h.syncer.release <- struct{}{}
		synctest.Wait()
		h.syncer.wantCalls(t, syncCall("a", SyncPodCreate, 0), terminatingCall("a", 0, 30), terminatedCall("a", 2))
		if !h.pw.IsPodKnownTerminated("a") || h.pw.CouldHaveRunningContainers("a") || !h.pw.ShouldPodRuntimeBeRemoved("a") {
			t.Fatal("a finished pod is terminated")
		}
		if h.pw.ShouldPodContentBeRemoved("a") {
			t.Fatal("the content of a killed pod that is not deleted stays")
		}
		// The cancelled SyncPod backs off; moving through the phases needs no requeue.
		h.requeuer.wantRequeues(t, requeue{"a", 10 * time.Second})

		h.pw.UpdatePod(upd(SyncPodSync, newPod("a", 3)))
		synctest.Wait()
		h.syncer.wantCalls(t, syncCall("a", SyncPodCreate, 0), terminatingCall("a", 0, 30), terminatedCall("a", 2))
		// kubelet_pod_worker_duration_seconds: one observation per sync, upstream's labels.
		if got, want := h.metrics.observed(), []string{"create", "kill", "terminated"}; !reflect.DeepEqual(got, want) {
			t.Errorf("pod worker metrics %q, want %q", got, want)
		}
	})
}

func TestPendingKillWinsOverLaterUpdates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(0)
		defer h.pw.Stop()
		h.syncer.setHold(kindSync, true)
		h.syncer.ignoreCancel = true // a SyncPod that does not return early: the kill stays pending
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("a", 0)))
		synctest.Wait()
		h.pw.UpdatePod(kill(newPod("a", 1), i64(5), ""))
		h.pw.UpdatePod(upd(SyncPodUpdate, newPod("a", 2)))
		h.pw.UpdatePod(upd(SyncPodSync, newPod("a", 3)))
		h.syncer.release <- struct{}{}
		synctest.Wait()
		h.syncer.wantCalls(t, syncCall("a", SyncPodCreate, 0), terminatingCall("a", 3, 5), terminatedCall("a", 3))
	})
}

func TestGracePeriodOnlyShrinks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(0)
		defer h.pw.Stop()
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("a", 0)))
		synctest.Wait()
		h.syncer.setHold(kindTerminating, true)
		h.pw.UpdatePod(upd(SyncPodUpdate, deleted(newPod("a", 1), 20)))
		synctest.Wait()
		h.syncer.wantCalls(t, syncCall("a", SyncPodCreate, 0), terminatingCall("a", 1, 20))

		h.pw.UpdatePod(kill(newPod("a", 1), i64(60), "")) // longer: no effect
		synctest.Wait()
		h.syncer.wantCalls(t, syncCall("a", SyncPodCreate, 0), terminatingCall("a", 1, 20))

		h.pw.UpdatePod(kill(newPod("a", 1), i64(10), "")) // shorter: restart the termination
		synctest.Wait()
		h.syncer.wantCalls(t, syncCall("a", SyncPodCreate, 0), terminatingCall("a", 1, 20), terminatingCall("a", 1, 10))
		h.syncer.release <- struct{}{}
		synctest.Wait()
		h.syncer.wantCalls(t, syncCall("a", SyncPodCreate, 0), terminatingCall("a", 1, 20), terminatingCall("a", 1, 10),
			terminatedCall("a", 1))
		if !h.pw.ShouldPodContentBeRemoved("a") {
			t.Fatal("the content of a deleted, terminated pod may be removed")
		}
	})
}

func TestTerminalSyncTerminates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(0)
		defer h.pw.Stop()
		h.syncer.terminal = true
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("a", 0)))
		synctest.Wait()
		h.syncer.wantCalls(t, syncCall("a", SyncPodCreate, 0), terminatingCall("a", 0, 30), terminatedCall("a", 0))
		h.requeuer.wantRequeues(t)
		if !h.pw.IsPodKnownTerminated("a") {
			t.Fatal("pod not terminated")
		}
	})
}

func TestRequeueIntervals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(0)
		defer h.pw.Stop()
		h.syncer.failNext(kindSync, errors.New("image pull failed"))
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("a", 0)))
		synctest.Wait()
		h.requeuer.wantRequeues(t, requeue{"a", 10 * time.Second})
		h.pw.UpdatePod(upd(SyncPodSync, newPod("a", 0)))
		synctest.Wait()
		h.requeuer.wantRequeues(t, requeue{"a", 10 * time.Second}, requeue{"a", time.Minute})

		// A failing termination backs off too, and the sync loop's next update retries it.
		h.syncer.failNext(kindTerminating, errors.New("stop failed"))
		h.pw.UpdatePod(kill(newPod("a", 0), i64(3), ""))
		synctest.Wait()
		h.requeuer.wantRequeues(t, requeue{"a", 10 * time.Second}, requeue{"a", time.Minute}, requeue{"a", 10 * time.Second})
		h.pw.UpdatePod(upd(SyncPodSync, newPod("a", 0)))
		synctest.Wait()
		h.syncer.wantCalls(t, syncCall("a", SyncPodCreate, 0), syncCall("a", SyncPodSync, 0),
			terminatingCall("a", 0, 3), terminatingCall("a", 0, 3), terminatedCall("a", 0))
	})
}

func TestRequeueJitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(0.5)
		defer h.pw.Stop()
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("a", 0)))
		synctest.Wait()
		h.requeuer.mu.Lock()
		defer h.requeuer.mu.Unlock()
		if len(h.requeuer.requeues) != 1 {
			t.Fatalf("requeues = %v", h.requeuer.requeues)
		}
		if d := h.requeuer.requeues[0].after; d < time.Minute || d > 90*time.Second {
			t.Fatalf("requeued after %v, want within [1m, 1m30s]", d)
		}
	})
}

func TestSyncsOnViewNewerThanLastSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(0)
		defer h.pw.Stop()
		h.syncer.clock, h.syncer.step = h.clock, 5*time.Second // each sync takes 5s
		h.cache.errs = []error{errors.New("runtime down")}
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("a", 0)))
		synctest.Wait()
		h.syncer.wantCalls(t) // no view, no sync
		h.requeuer.wantRequeues(t, requeue{"a", 10 * time.Second})

		h.pw.UpdatePod(upd(SyncPodSync, newPod("a", 0)))
		synctest.Wait()
		h.pw.UpdatePod(upd(SyncPodSync, newPod("a", 0)))
		synctest.Wait()
		// First sync: any view. Then: newer than the time the previous sync returned (it took 5 s),
		// so the view includes what that sync did.
		want := []time.Time{{}, {}, t0.Add(5 * time.Second)}
		if got := h.cache.asked(); !reflect.DeepEqual(got, want) {
			t.Fatalf("GetNewerThan minTimes = %v, want %v", got, want)
		}
	})
}

func TestSyncKnownPodsTerminatesUndesiredPods(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(0)
		defer h.pw.Stop()
		a, b := newPod("a", 0), newPod("b", 0)
		if !h.pw.CouldHaveRunningContainers("c") || h.pw.ShouldPodContentBeRemoved("c") {
			t.Fatal("before the first SyncKnownPods an unknown pod may be running")
		}
		h.pw.UpdatePod(upd(SyncPodCreate, a))
		synctest.Wait()
		h.pw.UpdatePod(upd(SyncPodCreate, b))
		synctest.Wait()

		h.syncer.setHold(kindTerminating, true)
		got := h.pw.SyncKnownPods([]*v1.Pod{a})
		if want := map[types.UID]WorkType{"a": SyncPod, "b": TerminatingPod}; !reflect.DeepEqual(got, want) {
			t.Fatalf("SyncKnownPods = %v, want %v", got, want)
		}
		synctest.Wait()
		h.syncer.release <- struct{}{}
		synctest.Wait()
		h.syncer.wantCalls(t, syncCall("a", SyncPodCreate, 0), syncCall("b", SyncPodCreate, 0),
			terminatingCall("b", 0, 30), terminatedCall("b", 0))
		if !h.pw.ShouldPodContentBeRemoved("b") {
			t.Fatal("an orphaned pod is deleted: its content may go once terminated")
		}

		got = h.pw.SyncKnownPods([]*v1.Pod{a})
		if want := map[types.UID]WorkType{"a": SyncPod}; !reflect.DeepEqual(got, want) {
			t.Fatalf("SyncKnownPods = %v, want %v", got, want)
		}
		if h.pw.CouldHaveRunningContainers("b") || !h.pw.ShouldPodRuntimeBeRemoved("b") || h.pw.IsPodKnownTerminated("b") {
			t.Fatal("a forgotten pod is unknown, and has nothing running")
		}
	})
}

func TestRestartWithSameUID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(0)
		defer h.pw.Stop()
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("a", 0)))
		h.pw.UpdatePod(kill(newPod("a", 0), i64(1), ""))
		synctest.Wait()
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("a", 1))) // same UID, re-created: waits
		synctest.Wait()
		if got := h.pw.SyncKnownPods([]*v1.Pod{newPod("a", 1)}); len(got) != 0 {
			t.Fatalf("SyncKnownPods = %v, want the finished worker forgotten", got)
		}
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("a", 1)))
		synctest.Wait()
		h.syncer.mu.Lock()
		defer h.syncer.mu.Unlock()
		if last := h.syncer.calls[len(h.syncer.calls)-1]; last != syncCall("a", SyncPodCreate, 1) {
			t.Fatalf("last call %+v, want the re-created pod synced", last)
		}
	})
}

func TestStopCancelsAndWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(0)
		h.syncer.setHold(kindSync, true)
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("a", 0)))
		synctest.Wait()
		h.pw.Stop()
		if n := h.syncer.cancelledCalls(); n != 1 {
			t.Fatalf("cancelled syncs = %d, want 1", n)
		}
		h.pw.UpdatePod(upd(SyncPodUpdate, newPod("a", 1)))
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("b", 0)))
		synctest.Wait()
		h.syncer.wantCalls(t, syncCall("a", SyncPodCreate, 0))
		h.requeuer.wantRequeues(t)
	})
}
