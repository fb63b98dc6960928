package kuberuntime

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/nodelet/nodelet/internal/cgroups"
)

// dirMaker makes directories under root (stand-ins for cgroups) and returns their paths.
func dirMaker(t *testing.T, root string) func(string) string {
	return func(p string) string {
		t.Helper()
		dir := filepath.Join(root, p)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
}

func TestRemovePodCgroups(t *testing.T) {
	root := t.TempDir()
	mk := dirMaker(t, root)
	gone := []string{mk("memory/kubepods/besteffort/podu1"), mk("cpu,cpuacct/kubepods/besteffort/podu1"), mk("kubepods/besteffort/podu1"),
		// an empty child (a container whose creation was cut short) goes first
		mk("blkio/kubepods/besteffort/podu1/cut-short")}
	other := mk("memory/kubepods/burstable/podu2")
	busy := mk("pids/kubepods/podu1/still-a-container")
	// A plain directory with a file stands for a cgroup with processes: rmdir fails.
	if err := os.WriteFile(filepath.Join(busy, "cgroup.procs"), []byte("42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &Manager{cfg: Config{CgroupFSRoot: root, CgroupRoot: "/kubepods"}}
	err := m.removePodCgroups("u1")
	if err == nil {
		t.Fatal("a pod cgroup with a container left inside must be an error (retried later)")
	}
	for _, d := range gone {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still there", d)
		}
	}
	for _, d := range []string{other, busy} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	if err := os.Remove(filepath.Join(busy, "cgroup.procs")); err != nil {
		t.Fatal(err)
	}
	if err := m.removePodCgroups("u1"); err != nil {
		t.Fatalf("second try: %v", err)
	}
	if err := (&Manager{}).removePodCgroups("u1"); err != nil {
		t.Fatalf("no cgroup root configured: %v", err)
	}
}

// TestPodCgroupsWithSystemd: with the systemd driver the pod's cgroups are found under their
// slice names, listed by them, and removed through systemd (Destroy, which stops the slice
// unit) before what is left of the directories.
func TestPodCgroupsWithSystemd(t *testing.T) {
	root := t.TempDir()
	mk := dirMaker(t, root)
	pod := mk("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-poda_b.slice")
	other := mk("kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podc_d.slice")
	mk("kubepods.slice/kubepods-burstable.slice/not-a-pod.scope")
	h := newHarness(t)
	log := &podCgroupLog{rt: h.rt}
	m := h.m
	m.cfg.CgroupFSRoot, m.cfg.CgroupRoot = root, "/kubepods"
	m.deps.PodCgroups, m.deps.CgroupNames = log, cgroups.NewLayout("/kubepods", cgroups.DriverSystemd)
	uids, err := m.podCgroupUIDs()
	if err != nil || !uids.Equal(sets.New[types.UID]("a-b", "c-d")) {
		t.Fatalf("podCgroupUIDs = %v, %v; want a-b and c-d", sets.List(uids), err)
	}
	if err := m.removePodCgroups("a-b"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"destroy /kubepods/burstable/poda-b"}; !slices.Equal(log.sets, want) {
		t.Errorf("through systemd: %q, want %q", log.sets, want)
	}
	if _, err := os.Stat(pod); !os.IsNotExist(err) {
		t.Errorf("%s still there", pod)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another pod's cgroup was removed: %v", err)
	}
	p := newPod()
	cfg, err := m.sandboxConfig(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.GetLinux().GetCgroupParent(), "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"+strings.ReplaceAll(string(p.UID), "-", "_")+".slice"; got != want {
		t.Errorf("CRI cgroup_parent %q, want %q", got, want)
	}
}

func TestRemovePodLogDirs(t *testing.T) {
	logs := t.TempDir()
	mine := filepath.Join(logs, "default_web_u1")
	other := filepath.Join(logs, "default_web_u12") // another UID that starts like u1
	for _, d := range []string{filepath.Join(mine, "app"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(mine, "app", "0.log"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &Manager{cfg: Config{PodLogsDir: logs}}
	if err := m.removePodLogDirs("u1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mine); !os.IsNotExist(err) {
		t.Errorf("the pod's log directory is still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another pod's log directory was removed: %v", err)
	}
	for _, bad := range []string{"", "*", "../x"} {
		if err := m.removePodLogDirs(types.UID(bad)); err != nil {
			t.Errorf("UID %q: %v", bad, err)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a pattern UID removed another pod's log directory: %v", err)
	}
}

func TestHousekeepRemovesOrphanedPodCgroups(t *testing.T) {
	h := newHarness(t)
	root := h.withCgroupFS(t)
	inRuntime := newPod() // not desired, but its containers are still there: RemovePod's job
	h.mustSync(inRuntime)
	mk := dirMaker(t, root)
	kept := []string{mk("memory/kubepods/besteffort/pod" + string(inRuntime.UID)), mk("memory/kubepods/burstable/poddesired"),
		mk("pids/kubepods/podbusy/a-container"), mk("memory/kubepods/besteffort/not-a-pod")}
	gone := []string{mk("memory/kubepods/podgone"), mk("cpu/kubepods/besteffort/podgone"), mk("kubepods/burstable/podgone")}
	desired := []*v1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: "desired"}}}
	// A plain directory with a file stands for a cgroup with processes: rmdir fails. The process
	// listed, lost by the runtime, is killed.
	lost := startLostProcess(t)
	busyProcs := filepath.Join(root, "pids/kubepods/podbusy/a-container/cgroup.procs")
	if err := os.WriteFile(busyProcs, []byte(fmt.Sprintf("%d\n", lost.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}

	h.m.Housekeep(h.ctx, func() []*v1.Pod { return desired })
	for _, d := range gone {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("orphaned pod cgroup %s still there", d)
		}
	}
	for _, d := range kept {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	if n := h.rt.CallCount("ListPodSandbox"); n == 0 {
		t.Error("the runtime was not consulted")
	}
	requireSIGKILL(t, lost)

	// Without orphans the runtime is not listed at all.
	for _, d := range []string{"pids/kubepods/podbusy/a-container/cgroup.procs", "pids/kubepods/podbusy/a-container", "pids/kubepods/podbusy"} {
		if err := os.Remove(filepath.Join(root, d)); err != nil {
			t.Fatal(err)
		}
	}
	before := h.rt.CallCount("ListPodSandbox")
	h.m.Housekeep(h.ctx, func() []*v1.Pod { return append(desired, inRuntime) })
	if n := h.rt.CallCount("ListPodSandbox"); n != before {
		t.Errorf("listed the runtime %d times with no orphaned cgroup", n-before)
	}

	// A pod that became desired while the runtime was listed (its worker made its cgroup; its
	// sandbox is not in the runtime yet) keeps its cgroup.
	late := mk("memory/kubepods/besteffort/podlate")
	reads := 0
	h.m.Housekeep(h.ctx, func() []*v1.Pod {
		if reads++; reads == 1 {
			return desired
		}
		return append(desired, &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "late"}})
	})
	if _, err := os.Stat(late); err != nil {
		t.Errorf("the cgroup of a pod desired since the listing was removed: %v", err)
	}
	if reads != 2 {
		t.Errorf("desired read %d times, want after each listing (2)", reads)
	}
}

// A process left in the cgroup of a pod the runtime says is stopped (containerd 2.4 loses a
// container's task when a StartContainer is cancelled while it creates the task) is killed when
// the pod is removed, as upstream's pod container manager kills what is left in a pod cgroup
// before destroying it; the agent's own PID is never signalled.
func TestRemovePodByUIDKillsProcessesLeftInThePodCgroup(t *testing.T) {
	h := newHarness(t)
	root := h.withCgroupFS(t)
	pod := newPod()
	h.mustSync(pod)
	if err := h.m.KillPod(h.ctx, pod, h.status(pod), nil); err != nil {
		t.Fatal(err)
	}
	lost := startLostProcess(t)
	procs := map[string]string{
		"memory/kubepods/besteffort/pod" + string(pod.UID) + "/lost-container": fmt.Sprintf("%d\n", lost.Process.Pid),
		"cpu/kubepods/besteffort/pod" + string(pod.UID):                        fmt.Sprintf("%d\n%d\n", os.Getpid(), lost.Process.Pid),
	}
	for dir, content := range procs {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, dir, "cgroup.procs"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_ = h.m.RemovePodByUID(h.ctx, pod.UID) // the fake cgroup directories hold files: not removable
	requireSIGKILL(t, lost)
	if ids := h.rt.SandboxIDs(); len(ids) != 0 {
		t.Errorf("sandboxes left: %v", ids)
	}
}

// withCgroupFS gives the harness's manager a cgroup file system root of its own and returns it.
func (h *harness) withCgroupFS(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	h.cfg.CgroupFSRoot = root
	m, err := New(h.cfg, h.m.deps)
	if err != nil {
		t.Fatal(err)
	}
	h.m = m
	return root
}

// startLostProcess starts a process standing for one the runtime lost; the test ends it.
func startLostProcess(t *testing.T) *exec.Cmd {
	t.Helper()
	lost := exec.Command("sleep", "600")
	if err := lost.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lost.Process.Kill() })
	return lost
}

// requireSIGKILL waits for the process and fails unless SIGKILL ended it.
func requireSIGKILL(t *testing.T, p *exec.Cmd) {
	t.Helper()
	err := p.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("the process left in the pod cgroup ended with %v, want SIGKILL", err)
	}
}
