package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// evicted says the pod ended as upstream's eviction leaves it: Failed, reason Evicted.
func evicted(p *v1.Pod) bool {
	return p != nil && p.Status.Phase == v1.PodFailed && p.Status.Reason == "Evicted"
}

// conditionWatch polls the Node's pressure conditions in the background and records every
// status it saw, so that a test can tell a condition turned True and back.
type conditionWatch struct {
	mu   sync.Mutex
	seen map[v1.NodeConditionType][]string // "True/Reason" in the order seen, repeats collapsed
	stop func()
}

func (cn *clusterNode) watchConditions(t *testing.T) *conditionWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &conditionWatch{seen: map[v1.NodeConditionType][]string{}}
	done := make(chan struct{})
	w.stop = func() { cancel(); <-done }
	t.Cleanup(w.stop)
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			n, err := cn.cp.client.CoreV1().Nodes().Get(ctx, cn.name, metav1.GetOptions{})
			if err == nil {
				w.mu.Lock()
				for _, ct := range []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure} {
					if c := nodeCondition(n, ct); c != nil {
						s := string(c.Status) + "/" + c.Reason
						if l := w.seen[ct]; len(l) == 0 || l[len(l)-1] != s {
							w.seen[ct] = append(l, s)
						}
					}
				}
				w.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
	return w
}

// history is what the watch saw of a condition.
func (w *conditionWatch) history(ct v1.NodeConditionType) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen[ct]...)
}

// waitFor waits until the condition's last seen status is want ("True/KubeletHasDiskPressure").
func (w *conditionWatch) waitFor(t *testing.T, ct v1.NodeConditionType, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if h := w.history(ct); len(h) > 0 && h[len(h)-1] == want {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("node condition %s: waited %v for %s; seen %q", ct, timeout, want, w.history(ct))
}

// hostMemoryAvailable is memory.available as upstream computes it on cgroup v1: the machine's
// memory minus the root memory cgroup's working set (usage minus inactive file pages).
func hostMemoryAvailable(t *testing.T) int64 {
	t.Helper()
	total := int64(0)
	mi, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(mi), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			total = kb * 1024
		}
	}
	usageB, err := os.ReadFile("/sys/fs/cgroup/memory/memory.usage_in_bytes")
	if err != nil {
		t.Fatalf("memory.available on cgroup v1: %v", err)
	}
	usage, _ := strconv.ParseInt(strings.TrimSpace(string(usageB)), 10, 64)
	f, err := os.Open("/sys/fs/cgroup/memory/memory.stat")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	inactive := int64(0)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok && k == "total_inactive_file" {
			inactive, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	ws := max(usage-inactive, 0)
	if total == 0 || ws == 0 {
		t.Fatalf("cannot read memory: total %d working set %d", total, ws)
	}
	return total - ws
}

