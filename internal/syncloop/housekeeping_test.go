package syncloop

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/podworkers"
)

// startDispatcher runs d.Run in the bubble and returns a function that stops it and waits.
func startDispatcher(d *Dispatcher) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	synctest.Wait()
	return func() { cancel(); <-done }
}

// housekeep runs one housekeeping tick and waits until its pass and the removals it handed
// over are done. It must be called in a synctest bubble, with fakes that do not block.
func housekeep(t *testing.T, d *Dispatcher) {
	t.Helper()
	stop := startDispatcher(d)
	d.HandleHousekeeping(context.Background())
	synctest.Wait()
	stop()
}

// Housekeeping removes what pods no source wants left behind: runtime pods whose worker has
// terminated them or that no worker knows (with their directories and statuses), directories
// and statuses of pods gone from the runtime; never those of a pod a worker is still stopping.
func TestHousekeepingFindsOrphans(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, pm, w, c, dirs, f := newTestDispatcher()
		pm.AddOrUpdate(tpod("kept", "kept"))
		c.pods = []*container.Pod{{ID: "kept"}, {ID: "stopping"}, {ID: "done"}, {ID: "stranger"}}
		w.known = map[types.UID]podworkers.WorkType{"kept": podworkers.SyncPod, "stopping": podworkers.TerminatingPod}
		w.setTerminated("done")
		dirs.dirs = []types.UID{"kept", "stopping", "orphan-dir", "done"}
		f.statuses = []types.UID{"kept", "stopping", "done", "left"}
		housekeep(t, d)
		if removed, _, _ := c.snapshot(); removed != "[done stranger]" {
			t.Errorf("removed %s, want the terminated pod and the pod no worker knows", removed)
		}
		if got := fmt.Sprint(dirs.tornDown); got != "[done orphan-dir]" {
			t.Errorf("tore down %s, want the removed pod's and the orphaned directory", got)
		}
		if got := f.forgottenString(); got != "[done left orphan-dir stranger]" {
			t.Errorf("forgot %s", got)
		}
		if c.gcs != 1 {
			t.Errorf("back-off GC ran %d times, want once per housekeeping", c.gcs)
		}
		c.err, c.removed, c.pods = fmt.Errorf("runtime down"), nil, []*container.Pod{{ID: "stranger2"}}
		housekeep(t, d)
		if len(c.removed) != 0 {
			t.Error("housekeeping acted without a runtime listing")
		}
	})
}

// A desired pod the pod workers forgot (re-created with the same UID after it finished) is
// started again by housekeeping, as upstream; waiting and rejected pods are not.
func TestHousekeepingRestartsForgottenPods(t *testing.T) {
	d, pm, w, _, _, _ := newTestDispatcher()
	d.HandlePodUpdate(podconfig.PodUpdate{Op: podconfig.ADD, Pods: []*v1.Pod{tpod("known", "known")}})
	w.take()
	pm.AddOrUpdate(tpod("reused", "reused")) // its worker was forgotten
	pm.AddOrUpdate(tpod("rejected", "rejected"))
	d.rejected["rejected"] = true
	done := tpod("done", "done")
	done.Status.Phase = v1.PodSucceeded
	pm.AddOrUpdate(done)
	d.HandleHousekeeping(context.Background()) // no Run: the pass is skipped
	if got := w.take(); got != "create reused" {
		t.Errorf("worker calls %q, want only the forgotten active pod created", got)
	}
}

// The loop never waits for housekeeping: while removals are blocked in the runtime, and while a
// pass is blocked listing it, updates are dispatched, and ticks that come meanwhile are skipped.
func TestLoopReturnsWhileHousekeepingBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, _, w, c, _, _ := newTestDispatcher()
		c.hold = true
		for i := range 3 {
			c.pods = append(c.pods, &container.Pod{ID: types.UID(fmt.Sprint("stranger", i))})
		}
		stopDispatcher := startDispatcher(d)
		defer stopDispatcher()
		clk := clocktesting.NewFakeClock(time.Unix(0, 0))
		updates := make(chan podconfig.PodUpdate)
		ctx, cancel := context.WithCancel(context.Background())
		var loop sync.WaitGroup
		loop.Go(func() {
			Run(ctx, Config{Clock: clk, SyncPeriod: time.Second, HousekeepingPeriod: 2 * time.Second,
				Updates: updates, Queue: NewWorkQueue(clk), Runtime: &runtimeErr{}, Handler: d,
				SourcesReady: func() bool { return true }})
		})
		defer func() { cancel(); loop.Wait() }()
		synctest.Wait()

		clk.Step(2 * time.Second)
		synctest.Wait()
		if _, running, _ := c.snapshot(); running != 3 {
			t.Fatalf("%d removals running, want 3", running)
		}
		updates <- podconfig.PodUpdate{Op: podconfig.ADD, Pods: []*v1.Pod{tpod("new", "new")}}
		synctest.Wait()
		if got := w.take(); got != "create new" {
			t.Fatalf("worker calls %q while removals are blocked, want the new pod created", got)
		}

		clk.Step(2 * time.Second) // a second pass: the three are in flight, nothing more to do
		synctest.Wait()
		c.mu.Lock()
		c.holdList = true
		c.mu.Unlock()
		for range 3 {
			c.release <- struct{}{}
		}
		synctest.Wait()
		if removed, running, _ := c.snapshot(); removed != "[stranger0 stranger1 stranger2]" || running != 0 {
			t.Fatalf("removed %s, %d running", removed, running)
		}

		clk.Step(2 * time.Second) // a pass that blocks listing the runtime...
		synctest.Wait()
		clk.Step(4 * time.Second) // ...so these ticks are skipped
		synctest.Wait()
		updates <- podconfig.PodUpdate{Op: podconfig.ADD, Pods: []*v1.Pod{tpod("other", "other")}}
		synctest.Wait()
		if got := w.take(); got != "create other" {
			t.Fatalf("worker calls %q while a pass is blocked, want the new pod created", got)
		}
		c.mu.Lock()
		lists := c.lists
		c.mu.Unlock()
		if lists != 3 {
			t.Errorf("%d runtime listings, want 3: the ticks during the blocked pass are skipped", lists)
		}
		c.release <- struct{}{}
		synctest.Wait()
	})
}

