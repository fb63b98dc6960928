package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
