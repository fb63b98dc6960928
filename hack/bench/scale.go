package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nodelet/nodelet/internal/testharness"
)

// scaleSettings are the sizes of the scale session (--scale, --latency-pods, --steady,
// --churn-rate).
type scaleSettings struct {
	pods        int           // burst, steady state, restart and churn
	latencyPods int           // pods whose container is killed, one after the other
	steady      time.Duration // the steady-state window
	churnRate   float64       // pods created, then deleted, per second
}

// scaleResult is what one scale session of an agent measured.
type scaleResult struct {
	latency      []time.Duration // container killed → its termination visible in /pods, one per pod
	latencyFloor []time.Duration // container killed → the runtime's CONTAINER_STOPPED_EVENT received

	churnBefore, churnAfter memory  // before the churn, and after it once the agent is quiet again
	churnCPU                float64 // CPU s from the first creation until every pod was removed
	churnGone               time.Duration

	burst      time.Duration   // N manifests in place → all Running and Ready
	burstPods  []time.Duration // per pod: manifests in place → this pod first seen Running and Ready
	burstCPU   float64
	steadyCPU  float64 // CPU s over the steady window with N pods, no /pods reads
	steadyMem  memory  // at the end of the steady window
	restart    time.Duration
	restarted  int // containers of the node the runtime has after the restart that it did not have before
	resandbox  int // sandboxes likewise
	restartCPU float64
	teardown   time.Duration
}

// burstProfile is the length of the CPU profile of a burst start, with --profile.
const burstProfile = 30 * time.Second

// profilerFor returns the profiler with --profile, for nodelet; nil otherwise.
func (b *bench) profilerFor(kind agentKind) *profiler {
	if b.prof == nil || kind != kindNodelet {
		return nil
	}
	return b.prof
}

// latencyPoll is how often /pods is read while a killed container's new state is awaited.
const latencyPoll = 5 * time.Millisecond

// restartPoll is how often /pods is read after a restart.
const restartPoll = 20 * time.Millisecond

// scaleRun starts a fresh agent of kind and measures, in this order: status latency, churn,
// burst start of s.pods pods, the steady state with them, a SIGKILL restart with them, and
// their teardown. Whatever happens, the agent is stopped and what the run created is removed
// before it returns.
func (b *bench) scaleRun(ctx context.Context, g *guard, kind agentKind, s scaleSettings) (res scaleResult, err error) {
	a, done, err := b.startMeasured(ctx, g, kind)
	defer func() { err = done(err) }()
	if err != nil {
		return res, err
	}
	if s.latencyPods > 0 {
		if res.latency, res.latencyFloor, err = a.statusLatency(ctx, b, s.latencyPods); err != nil {
			return res, fmt.Errorf("status latency: %w", err)
		}
	}
	if s.churnRate > 0 {
		if err := a.churn(ctx, b, s, &res); err != nil {
			return res, fmt.Errorf("churn: %w", err)
		}
		if prof := b.profilerFor(kind); prof != nil {
			if err := prof.snapshot(ctx, a, "heap", "churn-heap.pprof"); err != nil {
				return res, err
			}
		}
	}

	names, err := a.stage("sleep", s.pods, sleeperManifest)
	if err != nil {
		return res, err
	}
	// The runtime goes on cleaning up after the churn for a while: not the burst's cost.
	if _, _, err := settle(ctx); err != nil {
		return res, err
	}
	cpu0, err := cpuSeconds(a.pid(), b.hz)
	if err != nil {
		return res, err
	}
	prof := b.profilerFor(kind)
	if prof != nil {
		prof.startCPU(ctx, a, "burst-cpu.pprof", burstProfile)
	}
	start := time.Now()
	if err := a.putInPlace(names); err != nil {
		return res, err
	}
	if res.burstPods, err = a.waitReady(ctx, start, s.pods, b.opts.timeout); err != nil {
		return res, fmt.Errorf("burst of %d pods: %w", s.pods, err)
	}
	res.burst = time.Since(start)
	cpu1, err := cpuSeconds(a.pid(), b.hz)
	if err != nil {
		return res, err
	}
	res.burstCPU = cpu1 - cpu0
	if prof != nil {
		if err := prof.wait(); err != nil {
			return res, err
		}
		prof.startCPU(ctx, a, "steady-cpu.pprof", s.steady)
	}

	// The steady state: the agent is left alone, not even /pods is read.
	if err := a.idle(ctx, s.steady); err != nil {
		return res, err
	}
	if prof != nil {
		if err := errors.Join(prof.wait(), prof.snapshot(ctx, a, "heap", "steady-heap.pprof")); err != nil {
			return res, err
		}
	}
	cpu2, err := cpuSeconds(a.pid(), b.hz)
	if err != nil {
		return res, err
	}
	res.steadyCPU = cpu2 - cpu1
	if res.steadyMem, err = readMemory(a.pid()); err != nil {
		return res, err
	}

	if _, _, err := settle(ctx); err != nil {
		return res, err
	}
	if err := a.restartWithPods(ctx, b, s.pods, &res); err != nil {
		return res, fmt.Errorf("restart with %d pods: %w", s.pods, err)
	}

	if _, res.teardown, err = a.teardown(ctx, b, names); err != nil {
		return res, err
	}
	if err := a.stop(stopTimeout); err != nil {
		return res, fmt.Errorf("stop %s %s: %w", kind, a.name, err)
	}
	return res, nil
}