// A pod whose worker finishes while no source wants it is removed at once; one a source still
// wants (a finished API pod awaiting its deletion) is removed when its source removes it.
func TestFinishedPodsAreRemovedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, pm, w, c, _, f := newTestDispatcher()
		stop := startDispatcher(d)
		defer stop()
		gone, done := tpod("gone", "gone"), tpod("done", "done")
		d.HandlePodUpdate(podconfig.PodUpdate{Op: podconfig.ADD, Pods: []*v1.Pod{gone, done}})
		d.HandlePodUpdate(podconfig.PodUpdate{Op: podconfig.REMOVE, Pods: []*v1.Pod{gone}})
		w.setTerminated("gone")
		w.setTerminated("done")
		d.HandlePodFinished("gone")
		d.HandlePodFinished("done")
		synctest.Wait()
		if removed, _, _ := c.snapshot(); removed != "[gone]" {
			t.Fatalf("removed %s, want the finished pod no source wants", removed)
		}
		if got := f.forgottenString(); got != "[gone]" {
			t.Errorf("forgot %s", got)
		}
		d.HandlePodUpdate(podconfig.PodUpdate{Op: podconfig.REMOVE, Pods: []*v1.Pod{done}})
		synctest.Wait()
		if removed, _, _ := c.snapshot(); removed != "[done gone]" {
			t.Fatalf("removed %s, want the finished pod removed with its source's REMOVE", removed)
		}
		if len(pm.Pods()) != 0 {
			t.Errorf("%d desired pods", len(pm.Pods()))
		}
	})
}

// A pod re-created with the UID of a pod being removed waits until the removal is over; a pod
// re-created before its removal's turn is not removed.
func TestReusedUIDWaitsForRemoval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, _, w, c, _, _ := newTestDispatcher()
		c.hold = true
		stop := startDispatcher(d)
		defer stop()
		w.setTerminated("u")
		d.HandlePodFinished("u")
		synctest.Wait() // claimed, blocked in the runtime
		d.HandlePodUpdate(podconfig.PodUpdate{Op: podconfig.ADD, Pods: []*v1.Pod{tpod("web", "u")}})
		d.HandleSyncs([]types.UID{"u"})
		if got := w.take(); got != "" {
			t.Fatalf("worker calls %q while the UID's removal runs", got)
		}
		c.release <- struct{}{}
		synctest.Wait()
		d.HandleSyncs(nil)
		if got := w.take(); got != "create u" {
			t.Fatalf("worker calls %q after the removal, want the pod created", got)
		}

		// Handed over, then wanted again before its turn: the guard refuses it.
		w.setTerminated("v")
		d.remover.enqueue(removal{uid: "x", runtime: true}) // blocks the line...
		for i := range removeConcurrency - 1 {
			d.remover.enqueue(removal{uid: types.UID(fmt.Sprint("y", i)), runtime: true})
		}
		synctest.Wait()
		d.HandlePodFinished("v") // ...so this one waits its turn
		d.HandlePodUpdate(podconfig.PodUpdate{Op: podconfig.ADD, Pods: []*v1.Pod{tpod("v", "v")}})
		for range removeConcurrency {
			c.release <- struct{}{}
		}
		synctest.Wait()
		if removed, _, _ := c.snapshot(); removed != "[u x y0 y1 y2 y3 y4 y5 y6]" {
			t.Errorf("removed %s, want the pod wanted again left alone", removed)
		}
	})
}
