package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/cri"
	"github.com/nodelet/nodelet/internal/testharness"
)

// Issue 7, acceptance 2: the evented PLEG is on by default; it follows containerd 2.x's CRI
// container events, and on containerd 1.6 (Debian's package), which does not serve them, it
// falls back to relisting every second.

// containerd16Script is hack/containerd16.sh relative to this package's directory.
const containerd16Script = "../../hack/containerd16.sh"

// The log lines of internal/pleg/evented_loop.go that tell which way the PLEG went.
const (
	eventStreamUpMsg   = "EventedPLEG: container event stream is up; relisting only as a safety net"
	eventsFallbackMsg  = "EventedPLEG: the container runtime does not serve CRI container events"
	relistEverySecond  = `relistPeriod="1s"`
	unimplementedError = "code = Unimplemented"
)

// containerd16 brings up hack/containerd16.sh's containerd 1.6 (it pulls from testenv's
// registry, so testenv comes up first) and describes it. Unless it was already up, the test's
// cleanup takes it down again, after the node's cleanup (cleanups run last first), and checks
// that nothing of it remains.
func containerd16(t *testing.T) env {
	t.Helper()
	testenv(t)
	wasUp := exec.Command("bash", containerd16Script, "status").Run() == nil
	start := time.Now()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("bash", containerd16Script, "up")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s up: %v\n%s%s", containerd16Script, err, stderr.Bytes(), stdout.Bytes())
	}
	if !wasUp {
		t.Cleanup(func() {
			start := time.Now()
			for _, arg := range []string{"down", "check-clean"} {
				if out, err := exec.Command("bash", containerd16Script, arg).CombinedOutput(); err != nil {
					t.Errorf("%s %s: %v\n%s", containerd16Script, arg, err, out)
				}
			}
			t.Logf("containerd 1.6 down and checked clean in %v", time.Since(start).Round(time.Millisecond))
		})
	}
	var endpoint string
	for _, line := range strings.Split(stdout.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "CONTAINERD16_ENDPOINT="); ok {
			endpoint = v
		}
	}
	if endpoint == "" {
		t.Fatalf("%s up printed no CONTAINERD16_ENDPOINT:\n%s", containerd16Script, stdout.Bytes())
	}
	t.Logf("containerd 1.6 up in %v (was up: %v)", time.Since(start).Round(time.Millisecond), wasUp)
	return env{endpoint: endpoint}
}

// runtimeVersion is the CRI RuntimeVersion at e's endpoint, without a leading "v".
func runtimeVersion(t *testing.T, e env) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := cri.Dial(ctx, e.endpoint, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v := c.Version()
	t.Logf("runtime at %s: %s %s (CRI %s)", e.endpoint, v.GetRuntimeName(), v.GetRuntimeVersion(), v.GetRuntimeApiVersion())
	return strings.TrimPrefix(v.GetRuntimeVersion(), "v")
}

// plegMetrics is what /metrics on the read-only port says of the PLEG.
type plegMetrics struct {
	relists                    float64 // kubelet_pleg_relist_duration_seconds_count
	streamOpened, streamFailed float64 // kubelet_evented_pleg_connection_{success,error}_count
	events                     float64 // kubelet_evented_pleg_connection_latency_seconds_count: events received
}

func (n *node) plegMetrics() plegMetrics {
	n.t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", n.port))
	if err != nil {
		n.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		n.t.Fatalf("/metrics: %d %v\n%s", resp.StatusCode, err, body)
	}
	f := parseMetrics(n.t, "/metrics", string(body))
	get := func(name string) float64 {
		v := sample(f[name], nil)
		if v < 0 {
			n.t.Fatalf("/metrics has no %s", name)
		}
		return v
	}
	return plegMetrics{
		relists:      get("kubelet_pleg_relist_duration_seconds"),
		streamOpened: get("kubelet_evented_pleg_connection_success_count"),
		streamFailed: get("kubelet_evented_pleg_connection_error_count"),
		events:       get("kubelet_evented_pleg_connection_latency_seconds"),
	}
}

// exitRun is what runExitingPod saw.
type exitRun struct {
	pod     *v1.Pod
	before  plegMetrics   // when the manifest was written
	after   plegMetrics   // after the pod succeeded and a few relist periods more
	elapsed time.Duration // between the two
}

