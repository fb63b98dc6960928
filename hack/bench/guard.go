package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// errInterference is the cause with which a guard cancels a run when another nodelet starts.
var errInterference = errors.New("another nodelet started during the run")

// waitRecord is one time the bench had to wait for other nodelets before a run.
type waitRecord struct {
	before string
	waited time.Duration
	others []process
}

// quietPeriod is how long no other nodelet (nor e2e test binary) must have run before a run
// starts.
const quietPeriod = 3 * time.Second

// waitAlone blocks until no nodelet but the bench's own (binary ownBin; none runs between
// runs) has used the runtime at endpoint for quietPeriod, or maxWait has passed. It returns
// how long it waited and for which processes; nil when no other nodelet ran.
func waitAlone(ctx context.Context, ownBin, endpoint string, maxWait time.Duration, before string) (*waitRecord, error) {
	start := time.Now()
	lastSeen := start
	var rec *waitRecord
	for {
		others, err := otherNodelets(ownBin, endpoint)
		if err != nil {
			return nil, fmt.Errorf("look for other nodelet processes: %w", err)
		}
		now := time.Now()
		switch {
		case len(others) > 0:
			lastSeen = now
			if rec == nil {
				rec = &waitRecord{before: before, others: others}
				logf("waiting before %s: another nodelet uses the runtime and nodelet removes pods it does not know: %v", before, others)
			}
			if now.Sub(start) > maxWait {
				return nil, fmt.Errorf("waited %v for other nodelets to exit before %s, still running: %v", maxWait, before, others)
			}
		case now.Sub(lastSeen) >= quietPeriod:
			if rec != nil {
				rec.waited = now.Sub(start)
				logf("no other nodelet for %v; waited %v in all", quietPeriod, rec.waited.Round(time.Second))
			}
			return rec, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for other nodelets before %s: %w", before, context.Cause(ctx))
		case <-time.After(guardPeriod):
		}
	}
}

// guard watches, during one run, for a nodelet other than the bench's own. When one appears it
// kills the bench's nodelet at once (two nodelets remove each other's pods) and cancels the
// run's context with errInterference.
type guard struct {
	ownBin   string
	endpoint string
	ctx      context.Context
	cancel   context.CancelCauseFunc
	kill     atomic.Pointer[func()]
	done     chan struct{}

	mu    sync.Mutex
	found []process
}

// guardPeriod is how often the guard scans /proc: a scan costs about 0.7 ms per 100 processes
// (BenchmarkOtherNodelets), so the bench spends well under 1% of a core on it.
const guardPeriod = 200 * time.Millisecond

func startGuard(parent context.Context, ownBin, endpoint string) *guard {
	g := &guard{ownBin: ownBin, endpoint: endpoint, done: make(chan struct{})}
	g.ctx, g.cancel = context.WithCancelCause(parent)
	go g.watch()
	return g
}

// onInterference sets what the guard calls, before cancelling the run, should another
// nodelet appear: kill the bench's own nodelet (nil: nothing).
func (g *guard) onInterference(kill func()) {
	if kill == nil {
		g.kill.Store(nil)
		return
	}
	g.kill.Store(&kill)
}

func (g *guard) watch() {
	defer close(g.done)
	t := time.NewTicker(guardPeriod)
	defer t.Stop()
	for {
		select {
		case <-g.ctx.Done():
			return
		case <-t.C:
		}
		others, err := otherNodelets(g.ownBin, g.endpoint)
		if err != nil || len(others) == 0 {
			continue
		}
		if kill := g.kill.Load(); kill != nil {
			(*kill)()
		}
		g.mu.Lock()
		g.found = others
		g.mu.Unlock()
		g.cancel(fmt.Errorf("%w: %v", errInterference, others))
		return
	}
}

// stop ends the watch and returns the other nodelets seen during the run, if any.
func (g *guard) stop() []process {
	g.cancel(context.Canceled)
	<-g.done
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.found
}
