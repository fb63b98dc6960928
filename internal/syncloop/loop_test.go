package syncloop

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/pleg"
	"github.com/nodelet/nodelet/internal/podconfig"
)

type recordingHandler struct {
	mu           sync.Mutex
	updates      []podconfig.Op
	syncs        [][]types.UID
	housekeeping int
	finished     []types.UID
}

var _ Handler = (*recordingHandler)(nil)

func (h *recordingHandler) HandlePodUpdate(u podconfig.PodUpdate) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.updates = append(h.updates, u.Op)
}
func (h *recordingHandler) HandleSyncs(uids []types.UID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.syncs = append(h.syncs, uids)
}
func (h *recordingHandler) HandleHousekeeping(context.Context) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.housekeeping++
}
func (h *recordingHandler) HandlePodFinished(uid types.UID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.finished = append(h.finished, uid)
}

type runtimeErr struct {
	mu  sync.Mutex
	err error
}

func (r *runtimeErr) RuntimeErr() error { r.mu.Lock(); defer r.mu.Unlock(); return r.err }
func (r *runtimeErr) set(err error)     { r.mu.Lock(); defer r.mu.Unlock(); r.err = err }

func TestWorkQueue(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	q := NewWorkQueue(clk)
	q.Enqueue("a", time.Second)
	q.Enqueue("b", 3*time.Second)
	q.Enqueue("a", 2*time.Second) // replaces
	if got := q.GetWork(); len(got) != 0 {
		t.Fatalf("due at once: %v", got)
	}
	clk.Step(2 * time.Second)
	if got := q.GetWork(); len(got) != 1 || got[0] != "a" {
		t.Fatalf("after 2 s: %v", got)
	}
	clk.Step(time.Second)
	if got := q.GetWork(); len(got) != 1 || got[0] != "b" {
		t.Fatalf("after 3 s: %v", got)
	}
	if got := q.GetWork(); len(got) != 0 {
		t.Fatalf("taken twice: %v", got)
	}
}

// The loop dispatches each input; housekeeping waits for the sources; while the runtime is not
// ready nothing is dispatched and the loop backs off 100 ms doubling to 5 s.
func TestLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clocktesting.NewFakeClock(time.Unix(0, 0))
		updates := make(chan podconfig.PodUpdate, 1)
		events := make(chan *pleg.Event, 2)
		finished := make(chan types.UID, 1)
		h := &recordingHandler{}
		rt := &runtimeErr{}
		var sourcesReady sync.Mutex
		ready := false
		q := NewWorkQueue(clk)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			Run(ctx, Config{Clock: clk, SyncPeriod: time.Second, HousekeepingPeriod: 2 * time.Second,
				Updates: updates, PLEG: events, Finished: finished, Queue: q, Runtime: rt, Handler: h,
				SourcesReady: func() bool { sourcesReady.Lock(); defer sourcesReady.Unlock(); return ready }})
		}()
		updates <- podconfig.PodUpdate{Op: podconfig.ADD}
		events <- &pleg.Event{ID: "p", Type: pleg.ContainerStarted}
		events <- &pleg.Event{ID: "p", Type: pleg.ContainerRemoved}
		finished <- "done"
		synctest.Wait()
		q.Enqueue("due", 0)
		clk.Step(2 * time.Second) // a sync tick and a housekeeping tick, before sources are ready
		synctest.Wait()
		h.mu.Lock()
		if len(h.updates) != 1 || len(h.syncs) != 2 || h.syncs[0][0] != "p" || h.syncs[1][0] != "due" || h.housekeeping != 0 {
			t.Errorf("updates %v syncs %v housekeeping %d", h.updates, h.syncs, h.housekeeping)
		}
		if len(h.finished) != 1 || h.finished[0] != "done" {
			t.Errorf("finished pods %v, want the one sent", h.finished)
		}
		h.mu.Unlock()
		sourcesReady.Lock()
		ready = true
		sourcesReady.Unlock()
		clk.Step(2 * time.Second)
		synctest.Wait()
		h.mu.Lock()
		if h.housekeeping != 1 {
			t.Errorf("housekeeping %d after the sources were ready", h.housekeeping)
		}
		h.mu.Unlock()

		rt.set(errors.New("containerd is down"))
		clk.Step(2 * time.Second) // the loop takes this tick, then sees the error
		synctest.Wait()
		updates <- podconfig.PodUpdate{Op: podconfig.UPDATE}
		for range 20 { // 20 back-off rounds of at most 5 s
			clk.Step(5 * time.Second)
			synctest.Wait()
		}
		h.mu.Lock()
		if len(h.updates) != 1 {
			t.Errorf("an update was dispatched while the runtime was down")
		}
		h.mu.Unlock()
		rt.set(nil)
		clk.Step(5 * time.Second)
		synctest.Wait()
		h.mu.Lock()
		if len(h.updates) != 2 {
			t.Errorf("the update was not dispatched once the runtime was back: %v", h.updates)
		}
		h.mu.Unlock()
		cancel()
		<-done
	})
}

func TestNextBackOff(t *testing.T) {
	want := []time.Duration{200, 400, 800, 1600, 3200, 5000, 5000}
	d := minRuntimeBackOff
	for i, w := range want {
		d = nextBackOff(d)
		if d != w*time.Millisecond {
			t.Fatalf("step %d: %v, want %v", i, d, w*time.Millisecond)
		}
	}
}
