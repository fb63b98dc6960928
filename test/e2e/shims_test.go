package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/nodelet/nodelet/internal/testharness"
)

// fakeShimSource is a process that looks like a containerd shim of the test containerd, and
// starts one child, as a shim starts a sandbox's pause process.
const fakeShimSource = `package main

import (
	"os/exec"
	"time"
)

func main() {
	exec.Command("sleep", "3600").Start()
	time.Sleep(time.Hour)
}
`

// procStat is /proc/<pid>/stat after the command name: state, ppid...; nil when gone.
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// alive says the process exists and is not a zombie.
func alive(pid int) bool {
	f := procStat(pid)
	return len(f) > 0 && f[0] != "Z"
}

// childOf is a live child of pid, 0 when none.
func childOf(pid int) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := procStat(c); len(f) > 1 && f[1] == strconv.Itoa(pid) && f[0] != "Z" {
			return c
		}
	}
	return 0
}

// Issue 15 (container GC): a containerd shim whose id the runtime does not know (the leak a
// start cancelled half-way leaves) is found and stopped with the processes it started; the
// shims of running pods are left alone.
func TestOrphanedShimStopped(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(fakeShimSource), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "containerd-shim-runc-v2")
	if out, err := exec.Command("go", "build", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("build the fake shim: %v\n%s", err, out)
	}
	e := testenv(t)
	shim := exec.Command(bin, "-namespace", "k8s.io", "-id", "nodelet-e2e-orphan-"+testharness.RandomHex(4), "-address", strings.TrimPrefix(e.endpoint, "unix://"))
	shim.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := shim.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = shim.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = shim.Process.Kill()
		<-exited
	})
	var child int
	for deadline := time.Now().Add(10 * time.Second); child == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		child = childOf(shim.Process.Pid)
	}
	if child == 0 {
		t.Fatal("the fake shim did not start its child")
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })

	n := startNode(t, "--container-gc-period=1s")
	n.write("app.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: app}\nspec: {containers: [{name: c, image: busybox:1.35, command: [sleep, '3600']}]}\n")
	p := n.waitPod("app", 60*time.Second, "Running", func(p *v1.Pod) bool { return p != nil && isRunningReady(p) })
	id := containerStatus(p, "c").ContainerID

	// Orphaned: unknown at two searches and running for 5 GC periods.
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the orphaned shim still runs after 30 s")
	}
	n.logs.waitCount(t, 5*time.Second, 1, "Stopping an orphaned containerd shim", "nodelet-e2e-orphan-")
	for deadline := time.Now().Add(5 * time.Second); alive(child) && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
	}
	if alive(child) {
		t.Errorf("the process the orphaned shim started (%d) still runs", child)
	}
	time.Sleep(3 * time.Second) // more GC periods: the pod's own shim must stay
	p = n.waitPod("app", 5*time.Second, "Running", func(p *v1.Pod) bool { return p != nil && isRunningReady(p) })
	if c := containerStatus(p, "c"); c.ContainerID != id || c.RestartCount != 0 {
		t.Errorf("the running pod was disturbed: %+v", c)
	}
}
