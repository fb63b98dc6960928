package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestInitContainersAndSidecar: init containers run in order before the app; a sidecar init
// container keeps running while the app runs.
func TestInitContainersAndSidecar(t *testing.T) {
	n := startNode(t)
	n.write("init.yaml", `apiVersion: v1
kind: Pod
metadata: {name: init}
spec:
  terminationGracePeriodSeconds: 2
  volumes: [{name: shared, emptyDir: {}}]
  initContainers:
  - {name: first, image: "busybox:1.35", command: ["sh", "-c", "echo first >> /shared/order"], volumeMounts: [{name: shared, mountPath: /shared}]}
  - {name: second, image: "busybox:1.35", command: ["sh", "-c", "echo second >> /shared/order"], volumeMounts: [{name: shared, mountPath: /shared}]}
  - name: sidecar
    image: busybox:1.35
    restartPolicy: Always
    command: ["sh", "-c", "trap 'exit 0' TERM; echo sidecar >> /shared/order; while true; do sleep 1; done"]
    volumeMounts: [{name: shared, mountPath: /shared}]
  containers:
  - name: app
    image: busybox:1.35
    command: ["sh", "-c", "trap 'exit 0' TERM; cat /shared/order; echo app >> /shared/order; while true; do sleep 1; done"]
    volumeMounts: [{name: shared, mountPath: /shared}]
`)
	p := n.waitPod("init", 90*time.Second, "Running and Ready", isRunningReady)
	for _, name := range []string{"first", "second"} {
		cs := containerStatus(p, name)
		if cs == nil || cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 || cs.State.Terminated.Reason != "Completed" {
			t.Errorf("init container %s: %+v", name, cs)
		}
	}
	if cs := containerStatus(p, "sidecar"); cs == nil || cs.State.Running == nil || cs.Started == nil || !*cs.Started {
		t.Errorf("sidecar is not running beside the app: %+v", cs)
	}
	if !hasCondition(p, v1.PodInitialized, v1.ConditionTrue) {
		t.Errorf("Initialized is not True: %+v", p.Status.Conditions)
	}
	first := containerStatus(p, "first").State.Terminated
	second := containerStatus(p, "second").State.Terminated
	app := containerStatus(p, "app").State.Running
	if second.StartedAt.Before(&first.FinishedAt) || app.StartedAt.Before(&second.FinishedAt) {
		t.Errorf("out of order: first ended %v, second started %v and ended %v, app started %v",
			first.FinishedAt, second.StartedAt, second.FinishedAt, app.StartedAt)
	}
	logs := readContainerLog(t, n, p, "app")
	if want := "first\nsecond\nsidecar\n"; !strings.HasPrefix(logs, want) {
		t.Errorf("the app saw %q in the shared file, want %q first", logs, want)
	}
}

// TestFailingInitWithNeverFailsPod: a failing init container under restartPolicy Never makes
// the pod Failed, and the app never starts.
func TestFailingInitWithNeverFailsPod(t *testing.T) {
	n := startNode(t)
	n.write("badinit.yaml", `apiVersion: v1
kind: Pod
metadata: {name: badinit}
spec:
  restartPolicy: Never
  initContainers: [{name: init, image: "busybox:1.35", command: ["sh", "-c", "exit 7"]}]
  containers: [{name: app, image: "busybox:1.35", command: ["sleep", "3600"]}]
`)
	p := n.waitPod("badinit", 60*time.Second, "Failed", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodFailed })
	if cs := containerStatus(p, "init"); cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 7 {
		t.Errorf("init status: %+v", cs)
	}
	if cs := containerStatus(p, "app"); cs != nil && (cs.State.Running != nil || cs.ContainerID != "") {
		t.Errorf("the app started: %+v", cs)
	}
}

// TestRestartPolicies: OnFailure with exit 0 → Succeeded; Never with exit 3 → Failed with exit
// code 3 and reason Error.
func TestRestartPolicies(t *testing.T) {
	n := startNode(t)
	oneShot := func(name, policy, code string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  restartPolicy: %s\n  containers: [{name: main, image: \"busybox:1.35\", command: [\"sh\", \"-c\", \"echo done; exit %s\"]}]\n", name, policy, code)
	}
	n.write("ok.yaml", oneShot("ok", "OnFailure", "0"))
	n.write("fail.yaml", oneShot("fail", "Never", "3"))
	ok := n.waitPod("ok", 60*time.Second, "Succeeded", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodSucceeded })
	if cs := containerStatus(ok, "main"); cs.RestartCount != 0 || cs.State.Terminated == nil || cs.State.Terminated.Reason != "Completed" {
		t.Errorf("OnFailure exit 0: %+v", cs)
	}
	fail := n.waitPod("fail", 60*time.Second, "Failed", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodFailed })
	if cs := containerStatus(fail, "main"); cs.RestartCount != 0 || cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 3 || cs.State.Terminated.Reason != "Error" {
		t.Errorf("Never exit 3: %+v", cs)
	}
}

// TestCrashLoopBackOff: restartPolicy Always with a container that exits 1 goes into
// CrashLoopBackOff. As upstream, the first restart is immediate; the following ones come 10 s,
// 20 s and 40 s (±25 %) after the previous exit; restartCount counts them. The starts are read
// from nodelet's "Started container" lines: the status shows each instance for as long as it
// lives, and the first two live a few milliseconds each, less than a poll.
func TestCrashLoopBackOff(t *testing.T) {
	n := startNode(t)
	n.write("crash.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: crash}\nspec:\n  containers: [{name: main, image: \"busybox:1.35\", command: [\"sh\", \"-c\", \"exit 1\"]}]\n")
	startedLines := func() []string { return n.logs.matching(`"Started container"`, `pod="default/crash-`+n.name+`"`) }
	sawBackOff := false
	lastRC := int32(0)
	deadline := time.Now().Add(120 * time.Second)
	for len(startedLines()) < 5 && time.Now().Before(deadline) {
		if cs := containerStatus(n.pod("crash"), "main"); cs != nil {
			if w := cs.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" {
				sawBackOff = true
				if cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 1 {
					t.Errorf("CrashLoopBackOff without the last exit in lastState: %+v", cs.LastTerminationState)
				}
			}
			if started := len(startedLines()); cs.RestartCount < lastRC || int(cs.RestartCount) > started {
				t.Errorf("restartCount %d (before: %d) after %d instances started", cs.RestartCount, lastRC, started)
			}
			lastRC = cs.RestartCount
		}
		time.Sleep(250 * time.Millisecond)
	}
	var starts []time.Time
	for _, l := range startedLines() {
		at, err := time.Parse("0102 15:04:05.000000", l[1:21]) // klog's header: I1123 21:27:38.525652
		if err != nil {
			t.Fatalf("start time of %q: %v", l, err)
		}
		starts = append(starts, at)
	}
	if !sawBackOff {
		t.Error("never saw the CrashLoopBackOff waiting reason")
	}
	if len(starts) < 5 {
		t.Fatalf("saw %d starts in 120 s, want 5", len(starts))
	}
	if gap := starts[1].Sub(starts[0]); gap > 3*time.Second {
		t.Errorf("the first restart came after %v; upstream restarts at once after the first exit", gap)
	}
	starts = starts[1:]
	for i, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second} {
		gap := starts[i+1].Sub(starts[i])
		t.Logf("restart %d came %v after the previous start (want %v ±25%%)", i+1, gap, want)
		if gap < want*3/4 || gap > want*5/4+time.Second {
			t.Errorf("restart %d: gap %v, want %v ±25%%", i+1, gap, want)
		}
	}
}
