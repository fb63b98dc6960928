package syncloop

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// fakeGuard lets every pod go except those in refuse, and records the claims.
type fakeGuard struct {
	mu      sync.Mutex
	refuse  sets.Set[types.UID]
	claimed sets.Set[types.UID]
}

var _ removalGuard = (*fakeGuard)(nil)

func (g *fakeGuard) claim(uid types.UID) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.refuse.Has(uid) {
		return false
	}
	g.claimed.Insert(uid)
	return true
}

func (g *fakeGuard) release(uid types.UID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.claimed.Delete(uid)
}

// runRemover starts r in the bubble and returns a function that stops it.
func runRemover(r *remover) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

// Removals run removeConcurrency at a time; a pod handed in while its removal runs is dropped,
// one handed in twice while queued is removed once with everything either asked for; a pod the
// guard refuses is left alone.
func TestRemoverBoundsAndDedupes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &fakeCleaner{release: make(chan struct{}), hold: true}
		dirs := &fakeDirs{dirs: []types.UID{"queued"}}
		st := &fakeForget{}
		g := &fakeGuard{refuse: sets.New[types.UID]("refused"), claimed: sets.New[types.UID]()}
		r := newRemover(c, dirs, st, g)
		stop := runRemover(r)
		defer stop()

		for i := range removeConcurrency {
			r.enqueue(removal{uid: types.UID(fmt.Sprint("p", i)), runtime: true})
		}
		synctest.Wait()
		if r.enqueue(removal{uid: "p0", runtime: true}) {
			t.Error("a pod whose removal runs was queued again")
		}
		r.enqueue(removal{uid: "queued"})                // its directory only...
		r.enqueue(removal{uid: "queued", runtime: true}) // ...then its runtime pod too: one removal
		r.enqueue(removal{uid: "refused", runtime: true})
		synctest.Wait()
		if _, running, most := c.snapshot(); running != removeConcurrency || most != removeConcurrency {
			t.Fatalf("%d removals running (at most %d), want %d", running, most, removeConcurrency)
		}
		if got := sets.List(r.inFlight()); len(got) != removeConcurrency+2 {
			t.Errorf("in flight %v, want the running, the queued and the refused pods", got)
		}
		for range removeConcurrency + 1 {
			c.release <- struct{}{}
			synctest.Wait()
		}
		removed, running, most := c.snapshot()
		if removed != "[p0 p1 p2 p3 p4 p5 p6 p7 queued]" || running != 0 || most != removeConcurrency {
			t.Errorf("removed %s (%d running, at most %d), want every pod once but the refused one", removed, running, most)
		}
		if got := fmt.Sprint(dirs.tornDown); got != "[queued]" {
			t.Errorf("tore down %s", got)
		}
		if got := st.forgottenString(); got != "[p0 p1 p2 p3 p4 p5 p6 p7 queued]" {
			t.Errorf("forgot %s", got)
		}
		if n := r.inFlight().Len(); n != 0 || g.claimed.Len() != 0 {
			t.Errorf("%d in flight, %v claimed after the removals", n, sets.List(g.claimed))
		}
	})
}

// A pod whose runtime removal fails keeps its directory and status for the next housekeeping;
// queued removals are dropped when the context ends.
func TestRemoverStopsOnFailureAndCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &fakeCleaner{release: make(chan struct{}), hold: true}
		st := &fakeForget{}
		r := newRemover(failingRemover{c}, &fakeDirs{}, st, &fakeGuard{claimed: sets.New[types.UID]()})
		stop := runRemover(r)
		r.enqueue(removal{uid: "bad", runtime: true})
		synctest.Wait()
		c.release <- struct{}{}
		synctest.Wait()
		if got := st.forgottenString(); got != "[]" {
			t.Errorf("forgot %s after a failed removal", got)
		}
		for i := range removeConcurrency + 3 {
			r.enqueue(removal{uid: types.UID(fmt.Sprint("p", i)), runtime: true})
		}
		synctest.Wait()
		stop() // cancels the running removals; the queued ones never start
		if removed, _, _ := c.snapshot(); removed != "[bad p0 p1 p2 p3 p4 p5 p6 p7]" {
			t.Errorf("removed %s", removed)
		}
	})
}

type failingRemover struct{ *fakeCleaner }

func (f failingRemover) RemovePodByUID(ctx context.Context, uid types.UID) error {
	_ = f.fakeCleaner.RemovePodByUID(ctx, uid)
	return fmt.Errorf("remove %s: runtime said no", uid)
}
