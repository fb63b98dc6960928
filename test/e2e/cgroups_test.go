package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/nodelet/nodelet/internal/cgroups"
	"github.com/nodelet/nodelet/internal/testharness"
	"github.com/nodelet/nodelet/internal/testharness/ci"
)

// TestFailCgroupV1RefusesToStart: on a cgroup v1 host, the nodelet binary with a config file
// that leaves failCgroupV1 at upstream's default (true) exits at once with an error naming the
// field, before it touches the runtime or the root directory; --fail-cgroupv1=false starts it.
func TestFailCgroupV1RefusesToStart(t *testing.T) {
	if unified, err := cgroups.Unified("/sys/fs/cgroup"); err != nil || unified {
		ci.Skip(t, "the refusal is shown on a cgroup v1 host; this one is v2 (%v)", err)
	}
	bin := buildNodelet(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodLogsDir: "+
		filepath.Join(dir, "pods")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "root")
	run := func(extra ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		args := append([]string{"--config", cfg, "--root-dir", root, "--read-only-port", "0", "--hostname-override", "v1-node",
			"--container-runtime-endpoint", "unix://" + filepath.Join(dir, "missing.sock")}, extra...)
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		if ctx.Err() != nil {
			return string(out), ctx.Err()
		}
		return string(out), err
	}

	out, err := run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("nodelet with failCgroupV1 (the default) on cgroup v1: %v, want a non-zero exit\n%s", err, out)
	}
	for _, want := range []string{"failCgroupV1", "--fail-cgroupv1=false", "cgroup v1 support is unsupported"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("the refused start created its root directory %s (%v)", root, err)
	}

	// With --fail-cgroupv1=false it runs (until the timeout: no runtime answers).
	out, err = run("--fail-cgroupv1=false")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("nodelet with --fail-cgroupv1=false exited: %v\n%s", err, out)
	}
	if strings.Contains(out, "cgroup v1 support is unsupported") {
		t.Errorf("--fail-cgroupv1=false still refused:\n%s", out)
	}
}