// startMeasured starts a fresh agent of kind, waits until /pods answers and the agent is
// quiet, and returns it with done, which the caller defers with its error: done adds the
// agent's log to the error, stops the agent and removes whatever the run created.
func (b *bench) startMeasured(ctx context.Context, g *guard, kind agentKind) (*agent, func(error) error, error) {
	runStart := time.Now()
	a, err := b.startAgent(kind)
	done := func(err error) error {
		if a == nil {
			return err
		}
		if err != nil && a.cmd != nil && !errors.Is(context.Cause(ctx), errInterference) {
			err = fmt.Errorf("%w\nlast lines of %s's log:\n%s", err, a.kind, a.logTail(30))
		}
		g.onInterference(nil)
		cgroups, cerr := a.cleanup(b.cri, err != nil, b.opts.keepLogs)
		if err != nil {
			b.leakedShims += b.stopOrphanShims(runStart)
		}
		// A failed run's agent did not get to remove its pods, and the bench stops the
		// kubelet before its container GC removes them.
		if err == nil && kind == kindNodelet {
			b.leftCgroups += cgroups
			b.nodeletPods += len(a.uids)
		}
		if cerr != nil {
			err = errors.Join(err, fmt.Errorf("clean up after node %s: %w", a.name, cerr))
		}
		return err
	}
	if err != nil {
		return a, done, err
	}
	g.onInterference(a.kill)
	if err := a.waitAnswering(ctx); err != nil {
		return a, done, err
	}
	if a.startupCPU, err = a.quiet(ctx, b.hz); err != nil {
		return a, done, err
	}
	return a, done, nil
}

// waitAnswering waits until the agent's /pods answers.
func (a *agent) waitAnswering(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := a.poll(ctx, pollPeriod, fmt.Sprintf("%s's /pods to answer", a.kind), func() (bool, error) {
		_, err := a.pods(ctx)
		return err == nil, nil
	}); err != nil {
		return fmt.Errorf("start %s %s: %w", a.kind, a.name, err)
	}
	return nil
}

// idle waits for d without reading anything from the agent, failing if it exits.
func (a *agent) idle(ctx context.Context, d time.Duration) error {
	t0 := time.Now()
	return a.poll(ctx, time.Second, "the end of a quiet window", func() (bool, error) {
		return time.Since(t0) >= d, nil
	})
}