// diskAvailable is the free space for unprivileged users on the filesystem of path (statfs).
func diskAvailable(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// Issue 15, acceptance 1: local storage isolation. An emptyDir over its sizeLimit, a container
// over its ephemeral-storage limit and a pod over the sum of its limits are evicted (phase Failed, reason Evicted,
// upstream's messages, an Evicted event) within 30 s; a pod within its limits keeps running.
func TestClusterLocalStorageEviction(t *testing.T) {
	cn := startClusterNode(t, "--volume-stats-agg-period=2s")
	cn.waitNodeReady(60 * time.Second)
	scratch := cn.applyPod(t, "scratch", `  containers:
  - name: fill
    image: docker.io/library/busybox:1.35
    command: [sh, -c, 'sleep 2; dd if=/dev/zero of=/scratch/fill bs=1M count=20; sleep 3600']
    volumeMounts: [{name: scratch, mountPath: /scratch}]
  volumes:
  - name: scratch
    emptyDir: {sizeLimit: 10Mi}
`)
	// Two containers, so that the pod's total (116Mi) holds and the container's own limit is
	// what is exceeded (upstream checks the pod's total first).
	writer := cn.applyPod(t, "writer", `  containers:
  - name: writer
    image: docker.io/library/busybox:1.35
    command: [sh, -c, 'sleep 2; dd if=/dev/zero of=/fill bs=1M count=30; sleep 3600']
    resources: {limits: {ephemeral-storage: 16Mi}}
  - name: idle
    image: docker.io/library/busybox:1.35
    command: [sleep, '3600']
    resources: {limits: {ephemeral-storage: 100Mi}}
`)
	total := cn.applyPod(t, "total", `  containers:
  - name: fill
    image: docker.io/library/busybox:1.35
    command: [sh, -c, 'sleep 2; dd if=/dev/zero of=/fill bs=1M count=30; sleep 3600']
    resources: {limits: {ephemeral-storage: 24Mi}}
`)
	bystander := cn.applyPod(t, "bystander", `  containers:
  - name: c
    image: docker.io/library/busybox:1.35
    command: [sh, -c, 'dd if=/dev/zero of=/small bs=1M count=2; sleep 3600']
    resources: {limits: {ephemeral-storage: 16Mi}}
`)
	running := map[string]time.Time{}
	for _, name := range []string{scratch, writer, total, bystander} {
		cn.waitAPIPod("default", name, 60*time.Second, "Running", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodRunning })
		running[name] = time.Now()
	}
	for name, msg := range map[string]string{
		scratch: `Usage of EmptyDir volume "scratch" exceeds the limit "10Mi". `,
		writer:  `Container writer exceeded its local ephemeral storage limit "16Mi". `,
		total:   "Pod ephemeral local storage usage exceeds the total limit of containers 24Mi. ",
	} {
		p := cn.waitAPIPod("default", name, 32*time.Second-time.Since(running[name]), "Failed/Evicted within 30 s of its write", evicted)
		if p.Status.Message != msg {
			t.Errorf("pod %s: message %q, want upstream's %q", name, p.Status.Message, msg)
		}
		for _, c := range p.Status.ContainerStatuses {
			if c.State.Terminated == nil {
				t.Errorf("pod %s: container %s not terminated: %+v", name, c.Name, c.State)
			}
		}
		if !cn.hasAPIEvent(name, "Evicted") {
			t.Errorf("pod %s: no Evicted event in the API", name)
		}
	}
	p := cn.waitAPIPod("default", bystander, 5*time.Second, "Running", func(p *v1.Pod) bool { return p != nil && isRunningReady(p) })
	if c := containerStatus(p, "c"); c.RestartCount != 0 {
		t.Errorf("the bystander restarted: %+v", c)
	}
}

// A standalone node admits a pod with an ephemeral-storage limit: allocatable ephemeral-storage
// is the root dir's filesystem minus the hard eviction threshold, as a registered node's. A
// static pod over its limit is not evicted (static pods are critical, as upstream), and the log
// says why.
func TestEphemeralStorageStandalone(t *testing.T) {
	n := startNode(t, "--volume-stats-agg-period=1s", "--eviction-monitoring-period=1s")
	n.write("limited.yaml", `apiVersion: v1
kind: Pod
metadata: {name: limited}
spec:
  containers:
  - name: c
    image: busybox:1.35
    command: [sh, -c, 'dd if=/dev/zero of=/fill bs=1M count=20; sleep 3600']
    resources: {limits: {ephemeral-storage: 16Mi}}
`)
	p := n.waitPod("limited", 60*time.Second, "Running", func(p *v1.Pod) bool { return p != nil && isRunningReady(p) })
	id := containerStatus(p, "c").ContainerID
	n.logs.waitCount(t, 30*time.Second, 1, "cannot evict a critical pod", "limited")
	p = n.waitPod("limited", 5*time.Second, "still Running", func(p *v1.Pod) bool { return p != nil && isRunningReady(p) })
	if c := containerStatus(p, "c"); c.ContainerID != id || p.Status.Phase != v1.PodRunning {
		t.Errorf("the static pod was disturbed: %+v", c)
	}
}

