package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/testharness"
)

const (
	// pollPeriod is how often the bench reads /pods while it waits for something it does not
	// time; measurePoll, while it times a start or a teardown.
	pollPeriod = 50 * time.Millisecond
	// steadyWindow is how long the bench leaves the agent alone (no /pods reads) once every pod
	// runs, to measure its steady-state CPU use with N pods.
	steadyWindow = 5 * time.Second
	// stopTimeout is how long an agent gets to exit after SIGTERM.
	stopTimeout = 15 * time.Second
	// fileCheckFrequency is both agents' period of re-reading the manifest directory; far
	// longer than a run's wait, so that the manifests are seen through inotify.
	fileCheckFrequency = 20 * time.Second
	// quietWindow, quietCPU and quietLimit: after start-up the bench waits until the agent has
	// used at most quietCPU seconds of CPU over the last quietWindow (it has finished starting),
	// for at most quietLimit, before it writes the manifests.
	quietWindow = time.Second
	quietCPU    = 0.02
	quietLimit  = 20 * time.Second
)

// sleeperScript sleeps until SIGTERM, then exits 0 at once: the shell runs a trap only between
// commands, so it waits for a background sleep (wait returns on the signal) rather than running
// "sleep 1" in the foreground, which would delay every stop by up to a second.
const sleeperScript = "trap 'exit 0' TERM; while true; do sleep 3600 & wait; done"

