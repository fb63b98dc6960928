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