// Issue 15, acceptance 2: memory pressure, with memory.available computed as upstream (the
// machine's memory minus the root cgroup's working set) and a threshold set 1 GiB below what is
// available when the test starts. A BestEffort pod fills 2 GiB of a memory-backed emptyDir: the
// kernel's threshold notification wakes the eviction manager, which evicts that pod (it exceeds
// its requests) and not the Guaranteed pod within its requests; the node reports MemoryPressure
// through the API, refuses a new BestEffort pod meanwhile, and returns to no pressure after the
// transition period. It needs a quiet machine: hack/test.sh runs the pressure tests alone.
func TestClusterPressureMemory(t *testing.T) {
	threshold := hostMemoryAvailable(t) - 1<<30
	cn := startClusterNode(t, fmt.Sprintf("--eviction-hard=memory.available<%d", threshold),
		"--eviction-pressure-transition-period=15s", "--kernel-memcg-notification=true")
	cn.waitNodeReady(60 * time.Second)
	conditions := cn.watchConditions(t)
	guaranteed := cn.applyPod(t, "guaranteed", `  containers:
  - name: app
    image: docker.io/library/busybox:1.35
    command: [sleep, '3600']
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {cpu: 100m, memory: 64Mi}
`)
	p := cn.waitAPIPod("default", guaranteed, 60*time.Second, "Running", func(p *v1.Pod) bool { return p != nil && isRunningReady(p) })
	id := containerStatus(p, "app").ContainerID
	conditions.waitFor(t, v1.NodeMemoryPressure, "False/KubeletHasSufficientMemory", 30*time.Second)

	hog := cn.applyPod(t, "hog", `  containers:
  - name: hog
    image: docker.io/library/busybox:1.35
    command: [sh, -c, 'dd if=/dev/zero of=/mem/fill bs=1M count=2048; sleep 3600']
    volumeMounts: [{name: mem, mountPath: /mem}]
  volumes:
  - name: mem
    emptyDir: {medium: Memory}
`)
	p = cn.waitAPIPod("default", hog, 90*time.Second, "evicted", evicted)
	if !strings.HasPrefix(p.Status.Message, "The node was low on resource: memory. Threshold quantity: ") ||
		!strings.Contains(p.Status.Message, "Container hog was using ") {
		t.Errorf("hog: message %q, want upstream's", p.Status.Message)
	}
	if c := condition(p, v1.DisruptionTarget); c == nil || c.Status != v1.ConditionTrue || c.Reason != "TerminationByKubelet" || c.Message != p.Status.Message {
		t.Errorf("hog: DisruptionTarget %+v", c)
	}
	if !cn.hasAPIEvent(hog, "Evicted") {
		t.Error("hog: no Evicted event")
	}
	cn.logs.waitCount(t, 5*time.Second, 1, "the kernel reported a memory threshold crossed")
	conditions.waitFor(t, v1.NodeMemoryPressure, "True/KubeletHasInsufficientMemory", 10*time.Second)

	// Under memory pressure a BestEffort pod is refused, as upstream.
	late := cn.applyPod(t, "late", `  containers:
  - name: c
    image: docker.io/library/busybox:1.35
    command: [sleep, '3600']
`)
	p = cn.waitAPIPod("default", late, 20*time.Second, "refused", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodFailed })
	if p.Status.Reason != "Evicted" || p.Status.Message != "Pod was rejected: The node had condition: [MemoryPressure]. " {
		t.Errorf("late: refused with %q %q, want Evicted, upstream's message", p.Status.Reason, p.Status.Message)
	}

	conditions.waitFor(t, v1.NodeMemoryPressure, "False/KubeletHasSufficientMemory", 45*time.Second)
	p = cn.waitAPIPod("default", guaranteed, 5*time.Second, "Running", func(p *v1.Pod) bool { return p != nil && isRunningReady(p) })
	if c := containerStatus(p, "app"); c.ContainerID != id || c.RestartCount != 0 {
		t.Errorf("the Guaranteed pod within its requests was disturbed: %+v", c)
	}
	if h := conditions.history(v1.NodeMemoryPressure); len(h) != 3 {
		t.Errorf("MemoryPressure went %q, want False, True, False", h)
	}
}

