package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/cri"
	"github.com/nodelet/nodelet/internal/testharness"
)

// benchImage is the image of every pod; the test environment serves it from its registry.
const benchImage = "busybox:1.35"

// testenvUp brings the test environment up (idempotent; about a second when it is up).
func testenvUp(ctx context.Context, root string) error {
	start := time.Now()
	if err := testharness.RunLogged(ctx, root, "bash", "hack/testenv.sh", "up"); err != nil {
		return fmt.Errorf("bring the test environment up: %w", err)
	}
	logf("test environment up in %v", time.Since(start).Round(time.Millisecond))
	return nil
}

// ensureRuntime brings the test environment up again should it have gone down since the bench
// started (an e2e run that finds it down takes it down when it ends), and checks the image.
func (b *bench) ensureRuntime(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err := b.cri.Status(sctx, false)
	cancel()
	if err == nil {
		return nil
	}
	logf("the runtime does not answer (%v); bringing the test environment up again", err)
	if err := testenvUp(ctx, b.root); err != nil {
		return err
	}
	// A new connection: the old one may be in gRPC's reconnection back-off for a while.
	c, err := cri.Dial(ctx, b.endpoint, 10*time.Second)
	if err != nil {
		return fmt.Errorf("reconnect to the test environment's runtime: %w", err)
	}
	_ = b.cri.Close()
	b.cri = c
	return ensureImage(ctx, b.cri)
}

// buildNodelet builds ./cmd/nodelet into dir and returns the binary's path.
func buildNodelet(ctx context.Context, root, dir string) (string, error) {
	start := time.Now()
	bin, err := testharness.BuildNodelet(ctx, root, dir)
	if err != nil {
		return "", err
	}
	logf("nodelet built in %v", time.Since(start).Round(time.Millisecond))
	return bin, nil
}

// ensureImage pulls the bench image unless the runtime has it, so that no run includes a pull.
func ensureImage(ctx context.Context, c *cri.Client) error {
	spec := &runtimeapi.ImageSpec{Image: benchImage, UserSpecifiedImage: benchImage}
	st, err := c.ImageStatus(ctx, spec, false)
	if err != nil {
		return fmt.Errorf("status of image %s: %w", benchImage, err)
	}
	if st.GetImage() != nil {
		return nil
	}
	if _, err := c.PullImage(ctx, spec, nil, nil); err != nil {
		return fmt.Errorf("pull image %s: %w", benchImage, err)
	}
	return nil
}

// machine describes where the bench ran.
type machine struct {
	cpus       int
	cpuModel   string
	memory     string
	kernel     string
	os         string
	runtime    string // "containerd v2.4.2 (CRI v1)"
	runc       string
	goVersion  string
	nodeletRev string
	kubelet    string // the upstream kubelet's version and path; empty when not measured
}

func describeMachine(root string, c *cri.Client) machine {
	m := machine{cpus: runtime.NumCPU(), goVersion: runtime.Version(), cpuModel: "unknown", memory: "unknown",
		kernel: "unknown", os: "unknown", runc: "unknown", nodeletRev: "unknown"}
	if out, err := exec.Command("nproc").Output(); err == nil {
		fmt.Sscan(string(out), &m.cpus)
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = strings.TrimSpace(string(b))
	}
	if v, ok := fieldOf("/etc/os-release", "PRETTY_NAME="); ok {
		m.os = strings.Trim(v, `"`)
	}
	if v, ok := fieldOf("/proc/cpuinfo", "model name"); ok {
		m.cpuModel = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
	}
	if v, ok := fieldOf("/proc/meminfo", "MemTotal:"); ok {
		var kib float64
		if _, err := fmt.Sscan(v, &kib); err == nil {
			m.memory = fmt.Sprintf("%.1f GiB", kib/(1<<20))
		}
	}
	v := c.Version()
	m.runtime = fmt.Sprintf("%s %s (CRI %s)", v.GetRuntimeName(), v.GetRuntimeVersion(), v.GetRuntimeApiVersion())
	if out, err := exec.Command("runc", "--version").Output(); err == nil {
		m.runc, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	}
	if out, err := exec.Command("git", "-C", root, "rev-parse", "--short=12", "HEAD").Output(); err == nil {
		m.nodeletRev = strings.TrimSpace(string(out))
		// --no-optional-locks: a read-only status, which never rewrites the index.
		st, err := exec.Command("git", "-C", root, "--no-optional-locks", "status", "--porcelain", "--untracked-files=no").Output()
		if err == nil && len(bytes.TrimSpace(st)) > 0 {
			m.nodeletRev += " with uncommitted changes"
		}
	}
	return m
}

// loadAverage is the 1-minute load average, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "unknown"
	}
	return f[0]
}

// fieldOf returns the rest of the first line of file that starts with prefix.
func fieldOf(file, prefix string) (string, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			return rest, true
		}
	}
	return "", false
}