// TestCgroupRoot: with cgroupRoot set, a pod's cgroup is <hierarchy>/<cgroupRoot>/kubepods/
// besteffort/pod<uid> in every hierarchy, holding its processes, none is made under /kubepods,
// and the pod's cgroup goes with the pod.
func TestCgroupRoot(t *testing.T) {
	root := "/nodelet-e2e-" + testharness.RandomHex(4)
	var hierarchies []string // every cgroup v1 hierarchy, and the unified one
	ents, err := os.ReadDir("/sys/fs/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			hierarchies = append(hierarchies, filepath.Join("/sys/fs/cgroup", e.Name()))
		}
	}
	if len(hierarchies) == 0 {
		t.Fatal("no cgroup hierarchy under /sys/fs/cgroup")
	}
	t.Cleanup(func() {
		for _, h := range hierarchies {
			removeLeakedCgroups(t, []string{filepath.Join(h, root)})
		}
	})
	n := startNode(t, "--cgroup-root", root)
	n.write("rooted.yaml", chaosSleeper("rooted", ""))
	p := n.waitPod("rooted", 60*time.Second, "Running", isRunningReady)
	rel := filepath.Join("kubepods", "besteffort", "pod"+string(p.UID))
	mem := filepath.Join("/sys/fs/cgroup/memory", root, rel)
	var found []string
	for _, h := range hierarchies {
		if _, err := os.Stat(filepath.Join(h, root, rel)); err == nil {
			found = append(found, h)
		}
	}
	if len(found) < 2 {
		t.Errorf("the pod's cgroup is in the hierarchies %v only", found)
	}
	procs, err := os.ReadFile(filepath.Join(mem, "cgroup.procs"))
	if err != nil {
		t.Fatalf("the pod's memory cgroup under cgroupRoot: %v", err)
	}
	var pids []string
	_ = filepath.WalkDir(mem, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "cgroup.procs" {
			b, _ := os.ReadFile(path)
			pids = append(pids, strings.Fields(string(b))...)
		}
		return nil
	})
	if len(pids) < 2 {
		t.Errorf("the pod's cgroup %s holds %v (its own: %q), want the pause and the container's processes", mem, pids, procs)
	}
	if _, err := os.Stat(filepath.Join("/sys/fs/cgroup/memory", rel)); !os.IsNotExist(err) {
		t.Errorf("a cgroup for the pod under /kubepods too (%v)", err)
	}

	n.remove("rooted.yaml")
	deadline := time.Now().Add(60 * time.Second)
	for {
		var left []string
		for _, h := range hierarchies {
			if _, err := os.Stat(filepath.Join(h, root, rel)); err == nil {
				left = append(left, filepath.Join(h, root, rel))
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pod's cgroups are left once it is gone: %v", left)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestQoSCgroups: on the host's cgroups (cgroup v1, cgroupfs), the cgroup of all pods gets the
// node's allocatable (capacity less kubeReserved: cpu shares, memory limit), the BestEffort QoS
// cgroup 2 cpu shares, the Burstable one the cpu requests of its pods, and each pod's cgroup its
// own shares and (Guaranteed) limits, before the pods run.
func TestQoSCgroups(t *testing.T) {
	root := "/nodelet-e2e-qos-" + testharness.RandomHex(4)
	t.Cleanup(func() {
		ents, _ := os.ReadDir("/sys/fs/cgroup")
		for _, e := range ents {
			if e.IsDir() {
				removeLeakedCgroups(t, []string{filepath.Join("/sys/fs/cgroup", e.Name(), root)})
			}
		}
	})
	n := startNodeWithConfig(t, "kubeReserved: {cpu: 500m, memory: 1Gi}\n", "--cgroup-root", root)
	n.write("burst.yaml", `apiVersion: v1
kind: Pod
metadata: {name: burst}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: busybox:1.35
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
    resources: {requests: {cpu: 300m}}
  - name: side
    image: busybox:1.35
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
    resources: {requests: {cpu: 200m, memory: 16Mi}}
`)
	n.write("be.yaml", chaosSleeper("be", ""))
	n.write("guar.yaml", `apiVersion: v1
kind: Pod
metadata: {name: guar}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: busybox:1.35
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
    resources: {limits: {cpu: 250m, memory: 64Mi}}
`)
	burst := n.waitPod("burst", 60*time.Second, "Running", isRunningReady)
	n.waitPod("be", 60*time.Second, "Running", isRunningReady)
	guar := n.waitPod("guar", 60*time.Second, "Running", isRunningReady)

	read := func(hier, rel, file string) int64 {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", hier, root, rel, file))
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got := read("cpu", "kubepods/burstable", "cpu.shares"); got != 512 {
		t.Errorf("the Burstable QoS cgroup's cpu.shares = %d, want 512 (500m requested)", got)
	}
	if got := read("cpu", "kubepods/besteffort", "cpu.shares"); got != 2 {
		t.Errorf("the BestEffort QoS cgroup's cpu.shares = %d, want 2", got)
	}
	wantShares := (int64(runtime.NumCPU())*1000 - 500) * 1024 / 1000
	if got := read("cpu", "kubepods", "cpu.shares"); got != wantShares {
		t.Errorf("the pods' cgroup cpu.shares = %d, want %d (the cpus less 500m reserved)", got, wantShares)
	}
	memTotal := hostMemTotal(t)
	if got := read("memory", "kubepods", "memory.limit_in_bytes"); got != memTotal-1<<30 {
		t.Errorf("the pods' cgroup memory.limit_in_bytes = %d, want %d (MemTotal less 1Gi reserved)", got, memTotal-1<<30)
	}
	// The pods' own cgroups: a Guaranteed pod's limits, a Burstable pod's shares only.
	g := "kubepods/pod" + string(guar.UID)
	if got := read("cpu", g, "cpu.shares"); got != 256 {
		t.Errorf("the Guaranteed pod's cpu.shares = %d, want 256", got)
	}
	if got := read("cpu", g, "cpu.cfs_quota_us"); got != 25000 {
		t.Errorf("the Guaranteed pod's cpu.cfs_quota_us = %d, want 25000 (250m)", got)
	}
	if got := read("memory", g, "memory.limit_in_bytes"); got != 64<<20 {
		t.Errorf("the Guaranteed pod's memory.limit_in_bytes = %d, want %d", got, 64<<20)
	}
	b := "kubepods/burstable/pod" + string(burst.UID)
	if got := read("cpu", b, "cpu.shares"); got != 512 {
		t.Errorf("the Burstable pod's cpu.shares = %d, want 512", got)
	}
	if got := read("cpu", b, "cpu.cfs_quota_us"); got != -1 {
		t.Errorf("the Burstable pod without limits has cpu.cfs_quota_us = %d, want -1", got)
	}
	n.remove("guar.yaml")
	n.remove("burst.yaml")
	n.remove("be.yaml")
	n.waitPod("burst", 60*time.Second, "gone", func(p *v1.Pod) bool { return p == nil })
	n.waitPod("be", 60*time.Second, "gone", func(p *v1.Pod) bool { return p == nil })
	n.waitPod("guar", 60*time.Second, "gone", func(p *v1.Pod) bool { return p == nil })
}

// hostMemTotal is MemTotal of /proc/meminfo, in bytes.
func hostMemTotal(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb * 1024
		}
	}
	t.Fatal("no MemTotal in /proc/meminfo")
	return 0
}

// TestNodeAllocatableEnforcement: enforceNodeAllocatable [pods, system-reserved] sets
// systemReserved on the existing systemReservedCgroup (cpu shares, memory limit, pids) and the
// pods' cgroup to the capacity less it; a systemReservedCgroup that does not exist ends the
// start with upstream's message, the cgroup not created.
func TestNodeAllocatableEnforcement(t *testing.T) {
	if unified, err := cgroups.Unified("/sys/fs/cgroup"); err != nil || unified {
		ci.Skip(t, "this test reads cgroup v1 files; the host is v2 (%v): test/vm covers v2", err)
	}
	root := "/nodelet-e2e-alloc-" + testharness.RandomHex(4)
	system := "/nodelet-e2e-system-" + testharness.RandomHex(4)
	t.Cleanup(func() {
		ents, _ := os.ReadDir("/sys/fs/cgroup")
		for _, e := range ents {
			if e.IsDir() {
				h := filepath.Join("/sys/fs/cgroup", e.Name())
				removeLeakedCgroups(t, []string{filepath.Join(h, root), filepath.Join(h, root+"-bad"), filepath.Join(h, system)})
			}
		}
	})
	for _, h := range []string{"cpu", "memory", "pids"} { // the operator's cgroup, made beforehand
		if err := os.MkdirAll(filepath.Join("/sys/fs/cgroup", h, system), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	n := startNodeWithConfig(t, "systemReserved: {cpu: 100m, memory: 64Mi, pid: \"100\"}\nenforceNodeAllocatable: [pods, system-reserved]\n"+
		"systemReservedCgroup: "+system+"\n", "--cgroup-root", root)
	read := func(hier, cgroup, file string) string {
		b, _ := os.ReadFile(filepath.Join("/sys/fs/cgroup", hier, cgroup, file))
		return strings.TrimSpace(string(b))
	}
	memTotal := hostMemTotal(t)
	want := map[[3]string]string{
		{"cpu", system, "cpu.shares"}:                           "102",
		{"memory", system, "memory.limit_in_bytes"}:             strconv.FormatInt(64<<20, 10),
		{"pids", system, "pids.max"}:                            "100",
		{"memory", root + "/kubepods", "memory.limit_in_bytes"}: strconv.FormatInt(memTotal-64<<20, 10),
		{"cpu", root + "/kubepods", "cpu.shares"}:               strconv.FormatInt((int64(runtime.NumCPU())*1000-100)*1024/1000, 10),
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var wrong []string
		for k, v := range want {
			if got := read(k[0], k[1], k[2]); got != v {
				wrong = append(wrong, k[0]+":"+k[1]+"/"+k[2]+" = "+got+", want "+v)
			}
		}
		if len(wrong) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the start: %v", wrong)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !slices.ContainsFunc(n.logs.matching("Enforced a reservation on its cgroup"), func(l string) bool { return strings.Contains(l, system) }) {
		t.Errorf("no log line says the reservation was enforced on %s", system)
	}

	missing := "/nodelet-e2e-missing-" + testharness.RandomHex(4)
	bad := startNodeWithConfig(t, "systemReserved: {cpu: 100m}\nenforceNodeAllocatable: [pods, system-reserved]\nsystemReservedCgroup: "+missing+"\n",
		"--cgroup-root", root+"-bad")
	select {
	case <-bad.exited:
	case <-time.After(60 * time.Second):
		t.Fatal("nodelet with a missing systemReservedCgroup still runs after 60 s")
	}
	if lines := bad.logs.matching("Failed to enforce System Reserved Cgroup Limits on", missing); len(lines) == 0 {
		t.Errorf("the refusal does not name the missing cgroup; the log:\n%s", bad.logs.dump())
	}
	if _, err := os.Stat(filepath.Join("/sys/fs/cgroup/memory", missing)); err == nil {
		t.Errorf("the missing reserved cgroup %s was created", missing)
	}
}