// Issue 15, acceptance 3: disk pressure on the nodefs (which holds the images here: one
// filesystem), with the threshold 300 MiB below what is free when the test starts. A pod
// writing 600 MiB to an emptyDir crosses it: the eviction manager first reclaims node-level
// resources (the unused image goes), then, the threshold still met, evicts the pod using the
// most disk; DiskPressure is reported through the API and new pods are refused meanwhile; a
// pod using little disk keeps running.
func TestClusterPressureDisk(t *testing.T) {
	root := t.TempDir()
	threshold := diskAvailable(t, root) - 300<<20
	cn := startClusterNode(t, fmt.Sprintf("--eviction-hard=nodefs.available<%d", threshold),
		"--eviction-pressure-transition-period=15s", "--eviction-monitoring-period=2s", "--volume-stats-agg-period=2s",
		"--image-gc-high-threshold=100", "--minimum-image-ttl-duration=0s")
	cn.waitNodeReady(60 * time.Second)
	conditions := cn.watchConditions(t)
	cn.pullImage(testServer)
	small := cn.applyPod(t, "small", `  containers:
  - name: c
    image: docker.io/library/busybox:1.35
    command: [sleep, '3600']
`)
	p := cn.waitAPIPod("default", small, 60*time.Second, "Running", func(p *v1.Pod) bool { return p != nil && isRunningReady(p) })
	id := containerStatus(p, "c").ContainerID
	filler := cn.applyPod(t, "filler", `  containers:
  - name: fill
    image: docker.io/library/busybox:1.35
    command: [sh, -c, 'dd if=/dev/zero of=/data/fill bs=1M count=600 conv=fsync; sleep 3600']
    volumeMounts: [{name: data, mountPath: /data}]
  volumes:
  - name: data
    emptyDir: {}
`)
	p = cn.waitAPIPod("default", filler, 90*time.Second, "evicted", evicted)
	if !strings.HasPrefix(p.Status.Message, "The node was low on resource: ephemeral-storage. Threshold quantity: ") {
		t.Errorf("filler: message %q, want upstream's", p.Status.Message)
	}
	if c := condition(p, v1.DisruptionTarget); c == nil || c.Reason != "TerminationByKubelet" {
		t.Errorf("filler: DisruptionTarget %+v", c)
	}
	if cn.imagePresent(testServer) {
		t.Error("the unused image was not removed before the eviction")
	}
	reclaimed := cn.logs.matching(`"Removing image to free bytes"`, "the eviction manager reclaims disk space")
	evictedAt := cn.logs.matching(`"Evicting pod"`, filler)
	if len(reclaimed) == 0 || len(evictedAt) == 0 {
		t.Fatalf("log: image removals %q, evictions %q", reclaimed, evictedAt)
	}
	if first, ev := cn.logs.index(reclaimed[0]), cn.logs.index(evictedAt[0]); first > ev {
		t.Error("the pod was evicted before unused images were removed")
	}
	conditions.waitFor(t, v1.NodeDiskPressure, "True/KubeletHasDiskPressure", 10*time.Second)
	late := cn.applyPod(t, "late", `  containers:
  - name: c
    image: docker.io/library/busybox:1.35
    command: [sleep, '3600']
    resources:
      requests: {cpu: 10m, memory: 16Mi}
      limits: {cpu: 10m, memory: 16Mi}
`)
	p = cn.waitAPIPod("default", late, 20*time.Second, "refused", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodFailed })
	if p.Status.Reason != "Evicted" || p.Status.Message != "Pod was rejected: The node had condition: [DiskPressure]. " {
		t.Errorf("late: refused with %q %q", p.Status.Reason, p.Status.Message)
	}
	conditions.waitFor(t, v1.NodeDiskPressure, "False/KubeletHasNoDiskPressure", 45*time.Second)
	p = cn.waitAPIPod("default", small, 5*time.Second, "Running", func(p *v1.Pod) bool { return p != nil && isRunningReady(p) })
	if c := containerStatus(p, "c"); c.ContainerID != id || c.RestartCount != 0 {
		t.Errorf("the pod using little disk was disturbed: %+v", c)
	}
}

// index is the position of the line in the log, -1 when absent.
func (w *logWatcher) index(line string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, l := range w.lines {
		if l == line {
			return i
		}
	}
	return -1
}