// runExitingPod runs a pod with restartPolicy Never whose container sleeps 2 s and exits 0:
// the pod must show Running, then Succeeded with the container terminated (exit 0, Completed,
// no restart); three relist periods later it must still be so, with exactly one container and
// one sandbox in the runtime. shimCheck, if not nil, runs once while the pod runs.
func runExitingPod(t *testing.T, n *node, shimCheck func()) exitRun {
	t.Helper()
	const name = "exit"
	r := exitRun{before: n.plegMetrics()}
	start := time.Now()
	n.write(name+".yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: busybox:1.35
    command: ["sh", "-c", "sleep 2; exit 0"]
`, name))
	var sawRunning, sawSucceeded time.Time
	var phases []string
	deadline := time.Now().Add(90 * time.Second)
	for sawSucceeded.IsZero() && time.Now().Before(deadline) {
		p := n.pod(name)
		if p != nil {
			if len(phases) == 0 || phases[len(phases)-1] != string(p.Status.Phase) {
				phases = append(phases, string(p.Status.Phase))
			}
			cs := containerStatus(p, "main")
			switch {
			case p.Status.Phase == v1.PodRunning && cs != nil && cs.State.Running != nil && sawRunning.IsZero():
				sawRunning = time.Now()
				if shimCheck != nil {
					shimCheck()
				}
			case p.Status.Phase == v1.PodSucceeded:
				sawSucceeded = time.Now()
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if sawSucceeded.IsZero() {
		t.Fatalf("pod %s not Succeeded after 90 s; phases seen %v; last:\n%s", name, phases, podJSON(n.pod(name)))
	}
	if sawRunning.IsZero() {
		t.Errorf("pod %s never showed Running with its container running; phases seen %v", name, phases)
	}
	t.Logf("pod %s: phases %v; Running seen after %v, Succeeded after %v", name, phases,
		sawRunning.Sub(start).Round(time.Millisecond), sawSucceeded.Sub(start).Round(time.Millisecond))

	// Three relist periods: time for a wrongly restarted container to show.
	time.Sleep(3 * time.Second)
	r.after, r.elapsed = n.plegMetrics(), time.Since(start)
	p := n.pod(name)
	r.pod = p
	cs := containerStatus(p, "main")
	if p == nil || p.Status.Phase != v1.PodSucceeded || cs == nil || cs.State.Terminated == nil {
		t.Fatalf("pod %s 3 s after it succeeded:\n%s", name, podJSON(p))
	}
	term := cs.State.Terminated
	if term.ExitCode != 0 || term.Reason != "Completed" || cs.RestartCount != 0 || !strings.HasPrefix(cs.ContainerID, "containerd://") ||
		term.StartedAt.IsZero() || term.FinishedAt.Before(&term.StartedAt) {
		t.Errorf("container status: %s", podJSON(cs))
	}
	if hasCondition(p, v1.PodReady, v1.ConditionTrue) || hasCondition(p, v1.ContainersReady, v1.ConditionTrue) {
		t.Errorf("a succeeded pod is still Ready: %+v", p.Status.Conditions)
	}
	// Exactly one container was ever created for the pod (restartPolicy Never), in one sandbox.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctrs, err := n.criClient().ListContainers(ctx, &runtimeapi.ContainerFilter{
		LabelSelector: map[string]string{container.PodNameLabel: n.podName(name)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ctrs) != 1 || ctrs[0].GetMetadata().GetName() != "main" || ctrs[0].GetMetadata().GetAttempt() != 0 ||
		"containerd://"+ctrs[0].GetId() != cs.ContainerID {
		var ids []string
		for _, c := range ctrs {
			ids = append(ids, fmt.Sprintf("%s %s attempt %d %v", c.GetId(), c.GetMetadata().GetName(), c.GetMetadata().GetAttempt(), c.GetState()))
		}
		t.Errorf("runtime has %d containers of pod %s, want exactly the one in its status (%s): %v", len(ctrs), name, cs.ContainerID, ids)
	}
	if sb := n.sandboxesOf(name); len(sb) != 1 {
		t.Errorf("%d sandboxes of pod %s, want 1", len(sb), name)
	}
	return r
}

// podJSON shows a pod or a status in a failure message.
func podJSON(v any) string {
	js, _ := json.MarshalIndent(v, "", "  ")
	return string(js)
}

// TestEventedPLEGFallbackOnContainerd16: on containerd 1.6 (Debian's package), which answers
// GetContainerEvents with Unimplemented, nodelet says so once and relists every second; a pod
// whose container exits still goes Running, then Succeeded, and its container is created once.
func TestEventedPLEGFallbackOnContainerd16(t *testing.T) {
	e := containerd16(t)
	if v := runtimeVersion(t, e); !strings.HasPrefix(v, "1.6.") {
		t.Fatalf("runtime version %q at %s, want containerd 1.6", v, e.endpoint)
	}
	n := startNodeOn(t, e, "e2e-"+strings.ToLower(testharness.RandomHex(4)))
	n.logs.waitCount(t, 30*time.Second, 1, eventsFallbackMsg)
	line := n.logs.matching(eventsFallbackMsg)[0]
	if !strings.Contains(line, relistEverySecond) || !strings.Contains(line, unimplementedError) {
		t.Errorf("fallback log line lacks %s or %q:\n%s", relistEverySecond, unimplementedError, line)
	}
	t.Logf("fallback logged: %s", line)

	sock := strings.TrimPrefix(e.endpoint, "unix://")
	r := runExitingPod(t, n, func() {
		// The pod runs in a shim of Debian's package, started by containerd 1.6.
		exes := shimExes(sock)
		if len(exes) == 0 {
			t.Errorf("no containerd shim serves %s", sock)
		}
		for pid, exe := range exes {
			if exe != "/usr/bin/containerd-shim-runc-v2" {
				t.Errorf("shim %d of %s runs %s, want /usr/bin/containerd-shim-runc-v2", pid, sock, exe)
			}
		}
	})

	// Relisting every second: at least one relist per two seconds of the run. No event arrived.
	relists := r.after.relists - r.before.relists
	t.Logf("%v relists in %v; stream: %v opened, %v failed, %v events", relists, r.elapsed.Round(time.Millisecond),
		r.after.streamOpened, r.after.streamFailed, r.after.events)
	if relists < r.elapsed.Seconds()/2 {
		t.Errorf("%v relists in %v: not relisting every second", relists, r.elapsed)
	}
	if r.after.events != 0 || r.after.streamFailed < 1 {
		t.Errorf("metrics: %v events received, %v stream failures; want none received and at least one failure", r.after.events, r.after.streamFailed)
	}
	if got := n.logs.matching(eventsFallbackMsg); len(got) != 1 {
		t.Errorf("fallback logged %d times, want once:\n%s", len(got), strings.Join(got, "\n"))
	}
	if got := n.logs.matching(eventStreamUpMsg); len(got) > 0 {
		t.Errorf("event stream reported up on containerd 1.6:\n%s", strings.Join(got, "\n"))
	}
}

// TestEventedPLEGOnContainerd2: on testenv's containerd 2.x the event stream comes up; a pod
// whose container exits goes Running, then Succeeded, from events: they are received (the
// latency histogram counts them) and the PLEG all but stops relisting.
func TestEventedPLEGOnContainerd2(t *testing.T) {
	e := testenv(t)
	if v := runtimeVersion(t, e); !strings.HasPrefix(v, "2.") {
		t.Fatalf("runtime version %q at %s, want containerd 2.x", v, e.endpoint)
	}
	n := startNodeOn(t, e, "e2e-"+strings.ToLower(testharness.RandomHex(4)))
	n.logs.waitCount(t, 30*time.Second, 1, eventStreamUpMsg)
	t.Logf("stream up logged: %s", n.logs.matching(eventStreamUpMsg)[0])

	r := runExitingPod(t, n, nil)

	relists := r.after.relists - r.before.relists
	events := r.after.events - r.before.events
	t.Logf("%v relists in %v; stream: %v opened, %v failed, %v events (%v during the pod's run)", relists,
		r.elapsed.Round(time.Millisecond), r.after.streamOpened, r.after.streamFailed, r.after.events, events)
	if r.after.streamOpened < 1 {
		t.Errorf("kubelet_evented_pleg_connection_success_count = %v, want >= 1", r.after.streamOpened)
	}
	// The container alone was created, started and stopped (the sandbox adds its own).
	if events < 3 {
		t.Errorf("%v container events received during the pod's run, want at least 3 (created, started, stopped)", events)
	}
	if relists*2 > r.elapsed.Seconds() {
		t.Errorf("%v relists in %v: the PLEG relisted as if it had no event stream", relists, r.elapsed)
	}
	if got := n.logs.matching(eventsFallbackMsg); len(got) > 0 {
		t.Errorf("fallback logged on containerd 2.x:\n%s", strings.Join(got, "\n"))
	}
	if got := n.logs.matching("EventedPLEG: container event stream broke"); len(got) > 0 {
		t.Errorf("event stream broke:\n%s", strings.Join(got, "\n"))
	}
}

// shimExes maps the PIDs of the containerd shims serving the containerd at sock to their
// executables.
func shimExes(sock string) map[int]string {
	out := map[int]string{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		comm, err := os.ReadFile(filepath.Join(d, "comm"))
		if err != nil || !strings.HasPrefix(string(comm), "containerd-shim") {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(sock)) {
			continue
		}
		exe, _ := os.Readlink(filepath.Join(d, "exe"))
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil {
			out[pid] = exe
		}
	}
	return out
}
