package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Issue 6, acceptance 6: a container writing faster than the rotation limit leaves at most
// containerLogMaxFiles files, and kubectl logs still reads the current file.
func TestClusterContainerLogRotation(t *testing.T) {
	cn := startClusterNode(t, "--container-log-max-size", "1Mi", "--container-log-max-files", "3")
	cn.waitNodeReady(60 * time.Second)
	// About 1 MB/s: a line of 100 000 x's ten times a second.
	name := cn.applyPod(t, "chatty", `  containers:
  - name: main
    image: docker.io/library/busybox:1.35
    command: ["sh", "-c", "i=0; while true; do i=$((i+1)); echo line-$i $(head -c 100000 /dev/zero | tr '\\0' x); sleep 0.1; done"]
`)
	p := cn.waitAPIPod("default", name, 90*time.Second, "running", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodRunning })
	dir := filepath.Join(cn.logsDir, "default_"+name+"_"+string(p.UID), "main")

	// The monitor runs every 10 s (containerLogMonitorInterval): over 45 s the log passes the
	// limit several times. The count is checked every half second.
	rotated := false
	deadline := time.Now().Add(45 * time.Second)
	maxSeen := 0
	for time.Now().Before(deadline) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
			if strings.HasPrefix(e.Name(), "0.log.") {
				rotated = true
			}
		}
		maxSeen = max(maxSeen, len(names))
		if len(names) > 3 {
			t.Fatalf("%d log files in %s, containerLogMaxFiles is 3: %q", len(names), dir, names)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !rotated || maxSeen < 3 {
		t.Fatalf("the log was not rotated down to 3 files in 45 s (most files seen: %d); nodelet log:\n%s", maxSeen, cn.logs.dump())
	}
	out := cn.cp.kubectl(t, "logs", name, "--tail=1")
	if !strings.HasPrefix(out, "line-") || !strings.HasSuffix(out, "xxxx\n") {
		t.Errorf("kubectl logs --tail=1 after rotation: %.80q", out)
	}
}