// sleeperManifest is a static pod whose container sleeps and exits at once on SIGTERM.
func sleeperManifest(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", %q]
`, name, benchImage, sleeperScript)
}

// agentResult is what one run of an agent (nodelet or the upstream kubelet) measured.
type agentResult struct {
	startupCPU  float64         // CPU s from exec until the agent was quiet after /pods first answered
	ready       time.Duration   // first manifest in place → all pods Running and Ready in /pods
	perPod      []time.Duration // per pod: manifests in place → first seen Running and Ready
	cpu         float64         // CPU s the agent used during that window
	mem         memory          // VmHWM and VmRSS at the end of that window
	steadyCPU   float64         // CPU s per s over steadyWindow, every pod running, no /pods reads
	teardown    time.Duration   // manifests removed → no pod in /pods, no sandbox (kubelet: none ready), no mount left
	stopped     time.Duration   // manifests removed → no pod in /pods, no sandbox ready, no mount left (the kubelet: = teardown)
	teardownCPU float64         // CPU s the agent used during the teardown
}

// startAgent starts a fresh agent of kind.
func (b *bench) startAgent(kind agentKind) (*agent, error) {
	if kind == kindKubelet {
		return startKubelet(b.tmp, b.kubeletBin, b.endpoint)
	}
	return startNodelet(b.tmp, b.bin, b.endpoint, b.opts.nodeletArgs...)
}

// agentRun starts a fresh agent of kind, runs pods static pods on it, removes them and stops it.
// Whatever happens, the agent is stopped and what the run created is removed before it returns.
func (b *bench) agentRun(ctx context.Context, g *guard, kind agentKind, pods int) (res agentResult, err error) {
	a, done, err := b.startMeasured(ctx, g, kind)
	defer func() { err = done(err) }()
	if err != nil {
		return res, err
	}
	res.startupCPU = a.startupCPU
	pid, cpu0 := a.pid(), a.startupCPU // CPU time when the agent was quiet

	names, err := a.stage("sleep", pods, sleeperManifest)
	if err != nil {
		return res, err
	}
	start := time.Now()
	if err := a.putInPlace(names); err != nil {
		return res, err
	}
	if res.perPod, err = a.waitReady(ctx, start, pods, b.opts.timeout); err != nil {
		return res, err
	}
	res.ready = time.Since(start)
	cpu1, err := cpuSeconds(pid, b.hz)
	if err != nil {
		return res, err
	}
	res.cpu = cpu1 - cpu0
	if res.mem, err = readMemory(pid); err != nil {
		return res, err
	}

	t1 := time.Now()
	if err := a.idle(ctx, steadyWindow); err != nil {
		return res, err
	}
	cpu2, err := cpuSeconds(pid, b.hz)
	if err != nil {
		return res, err
	}
	res.steadyCPU = (cpu2 - cpu1) / time.Since(t1).Seconds()

	if res.stopped, res.teardown, err = a.teardown(ctx, b, names); err != nil {
		return res, err
	}
	cpu3, err := cpuSeconds(pid, b.hz)
	if err != nil {
		return res, err
	}
	res.teardownCPU = cpu3 - cpu2
	if err := a.stop(stopTimeout); err != nil {
		return res, fmt.Errorf("stop %s %s: %w", kind, a.name, err)
	}
	return res, nil
}

// quiet waits until the agent has used at most quietCPU over the last quietWindow, or
// quietLimit has passed, and returns the CPU time it has used since it started.
func (a *agent) quiet(ctx context.Context, hz float64) (float64, error) {
	const step = 100 * time.Millisecond
	var samples []float64 // CPU s, one every step
	start := time.Now()
	var cpu float64
	err := a.poll(ctx, step, fmt.Sprintf("%s to finish starting", a.kind), func() (bool, error) {
		var err error
		if cpu, err = cpuSeconds(a.pid(), hz); err != nil {
			return false, err
		}
		samples = append(samples, cpu)
		n := int(quietWindow / step)
		if len(samples) > n && cpu-samples[len(samples)-1-n] <= quietCPU {
			return true, nil
		}
		if time.Since(start) > quietLimit {
			logf("%s %s still used more than %.2f CPU s a second %v after it answered; going on", a.kind, a.name, quietCPU, quietLimit)
			return true, nil
		}
		return false, nil
	})
	return cpu, err
}

// stage writes the manifests of n pods named <prefix>-<i>, made by manifest, into the staging
// directory, so that putting them in place is one rename each, and returns their file names.
func (a *agent) stage(prefix string, n int, manifest func(name string) string) ([]string, error) {
	var names []string
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("%s-%d", prefix, i)
		f := name + ".yaml"
		if err := os.WriteFile(filepath.Join(a.staging, f), []byte(manifest(name)), 0o644); err != nil {
			return nil, fmt.Errorf("write manifest %s: %w", f, err)
		}
		names = append(names, f)
	}
	return names, nil
}

// measurePoll is how often the bench reads /pods (and lists sandboxes) while it times a start or
// a teardown of pods pods: a measured time can be up to one period (plus one request) late, so
// the period is short (10 ms: one pod's start is within 0.1 s of the runtime's floor). Every
// read costs the agent a copy and an encoding of every pod: with many pods, fewer reads, so that
// the agent's CPU time is not mostly the bench's polling.
func measurePoll(pods int) time.Duration {
	return max(10*time.Millisecond, time.Duration(pods)*2*time.Millisecond)
}

// waitReady polls /pods until all pods of this node are Running and Ready, and returns for each
// pod the time from start until it was first seen so.
func (a *agent) waitReady(ctx context.Context, start time.Time, pods int, timeout time.Duration) ([]time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last []v1.Pod
	var lastErr error
	seen := map[string]time.Duration{}
	err := a.poll(ctx, measurePoll(pods), fmt.Sprintf("%d pods Running and Ready", pods), func() (bool, error) {
		list, err := a.pods(ctx)
		if lastErr = err; err != nil {
			return false, nil
		}
		now := time.Since(start)
		last = list
		for i := range list {
			p := &list[i]
			if _, ok := seen[p.Name]; !ok && strings.HasSuffix(p.Name, "-"+a.name) && runningReady(p) {
				seen[p.Name] = now
			}
		}
		return countReady(last, a.name) == pods, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w; last /pods: %s (error: %v)", err, summarize(last), lastErr)
	}
	out := make([]time.Duration, 0, len(seen))
	for _, d := range seen {
		out = append(out, d)
	}
	return out, nil
}

// waitGone polls until /pods lists no pod and the runtime has no sandbox of this node (none
// ready, for an agent that keepsStoppedSandboxes), and no mount is left below its root
// directory (the kubelet bind-mounts the directory itself onto itself, shared); it checks every
// period. It returns when, after start, the pods were first seen stopped: /pods empty, no
// sandbox ready, no mount left (for an agent that keepsStoppedSandboxes, that is when it
// returns).
func (a *agent) waitGone(ctx context.Context, b *bench, period time.Duration, start time.Time) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, b.opts.timeout)
	defer cancel()
	var left string
	var stopped time.Duration
	err := a.poll(ctx, period, string(a.kind)+" to remove every pod", func() (bool, error) {
		now := time.Since(start)
		pods, err := a.pods(ctx)
		if err != nil || len(pods) > 0 {
			left = fmt.Sprintf("/pods: %s (error: %v)", summarize(pods), err)
			return false, nil
		}
		if m := slices.DeleteFunc(testharness.MountsUnder(a.rootDir), func(m string) bool { return m == a.rootDir }); len(m) > 0 {
			left = fmt.Sprintf("mounts %v", m)
			return false, nil
		}
		sbs, err := testharness.NodeSandboxes(ctx, b.cri, a.name)
		if err != nil {
			left = fmt.Sprintf("sandboxes unknown (error: %v)", err)
			return false, nil
		}
		ready := slices.DeleteFunc(slices.Clone(sbs), func(s *runtimeapi.PodSandbox) bool {
			return s.State != runtimeapi.PodSandboxState_SANDBOX_READY
		})
		if len(ready) > 0 {
			left = fmt.Sprintf("%d sandboxes ready", len(ready))
			return false, nil
		}
		if stopped == 0 {
			stopped = now
		}
		if !a.keepsStoppedSandboxes && len(sbs) > 0 {
			left = fmt.Sprintf("%d sandboxes stopped, not removed", len(sbs))
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return stopped, fmt.Errorf("%w; left: %s", err, left)
	}
	return stopped, nil
}

func countReady(pods []v1.Pod, node string) int {
	n := 0
	for i := range pods {
		if strings.HasSuffix(pods[i].Name, "-"+node) && runningReady(&pods[i]) {
			n++
		}
	}
	return n
}

func runningReady(p *v1.Pod) bool {
	if p.Status.Phase != v1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// summarize counts pods by phase and readiness, for error messages: "3 Running+Ready, 2 Pending".
func summarize(pods []v1.Pod) string {
	counts := map[string]int{}
	for i := range pods {
		k := string(pods[i].Status.Phase)
		if runningReady(&pods[i]) {
			k += "+Ready"
		}
		counts[k]++
	}
	if len(counts) == 0 {
		return "no pods"
	}
	var parts []string
	for k, c := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", c, k))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