// putInPlace renames staged manifests into the manifest directory, in order.
func (a *agent) putInPlace(names []string) error {
	for _, f := range names {
		if err := os.Rename(filepath.Join(a.staging, f), filepath.Join(a.manifests, f)); err != nil {
			return fmt.Errorf("put manifest %s in place: %w", f, err)
		}
	}
	return nil
}

// teardown removes the manifests and returns how long the agent took to stop the pods and to
// remove them (waitGone).
func (a *agent) teardown(ctx context.Context, b *bench, names []string) (stopped, removed time.Duration, err error) {
	start := time.Now()
	if err := a.removeManifests(names); err != nil {
		return 0, 0, err
	}
	if stopped, err = a.waitGone(ctx, b, measurePoll(len(names)), start); err != nil {
		return 0, 0, err
	}
	return stopped, time.Since(start), nil
}

// removeManifests removes manifests from the manifest directory, in order.
func (a *agent) removeManifests(names []string) error {
	for _, f := range names {
		if err := os.Remove(filepath.Join(a.manifests, f)); err != nil {
			return fmt.Errorf("remove manifest %s: %w", f, err)
		}
	}
	return nil
}

// churn creates s.pods pods at s.churnRate pods a second, then deletes them at the same rate,
// the first deletion one interval after the last creation; it waits until every pod is removed
// (by the kubelet's container GC too) and the agent is quiet, and records its memory before and
// after and its CPU time meanwhile.
func (a *agent) churn(ctx context.Context, b *bench, s scaleSettings, res *scaleResult) error {
	var err error
	if res.churnBefore, err = readMemory(a.pid()); err != nil {
		return err
	}
	names, err := a.stage("churn", s.pods, sleeperManifest)
	if err != nil {
		return err
	}
	cpu0, err := cpuSeconds(a.pid(), b.hz)
	if err != nil {
		return err
	}
	interval := time.Duration(float64(time.Second) / s.churnRate)
	start := time.Now()
	if err := a.atRate(ctx, start, interval, names, func(f string) error { return a.putInPlace([]string{f}) }); err != nil {
		return err
	}
	if err := a.atRate(ctx, start.Add(time.Duration(len(names))*interval), interval, names, func(f string) error {
		return a.removeManifests([]string{f})
	}); err != nil {
		return err
	}
	if _, err := a.waitGone(ctx, b, pollPeriod, time.Now()); err != nil {
		return err
	}
	if err := a.waitNoSandboxes(ctx, b); err != nil {
		return err
	}
	res.churnGone = time.Since(start)
	cpu1, err := cpuSeconds(a.pid(), b.hz)
	if err != nil {
		return err
	}
	res.churnCPU = cpu1 - cpu0
	if _, err := a.quiet(ctx, b.hz); err != nil {
		return err
	}
	if res.churnAfter, err = readMemory(a.pid()); err != nil {
		return err
	}
	return nil
}

// atRate calls fn for each name, the i-th at start + i×interval.
func (a *agent) atRate(ctx context.Context, start time.Time, interval time.Duration, names []string, fn func(string) error) error {
	for i, f := range names {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-a.exited:
				return fmt.Errorf("%s exited: %v", a.kind, a.waitErr)
			case <-time.After(wait):
			}
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// waitNoSandboxes waits until the runtime has no sandbox of the agent's pods left, stopped
// ones included: for the kubelet, until its container GC (once a minute) has removed them.
func (a *agent) waitNoSandboxes(ctx context.Context, b *bench) error {
	ctx, cancel := context.WithTimeout(ctx, b.opts.timeout)
	defer cancel()
	left := 0
	err := a.poll(ctx, time.Second, string(a.kind)+" to remove the sandboxes of its deleted pods", func() (bool, error) {
		sbs, err := testharness.NodeSandboxes(ctx, b.cri, a.name)
		left = len(sbs)
		return err == nil && left == 0, nil
	})
	if err != nil {
		return fmt.Errorf("%w; %d sandboxes left", err, left)
	}
	return nil
}
