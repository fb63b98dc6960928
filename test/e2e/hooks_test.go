package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestLifecycleHooks: postStart and preStop run (seen through a file in a hostPath, which
// outlives the pod); a preStop sleep delays termination and is bounded by the grace period.
func TestLifecycleHooks(t *testing.T) {
	n := startNode(t)
	dir := t.TempDir()
	hooks := func(name, preStop string, grace int) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  terminationGracePeriodSeconds: %d
  volumes: [{name: out, hostPath: {path: %s, type: Directory}}]
  containers:
  - name: main
    image: busybox:1.35
    command: ["sh", "-c", "trap 'echo main-sigterm-$(date +%%s) >> /out/%s; exit 0' TERM; while true; do sleep 0.2; done"]
    volumeMounts: [{name: out, mountPath: /out}]
    lifecycle:
      postStart: {exec: {command: ["sh", "-c", "echo poststart-$(date +%%s) >> /out/%s"]}}
      preStop: %s
`, name, grace, dir, name, name, preStop)
	}
	n.write("exec.yaml", hooks("exec", `{exec: {command: ["sh", "-c", "echo prestop-$(date +%s) >> /out/exec"]}}`, 10))
	n.write("sleepy.yaml", hooks("sleepy", `{sleep: {seconds: 3}}`, 10))
	n.write("bounded.yaml", hooks("bounded", `{sleep: {seconds: 60}}`, 4))
	for _, name := range []string{"exec", "sleepy", "bounded"} {
		n.waitPod(name, 60*time.Second, "Running", isRunningReady)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "exec")); !strings.Contains(string(b), "poststart-") {
		t.Fatalf("postStart did not run: %q", b)
	}
	deleted := time.Now()
	for _, name := range []string{"exec", "sleepy", "bounded"} {
		n.remove(name + ".yaml")
	}
	// A removed pod leaves /pods at once and terminates in the background: it is done when
	// its sandbox is gone.
	stopped := map[string]time.Duration{}
	for time.Since(deleted) < 60*time.Second && len(stopped) < 3 {
		for _, name := range []string{"exec", "sleepy", "bounded"} {
			if _, done := stopped[name]; !done && len(n.sandboxesOf(name)) == 0 {
				stopped[name] = time.Since(deleted)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	log := func(name string) string { b, _ := os.ReadFile(filepath.Join(dir, name)); return string(b) }
	exec := log("exec")
	if i, j := strings.Index(exec, "prestop-"), strings.Index(exec, "main-sigterm-"); i < 0 || j < 0 || i > j {
		t.Errorf("preStop must run before SIGTERM reaches the container:\n%s", exec)
	}
	if s := log("sleepy"); !strings.Contains(s, "main-sigterm-") {
		t.Errorf("after the preStop sleep the container got SIGTERM: %q", s)
	}
	sigterm := func(name string) time.Time {
		for _, l := range strings.Split(log(name), "\n") {
			if v, ok := strings.CutPrefix(l, "main-sigterm-"); ok {
				var s int64
				fmt.Sscan(v, &s)
				return time.Unix(s, 0)
			}
		}
		return time.Time{}
	}
	if at := sigterm("sleepy"); at.IsZero() || at.Sub(deleted) < 2*time.Second {
		t.Errorf("a 3 s preStop sleep must delay SIGTERM: it came %v after the deletion", at.Sub(deleted))
	}
	t.Logf("pods gone after deletion: %v", stopped)
	if d, ok := stopped["sleepy"]; !ok || d < 3*time.Second {
		t.Errorf("the pod with a 3 s preStop sleep was gone after %v", d)
	}
	if d, ok := stopped["bounded"]; !ok || d > 15*time.Second {
		t.Errorf("a 60 s preStop sleep with a 4 s grace period held termination for %v", d)
	}
}

// TestFailingPostStartKillsContainer: a failing postStart kills the container, with a
// FailedPostStartHook event, and it restarts per its restartPolicy.
func TestFailingPostStartKillsContainer(t *testing.T) {
	n := startNode(t)
	n.write("bad-hook.yaml", `apiVersion: v1
kind: Pod
metadata: {name: badhook}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: busybox:1.35
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"]
    lifecycle:
      postStart: {exec: {command: ["sh", "-c", "echo hook-broke; exit 3"]}}
`)
	n.waitPod("badhook", 60*time.Second, "killed and restarted", func(p *v1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.RestartCount >= 1
	})
	if !n.hasEvent("badhook", "FailedPostStartHook", "") {
		t.Errorf("no FailedPostStartHook event: %+v", n.events("badhook"))
	}
	p := n.pod("badhook")
	if cs := containerStatus(p, "main"); cs.State.Running != nil && cs.Ready {
		t.Errorf("a container whose postStart fails must not be left running: %+v", cs.State)
	}
}
