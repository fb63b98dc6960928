package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// errInterference is the cause with which a guard cancels a run when another agent starts.
var errInterference = errors.New("another nodelet or kubelet started during the run")

// waitRecord is one time the bench had to wait for other agents before a run.
type waitRecord struct {
	before string
	waited time.Duration
	others []process
}

// quietPeriod is how long no other agent (nodelet, kubelet, e2e test binary) must have run
// before a run starts.
const quietPeriod = 3 * time.Second

// waitAlone blocks until no agent but the bench's own (none runs between runs) has used the
// runtime at endpoint for quietPeriod, or maxWait has passed. It returns how long it waited and
// for which processes; nil when no other agent ran.
func waitAlone(ctx context.Context, endpoint string, maxWait time.Duration, before string) (*waitRecord, error) {
	start := time.Now()
	lastSeen := start
	var rec *waitRecord
	for {
		others, err := otherAgents(endpoint)
		if err != nil {
			return nil, fmt.Errorf("look for other nodelet and kubelet processes: %w", err)
		}
		now := time.Now()
		switch {
		case len(others) > 0:
			lastSeen = now
			if rec == nil {
				rec = &waitRecord{before: before, others: others}
				logf("waiting before %s: another agent uses the runtime, and agents remove pods they do not know: %v", before, others)
			}
			if now.Sub(start) > maxWait {
				return nil, fmt.Errorf("waited %v for other agents to exit before %s, still running: %v", maxWait, before, others)
			}
		case now.Sub(lastSeen) >= quietPeriod:
			if rec != nil {
				rec.waited = now.Sub(start)
				logf("no other agent for %v; waited %v in all", quietPeriod, rec.waited.Round(time.Second))
			}
			return rec, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for other agents before %s: %w", before, context.Cause(ctx))
		case <-time.After(guardPeriod):
		}
	}
}

// guard watches, during one run, for an agent other than the bench's own. When one appears it
// kills the bench's agent at once (two agents remove each other's pods) and cancels the run's
// context with errInterference.
type guard struct {
	endpoint string
	ctx      context.Context
	cancel   context.CancelCauseFunc
	kill     atomic.Pointer[func()]
	done     chan struct{}

	mu    sync.Mutex
	found []process
}

// guardPeriod is how often the guard scans /proc: a scan costs about 0.7 ms per 100 processes
// (BenchmarkOtherAgents), so the bench spends well under 1% of a core on it.
const guardPeriod = 200 * time.Millisecond

func startGuard(parent context.Context, endpoint string) *guard {
	g := &guard{endpoint: endpoint, done: make(chan struct{})}
	g.ctx, g.cancel = context.WithCancelCause(parent)
	go g.watch()
	return g
}

// onInterference sets what the guard calls, before cancelling the run, should another agent
// appear: kill the bench's own agent (nil: nothing).
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
		others, err := otherAgents(g.endpoint)
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

// stop ends the watch and returns the other agents seen during the run, if any.
func (g *guard) stop() []process {
	g.cancel(context.Canceled)
	<-g.done
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.found
}
