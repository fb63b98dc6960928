package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestVolumes: two containers share an emptyDir; a hostPath is mounted (read-only here); a
// Memory emptyDir is a tmpfs of its size limit.
func TestVolumes(t *testing.T) {
	n := startNode(t)
	host := t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "from-host.txt"), []byte("host-data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n.write("vol.yaml", `apiVersion: v1
kind: Pod
metadata: {name: vol}
spec:
  terminationGracePeriodSeconds: 2
  volumes:
  - {name: shared, emptyDir: {}}
  - {name: mem, emptyDir: {medium: Memory, sizeLimit: 16Mi}}
  - {name: host, hostPath: {path: `+host+`, type: Directory}}
  containers:
  - name: writer
    image: busybox:1.35
    command: ["sh", "-c", "trap 'exit 0' TERM; echo from-writer > /shared/msg; while true; do sleep 1; done"]
    volumeMounts: [{name: shared, mountPath: /shared}]
  - name: reader
    image: busybox:1.35
    command: ["sh", "-c", "trap 'exit 0' TERM; until [ -f /shared/msg ]; do sleep 0.2; done; cat /shared/msg; cat /host/from-host.txt; grep ' /mem ' /proc/mounts; df -k /mem | tail -1; touch /host/x 2>&1 || echo host-is-read-only; while true; do sleep 1; done"]
    volumeMounts: [{name: shared, mountPath: /shared}, {name: mem, mountPath: /mem}, {name: host, mountPath: /host, readOnly: true}]
`)
	p := n.waitPod("vol", 60*time.Second, "Running", isRunningReady)
	var out string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if out = readContainerLog(t, n, p, "reader"); strings.Contains(out, "host-is-read-only") {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	for _, want := range []string{"from-writer", "host-data", "tmpfs /mem tmpfs", "16384", "host-is-read-only"} {
		if !strings.Contains(out, want) {
			t.Errorf("reader output lacks %q:\n%s", want, out)
		}
	}
}
