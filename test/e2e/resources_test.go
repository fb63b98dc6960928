package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// TestResources: a container that allocates past its memory limit ends OOMKilled; a cpu limit
// shows as the CFS quota of the container's cgroup, under the pod's cgroup parent.
func TestResources(t *testing.T) {
	n := startNode(t)
	n.write("hog.yaml", `apiVersion: v1
kind: Pod
metadata: {name: hog}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox:1.35
    command: ["sh", "-c", "mkdir -p /m && mount -t tmpfs tmpfs /m 2>/dev/null; x=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA; while true; do x=$x$x; done"]
    resources: {limits: {memory: 32Mi}}
`)
	n.write("capped.yaml", `apiVersion: v1
kind: Pod
metadata: {name: capped}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: busybox:1.35
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    resources: {limits: {cpu: 250m, memory: 64Mi}, requests: {cpu: 100m, memory: 32Mi}}
`)
	p := n.waitPod("hog", 90*time.Second, "Failed", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodFailed })
	if cs := containerStatus(p, "main"); cs.State.Terminated == nil || cs.State.Terminated.Reason != "OOMKilled" || cs.State.Terminated.ExitCode != 137 {
		t.Errorf("hog: %+v", cs.State)
	}
	p = n.waitPod("capped", 60*time.Second, "Running", isRunningReady)
	if p.Status.QOSClass != v1.PodQOSBurstable {
		t.Errorf("qosClass %s, want Burstable", p.Status.QOSClass)
	}
	id := strings.TrimPrefix(containerStatus(p, "main").ContainerID, "containerd://")
	dir := filepath.Join("/sys/fs/cgroup/cpu,cpuacct/kubepods/burstable", "pod"+string(p.UID), id)
	if _, err := os.Stat(dir); err != nil {
		dir = filepath.Join("/sys/fs/cgroup/cpu/kubepods/burstable", "pod"+string(p.UID), id)
	}
	read := func(file string) int64 {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatalf("read the container's cgroup: %v", err)
		}
		v, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return v
	}
	if q, per, shares := read("cpu.cfs_quota_us"), read("cpu.cfs_period_us"), read("cpu.shares"); q != 25000 || per != 100000 || shares != 102 {
		t.Errorf("cgroup %s: quota %d period %d shares %d, want 25000 100000 102", dir, q, per, shares)
	}
	memDir := strings.Replace(strings.Replace(dir, "cpu,cpuacct", "memory", 1), "/cpu/", "/memory/", 1)
	b, err := os.ReadFile(filepath.Join(memDir, "memory.limit_in_bytes"))
	if err != nil || strings.TrimSpace(string(b)) != fmt.Sprint(64<<20) {
		t.Errorf("memory limit in %s: %q (%v), want %d", memDir, b, err, 64<<20)
	}
}
