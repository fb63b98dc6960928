package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestSpecChangeRecreatesPod: changing a container's spec gives the static pod a new UID, as
// upstream: the old pod's containers stop and the new pod runs in a new sandbox.
func TestSpecChangeRecreatesPod(t *testing.T) {
	n := startNode(t)
	n.write("app.yaml", sleeper("app", "Always"))
	old := n.waitPod("app", 60*time.Second, "Running", isRunningReady)
	oldID := containerStatus(old, "main").ContainerID
	n.write("app.yaml", strings.Replace(sleeper("app", "Always"), "sleep 1;", "sleep 2;", 1))
	cur := n.waitPod("app", 60*time.Second, "Running with a new UID", func(p *v1.Pod) bool {
		return isRunningReady(p) && p.UID != old.UID
	})
	if id := containerStatus(cur, "main").ContainerID; id == oldID {
		t.Fatal("the container was not recreated")
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(n.sandboxesOf("app")) != 1 && time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
	}
	if sb := n.sandboxesOf("app"); len(sb) != 1 || sb[0].Metadata.Uid != string(cur.UID) {
		t.Fatalf("sandboxes after the change: %v (want only the new pod's)", sb)
	}
}

// TestDeleteManifestTerminatesWithGrace: deleting the file terminates the pod; a container
// that traps SIGTERM exits in time with its own exit code; one that ignores SIGTERM is killed
// when the grace period ends.
func TestDeleteManifestTerminatesWithGrace(t *testing.T) {
	n := startNode(t)
	const grace = 8
	n.write("term.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: term}
spec:
  terminationGracePeriodSeconds: %d
  containers:
  - name: trapper
    image: busybox:1.35
    command: ["sh", "-c", "trap 'exit 42' TERM; while true; do sleep 0.2; done"]
  - name: ignorer
    image: busybox:1.35
    command: ["sh", "-c", "trap '' TERM; while true; do sleep 0.2; done"]
`, grace))
	p := n.waitPod("term", 60*time.Second, "Running", isRunningReady)
	ids := map[string]string{}
	for _, c := range []string{"trapper", "ignorer"} {
		ids[c] = strings.TrimPrefix(containerStatus(p, c).ContainerID, "containerd://")
	}
	c := n.criClient()
	deleted := time.Now()
	n.remove("term.yaml")
	exited := map[string]time.Duration{}
	codes := map[string]int32{}
	for len(exited) < 2 && time.Since(deleted) < time.Duration(grace+20)*time.Second {
		for name, id := range ids {
			if _, done := exited[name]; done {
				continue
			}
			st, err := c.ContainerStatus(context.Background(), id, false)
			if err != nil {
				t.Fatalf("container %s was removed before its exit was seen: %v", name, err)
			}
			if st.Status.State == runtimeapi.ContainerState_CONTAINER_EXITED {
				exited[name] = time.Since(deleted)
				codes[name] = st.Status.ExitCode
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("exits after deletion: %v, codes %v", exited, codes)
	if d, ok := exited["trapper"]; !ok || d > 5*time.Second || codes["trapper"] != 42 {
		t.Errorf("trapper: exited after %v with %d; want within 5 s with its own code 42", d, codes["trapper"])
	}
	if d, ok := exited["ignorer"]; !ok || d < (grace-1)*time.Second || d > (grace+5)*time.Second || codes["ignorer"] != 137 {
		t.Errorf("ignorer: exited after %v with %d; want SIGKILL (137) when the %d s grace period ends", d, codes["ignorer"], grace)
	}
	n.waitPod("term", 30*time.Second, "gone from /pods", func(p *v1.Pod) bool { return p == nil })
	deadline := time.Now().Add(30 * time.Second)
	for len(n.sandboxesOf("term")) > 0 && time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
	}
	if sb := n.sandboxesOf("term"); len(sb) != 0 {
		t.Fatalf("the pod's sandbox was not removed: %v", sb)
	}
}
