package e2e

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestRestartAdoptsRunningPods: nodelet killed with SIGKILL while five pods run, then started
// again, adopts them: container IDs and restart counts unchanged, no duplicate sandbox, and
// the statuses are back within seconds.
func TestRestartAdoptsRunningPods(t *testing.T) {
	n := startNode(t)
	names := []string{"a", "b", "c", "d", "e"}
	for _, name := range names {
		n.write(name+".yaml", sleeper(name, "Always"))
	}
	// One pod has restarted once already, so a kept restart count is visible.
	n.write("r.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: r}
spec:
  terminationGracePeriodSeconds: 2
  volumes: [{name: state, emptyDir: {}}]
  containers:
  - name: main
    image: busybox:1.35
    command: ["sh", "-c", "trap 'exit 0' TERM; if [ ! -f /state/ran ]; then touch /state/ran; exit 1; fi; while true; do sleep 1; done"]
    volumeMounts: [{name: state, mountPath: /state}]
`))
	names = append(names, "r")
	before := map[string]v1.ContainerStatus{}
	sandboxes := map[string]string{}
	for _, name := range names {
		ready := isRunningReady
		if name == "r" {
			// Its first instance runs for an instant before it exits: the status may show it
			// Running (events are seen at once); wait for the second one.
			ready = func(p *v1.Pod) bool {
				cs := containerStatus(p, "main")
				return isRunningReady(p) && cs != nil && cs.RestartCount >= 1
			}
		}
		p := n.waitPod(name, 90*time.Second, "Running", ready)
		before[name] = *containerStatus(p, "main")
		sb := n.sandboxesOf(name)
		if len(sb) != 1 {
			t.Fatalf("%s: %d sandboxes before the restart", name, len(sb))
		}
		sandboxes[name] = sb[0].Id
	}
	if rc := before["r"].RestartCount; rc != 1 {
		t.Fatalf("pod r restartCount %d, want 1", rc)
	}
	n.kill9()
	restarted := time.Now()
	n.start()
	for _, name := range names {
		p := n.waitPod(name, 30*time.Second, "Running again", isRunningReady)
		cs := containerStatus(p, "main")
		if cs.ContainerID != before[name].ContainerID || cs.RestartCount != before[name].RestartCount {
			t.Errorf("%s: container %s restarts %d after the restart; before %s restarts %d",
				name, cs.ContainerID, cs.RestartCount, before[name].ContainerID, before[name].RestartCount)
		}
	}
	t.Logf("all statuses back %v after nodelet started again", time.Since(restarted).Round(time.Millisecond))
	time.Sleep(5 * time.Second) // several sync and housekeeping rounds
	for _, name := range names {
		sb := n.sandboxesOf(name)
		if len(sb) != 1 || sb[0].Id != sandboxes[name] {
			t.Errorf("%s: sandboxes after the restart %v, want only %s", name, sb, sandboxes[name])
		}
		if cs := containerStatus(n.pod(name), "main"); cs.ContainerID != before[name].ContainerID {
			t.Errorf("%s: the container was restarted after adoption", name)
		}
	}
	if got := len(n.logs.matching("Started container")); got != 0 {
		t.Errorf("nodelet started %d containers after the restart, want 0", got)
	}
}
