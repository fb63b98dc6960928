package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

const crashLooper = `apiVersion: v1
kind: Pod
metadata: {name: crash}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: "busybox:1.35", command: ["sh", "-c", "exit 1"]}]
`

// TestRestartKeepsStartTimesAndBackOffs SIGKILLs nodelet while a container is in a 40 s
// crash back-off and starts it again on the same root directory: the container is not
// restarted before its back-off ends, and every pod keeps its startTime (the checkpoint).
// Then a corrupt checkpoint: nodelet says so, starts without it and adopts the running pods.
func TestRestartKeepsStartTimesAndBackOffs(t *testing.T) {
	n := startNode(t)
	n.write("crash.yaml", crashLooper)
	n.write("steady.yaml", sleeper("steady", "Always"))
	n.waitPod("steady", 90*time.Second, "Running", isRunningReady)
	// Exits, restarts at once, then after 10 s and 20 s: the fourth exit begins a 40 s back-off.
	crash := n.waitPod("crash", 2*time.Minute, "a 40 s back-off", func(p *v1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.State.Waiting != nil && strings.Contains(cs.State.Waiting.Message, "back-off 40s")
	})
	steady := n.pod("steady")
	rc := containerStatus(crash, "main").RestartCount
	exited := containerStatus(crash, "main").LastTerminationState.Terminated.FinishedAt.Time
	time.Sleep(2 * time.Second) // the checkpoint is written every second

	n.kill9()
	n.start()
	restartedAt := time.Now()
	n.waitPod("steady", 30*time.Second, "Running again", isRunningReady)
	for _, before := range []*v1.Pod{crash, steady} {
		p := n.waitPod(strings.TrimSuffix(before.Name, "-"+n.name), 30*time.Second, "a status", func(p *v1.Pod) bool { return p.Status.StartTime != nil })
		if !p.Status.StartTime.Equal(before.Status.StartTime) {
			t.Errorf("%s: startTime %v after the restart, was %v", before.Name, p.Status.StartTime, before.Status.StartTime)
		}
	}
	// Until 40 s after the last exit (less a margin), no restart.
	until := exited.Add(35 * time.Second)
	if time.Until(until) < 10*time.Second {
		t.Fatalf("the restart took too long to show the back-off: the last exit was %v before nodelet came back", restartedAt.Sub(exited))
	}
	for time.Now().Before(until) {
		p := n.pod("crash")
		if cs := containerStatus(p, "main"); cs != nil && (cs.RestartCount != rc || cs.State.Running != nil) {
			t.Fatalf("%v after the restart of nodelet (%v after the last exit, in a 40 s back-off) the container restarted: restartCount %d (was %d), state %+v",
				time.Since(restartedAt).Round(time.Second), time.Since(exited).Round(time.Second), cs.RestartCount, rc, cs.State)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if lines := n.logs.matching("Restored the checkpoint"); len(lines) != 1 {
		t.Errorf("nodelet did not log the restored checkpoint once: %v", lines)
	}
	// The back-off ends: the container restarts.
	n.waitPod("crash", 30*time.Second, "restarted after the back-off", func(p *v1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.RestartCount > rc
	})

	// A corrupt checkpoint: a fresh start that still adopts what runs.
	steadyID := containerStatus(n.pod("steady"), "main").ContainerID
	n.kill9()
	path := filepath.Join(n.rootDir, "checkpoint", "pods.json")
	if err := os.WriteFile(path, []byte("{\"version\":1,\"checksum\":7,\"data\":{\"pods\":[{\"uid\":\"x\"}]}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	n.start()
	p := n.waitPod("steady", 30*time.Second, "Running again", isRunningReady)
	if id := containerStatus(p, "main").ContainerID; id != steadyID {
		t.Errorf("after a corrupt checkpoint the steady container is %s, was %s: not adopted", id, steadyID)
	}
	if lines := n.logs.matching("Starting without the checkpoint", "checksum"); len(lines) != 1 {
		t.Errorf("nodelet did not say it starts without the corrupt checkpoint:\n%s", n.logs.dump())
	}
	if _, err := os.Stat(path + ".corrupt"); err != nil {
		t.Errorf("the corrupt checkpoint was not moved aside: %v", err)
	}
	// And writes a good one again.
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), string(p.UID)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new checkpoint with the pods 10 s after the start: %s (%v)", b, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
