package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

const (
	// pollPeriod is how often the bench reads /pods while it waits; a measured time can be up
	// to one period (plus one request) late.
	pollPeriod = 50 * time.Millisecond
	// steadyWindow is how long the bench leaves nodelet alone (no /pods reads) once every pod
	// runs, to measure its steady-state CPU use with N pods.
	steadyWindow = 5 * time.Second
	// stopTimeout is how long nodelet gets to exit after SIGTERM.
	stopTimeout = 15 * time.Second
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

// nodeletResult is what one nodelet run measured.
type nodeletResult struct {
	startupCPU  float64       // CPU s from exec until /pods first answered
	ready       time.Duration // first manifest in place → all pods Running and Ready in /pods
	cpu         float64       // CPU s nodelet used during that window
	mem         memory        // VmHWM and VmRSS at the end of that window
	steadyCPU   float64       // CPU s per s over steadyWindow, every pod running, no /pods reads
	teardown    time.Duration // manifests removed → no pod in /pods, no sandbox, no mount left
	teardownCPU float64       // CPU s nodelet used during the teardown
}

// nodeletRun starts a fresh nodelet, runs pods static pods on it, removes them and stops it.
// Whatever happens, nodelet is stopped and what the run created is removed before it returns.
func (b *bench) nodeletRun(ctx context.Context, g *guard, pods int) (res nodeletResult, err error) {
	runStart := time.Now()
	n, err := startNodelet(b.tmp, b.bin, b.endpoint)
	if n != nil {
		defer func() {
			if err != nil && n.cmd != nil && !errors.Is(context.Cause(ctx), errInterference) {
				err = fmt.Errorf("%w\nlast lines of nodelet's log:\n%s", err, n.logTail(30))
			}
			cgroups, cerr := n.cleanup(b.cri, err != nil)
			if err != nil {
				b.leakedShims += b.stopOrphanShims(runStart)
			}
			if err == nil { // a failed run's nodelet did not get to remove its pods
				b.leftCgroups += cgroups
				b.nodeletPods += len(n.uids)
			}
			if cerr != nil {
				err = errors.Join(err, fmt.Errorf("clean up after node %s: %w", n.name, cerr))
			}
		}()
	}
	if err != nil {
		return res, err
	}
	g.onInterference(n.kill)
	defer g.onInterference(nil)
	pid := n.pid()

	startCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := n.poll(startCtx, pollPeriod, "nodelet's /pods to answer", func() (bool, error) {
		_, err := n.pods(startCtx)
		return err == nil, nil
	}); err != nil {
		return res, fmt.Errorf("start nodelet %s: %w", n.name, err)
	}
	cpu0, err := cpuSeconds(pid, b.hz)
	if err != nil {
		return res, err
	}
	res.startupCPU = cpu0

	names, err := n.stage(pods)
	if err != nil {
		return res, err
	}
	start := time.Now()
	for _, f := range names {
		if err := os.Rename(filepath.Join(n.staging, f), filepath.Join(n.manifests, f)); err != nil {
			return res, fmt.Errorf("put manifest %s in place: %w", f, err)
		}
	}
	if err := n.waitReady(ctx, pods, b.opts.timeout); err != nil {
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
	if err := n.poll(ctx, steadyWindow, "the steady-state window", func() (bool, error) {
		return time.Since(t1) >= steadyWindow, nil
	}); err != nil {
		return res, err
	}
	cpu2, err := cpuSeconds(pid, b.hz)
	if err != nil {
		return res, err
	}
	res.steadyCPU = (cpu2 - cpu1) / time.Since(t1).Seconds()

	start = time.Now()
	for _, f := range names {
		if err := os.Remove(filepath.Join(n.manifests, f)); err != nil {
			return res, fmt.Errorf("remove manifest %s: %w", f, err)
		}
	}
	if err := n.waitGone(ctx, b); err != nil {
		return res, err
	}
	res.teardown = time.Since(start)
	cpu3, err := cpuSeconds(pid, b.hz)
	if err != nil {
		return res, err
	}
	res.teardownCPU = cpu3 - cpu2
	if err := n.stop(stopTimeout); err != nil {
		return res, fmt.Errorf("stop nodelet %s: %w", n.name, err)
	}
	return res, nil
}

// stage writes the manifests of pods sleeper pods into the staging directory, so that putting
// them in place is one rename each, and returns their file names.
func (n *nodelet) stage(pods int) ([]string, error) {
	var names []string
	for i := 1; i <= pods; i++ {
		name := fmt.Sprintf("sleep-%d", i)
		f := name + ".yaml"
		if err := os.WriteFile(filepath.Join(n.staging, f), []byte(sleeperManifest(name)), 0o644); err != nil {
			return nil, fmt.Errorf("write manifest %s: %w", f, err)
		}
		names = append(names, f)
	}
	return names, nil
}

// waitReady polls /pods until all pods of this node are Running and Ready.
func (n *nodelet) waitReady(ctx context.Context, pods int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last []v1.Pod
	var lastErr error
	err := n.poll(ctx, pollPeriod, fmt.Sprintf("%d pods Running and Ready", pods), func() (bool, error) {
		list, err := n.pods(ctx)
		if lastErr = err; err != nil {
			return false, nil
		}
		last = list
		return countReady(last, n.name) == pods, nil
	})
	if err != nil {
		return fmt.Errorf("%w; last /pods: %s (error: %v)", err, summarize(last), lastErr)
	}
	return nil
}

// waitGone polls until /pods lists no pod and the runtime has no sandbox of this node, and no
// mount is left below its root directory.
func (n *nodelet) waitGone(ctx context.Context, b *bench) error {
	ctx, cancel := context.WithTimeout(ctx, b.opts.timeout)
	defer cancel()
	var left string
	err := n.poll(ctx, pollPeriod, "nodelet to remove every pod", func() (bool, error) {
		pods, err := n.pods(ctx)
		if err != nil || len(pods) > 0 {
			left = fmt.Sprintf("/pods: %s (error: %v)", summarize(pods), err)
			return false, nil
		}
		sbs, err := nodeSandboxes(ctx, b.cri, n.name)
		if err != nil || len(sbs) > 0 {
			left = fmt.Sprintf("%d sandboxes (error: %v)", len(sbs), err)
			return false, nil
		}
		if m := mountsUnder(n.rootDir); len(m) > 0 {
			left = fmt.Sprintf("mounts %v", m)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("%w; left: %s", err, left)
	}
	return nil
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
