package podworkers

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

func newFinishedHarness(finished chan types.UID) *harness {
	h := &harness{syncer: newFakeSyncer(), cache: &fakeCache{}, requeuer: &fakeRequeuer{},
		clock: clocktesting.NewFakeClock(t0)}
	h.pw = mustNew(Config{Clock: h.clock, ResyncInterval: time.Minute, BackOffPeriod: 10 * time.Second},
		Deps{Syncer: h.syncer, Cache: h.cache, Requeuer: h.requeuer, Finished: finished})
	return h
}

// received returns what was sent on ch so far, without waiting.
func received(ch <-chan types.UID) []types.UID {
	var out []types.UID
	for {
		select {
		case uid := <-ch:
			out = append(out, uid)
		default:
			return out
		}
	}
}

// A pod's UID is sent on Finished once SyncTerminatedPod has succeeded, and only then: not
// after the termination, not after a failed cleanup, and once only.
func TestFinishedIsSentWhenTheWorkerIsDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		finished := make(chan types.UID, 4)
		h := newFinishedHarness(finished)
		defer h.pw.Stop()
		h.syncer.setHold(kindTerminated, true)
		h.syncer.failNext(kindTerminated, errors.New("volume busy"))
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("a", 0)))
		h.pw.UpdatePod(kill(newPod("a", 0), i64(1), ""))
		synctest.Wait() // in SyncTerminatedPod: terminated, not finished
		if !h.pw.IsPodKnownTerminated("a") {
			t.Fatal("pod not terminated")
		}
		if got := received(finished); len(got) != 0 {
			t.Fatalf("sent %v before the worker finished", got)
		}
		h.syncer.release <- struct{}{} // the cleanup fails: backed off, not finished
		synctest.Wait()
		if got := received(finished); len(got) != 0 {
			t.Fatalf("sent %v after a failed cleanup", got)
		}
		h.pw.UpdatePod(upd(SyncPodSync, newPod("a", 0))) // the requeued retry
		synctest.Wait()
		h.syncer.release <- struct{}{}
		synctest.Wait()
		if got := received(finished); len(got) != 1 || got[0] != "a" {
			t.Fatalf("sent %v, want [a]", got)
		}
		h.pw.UpdatePod(upd(SyncPodSync, newPod("a", 0))) // ignored by a finished worker
		synctest.Wait()
		if got := received(finished); len(got) != 0 {
			t.Fatalf("sent %v again", got)
		}
	})
}

// Nobody reading Finished never holds Stop up.
func TestStopUnblocksAFinishedSend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newFinishedHarness(make(chan types.UID)) // unbuffered, never read
		h.syncer.terminal = true
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("a", 0)))
		synctest.Wait() // the worker is blocked on the send
		h.syncer.wantCalls(t, syncCall("a", SyncPodCreate, 0), terminatingCall("a", 0, 30), terminatedCall("a", 0))
		h.pw.Stop()
	})
}

// A pod is listed as terminating from its kill until SyncTerminatingPod has succeeded, with
// the time of the request and the grace period in force.
func TestTerminatingPods(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newFinishedHarness(nil)
		defer h.pw.Stop()
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("a", 0)))
		h.pw.UpdatePod(upd(SyncPodCreate, newPod("b", 0)))
		synctest.Wait()
		if got := h.pw.TerminatingPods(); len(got) != 0 {
			t.Fatalf("terminating before any kill: %v", got)
		}
		h.syncer.setHold(kindTerminating, true)
		h.pw.UpdatePod(kill(newPod("a", 0), i64(7), ""))
		synctest.Wait() // in SyncTerminatingPod
		got := h.pw.TerminatingPods()
		if len(got) != 1 || got[0].Pod.UID != "a" || got[0].GracePeriod != 7 || !got[0].Since.Equal(h.clock.Now()) {
			t.Fatalf("terminating = %+v, want a with grace 7 since now", got)
		}
		h.syncer.release <- struct{}{}
		synctest.Wait()
		if got := h.pw.TerminatingPods(); len(got) != 0 {
			t.Fatalf("still terminating after SyncTerminatingPod: %+v", got)
		}
	})
}
