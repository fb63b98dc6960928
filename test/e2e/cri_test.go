package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/cri"
	"github.com/nodelet/nodelet/internal/testharness"
)

const (
	busyboxImage = "docker.io/library/busybox:1.35"
	podSubnet    = "10.88.0.0/16"
	helloLine    = "hello-from-nodelet"
)

// TestCRIPodLifecycle drives containerd through the project's CRI client the
// way the kubelet does: pull, run a sandbox with pod networking, create and
// start a container that logs to a CRI log file, wait for it to exit, read
// its log, then stop and remove everything.
func TestCRIPodLifecycle(t *testing.T) {
	e := testenv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	c, err := cri.Dial(ctx, e.endpoint, 10*time.Second)
	if err != nil {
		t.Fatalf("dialing the test runtime: %v", err)
	}
	// A cleanup, not a defer: it must run after the sandbox cleanup below.
	t.Cleanup(func() { _ = c.Close() })
	t.Logf("runtime %s %s (CRI %s)", c.Version().GetRuntimeName(), c.Version().GetRuntimeVersion(), c.Version().GetRuntimeApiVersion())

	start := time.Now()
	pulled, err := c.Image.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: busyboxImage}})
	if err != nil {
		t.Fatalf("PullImage(%s): %v", busyboxImage, err)
	}
	t.Logf("pulled %s as %s in %v", busyboxImage, pulled.GetImageRef(), time.Since(start).Round(time.Millisecond))

	suffix := testharness.RandomHex(4)
	uid := randomUID(t)
	logDir := t.TempDir()
	sbConfig := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name:      "e2e-cri-" + suffix,
			Uid:       uid,
			Namespace: "nodelet-e2e",
		},
		Hostname:     "e2e-cri-" + suffix,
		LogDirectory: logDir,
		Labels: map[string]string{
			"io.kubernetes.pod.name":      "e2e-cri-" + suffix,
			"io.kubernetes.pod.namespace": "nodelet-e2e",
			"io.kubernetes.pod.uid":       uid,
		},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{
					Network: runtimeapi.NamespaceMode_POD,
					Pid:     runtimeapi.NamespaceMode_CONTAINER,
					Ipc:     runtimeapi.NamespaceMode_POD,
				},
			},
		},
	}
	start = time.Now()
	run, err := c.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sbConfig})
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	sandboxID := run.GetPodSandboxId()
	t.Logf("sandbox %s running in %v", sandboxID, time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() { removeSandbox(t, c, sandboxID) })

	sbStatus, err := c.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sandboxID})
	if err != nil {
		t.Fatalf("PodSandboxStatus: %v", err)
	}
	if st := sbStatus.GetStatus().GetState(); st != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Fatalf("sandbox state %v, want SANDBOX_READY", st)
	}
	podIP := sbStatus.GetStatus().GetNetwork().GetIp()
	ip, err := netip.ParseAddr(podIP)
	if err != nil || !netip.MustParsePrefix(podSubnet).Contains(ip) {
		t.Fatalf("sandbox IP %q (%v) is not in the bridge CNI subnet %s", podIP, err, podSubnet)
	}
	t.Logf("sandbox IP %s", ip)

	const ctrName = "hello"
	logPath := filepath.Join(ctrName, "0.log")
	// The kubelet creates the container's log directory before CreateContainer.
	if err := os.MkdirAll(filepath.Join(logDir, ctrName), 0o755); err != nil {
		t.Fatalf("creating container log directory: %v", err)
	}
	ctrConfig := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: ctrName},
		Image:    &runtimeapi.ImageSpec{Image: pulled.GetImageRef(), UserSpecifiedImage: busyboxImage},
		Command:  []string{"sh", "-c", "echo " + helloLine + "; ip addr"},
		LogPath:  logPath,
		Labels: map[string]string{
			"io.kubernetes.container.name": ctrName,
			"io.kubernetes.pod.name":       sbConfig.GetMetadata().GetName(),
			"io.kubernetes.pod.namespace":  sbConfig.GetMetadata().GetNamespace(),
			"io.kubernetes.pod.uid":        uid,
		},
		Linux: &runtimeapi.LinuxContainerConfig{},
	}
	created, err := c.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId:  sandboxID,
		Config:        ctrConfig,
		SandboxConfig: sbConfig,
	})
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	ctrID := created.GetContainerId()
	if _, err := c.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: ctrID}); err != nil {
		t.Fatalf("StartContainer(%s): %v", ctrID, err)
	}

	exited := waitExited(ctx, t, c, ctrID, 30*time.Second)
	if exited.GetExitCode() != 0 {
		t.Errorf("container exit code %d (reason %q, message %q), want 0",
			exited.GetExitCode(), exited.GetReason(), exited.GetMessage())
	}
	if got := exited.GetLogPath(); got != filepath.Join(logDir, logPath) {
		t.Errorf("ContainerStatus log path %q, want %q", got, filepath.Join(logDir, logPath))
	}

	t.Logf("container %s exited with code %d", ctrID, exited.GetExitCode())
	stdout := readCRILog(t, filepath.Join(logDir, logPath))
	if len(stdout) == 0 || stdout[0] != helloLine {
		t.Errorf("first stdout line of the container log = %q, want %q (all: %q)", first(stdout), helloLine, stdout)
	}
	if !strings.Contains(strings.Join(stdout, "\n"), "inet "+podIP+"/") {
		t.Errorf("`ip addr` in the container does not show the pod IP %s: %q", podIP, stdout)
	}

	if _, err := c.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: ctrID, Timeout: 10}); err != nil {
		t.Fatalf("StopContainer(%s): %v", ctrID, err)
	}
	if _, err := c.Runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: ctrID}); err != nil {
		t.Fatalf("RemoveContainer(%s): %v", ctrID, err)
	}
	ctrs, err := c.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{
		Filter: &runtimeapi.ContainerFilter{PodSandboxId: sandboxID},
	})
	if err != nil {
		t.Fatalf("ListContainers: %v", err)
	}
	if n := len(ctrs.GetContainers()); n != 0 {
		t.Errorf("%d containers remain in sandbox %s after RemoveContainer", n, sandboxID)
	}

	removeSandbox(t, c, sandboxID)
	t.Logf("container and sandbox removed")
	for _, filter := range []*runtimeapi.PodSandboxFilter{
		{Id: sandboxID},
		{LabelSelector: map[string]string{"io.kubernetes.pod.uid": uid}},
	} {
		sbs, err := c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: filter})
		if err != nil {
			t.Fatalf("ListPodSandbox(%v): %v", filter, err)
		}
		if n := len(sbs.GetItems()); n != 0 {
			t.Errorf("ListPodSandbox(%v) still lists %d sandboxes after removal", filter, n)
		}
	}
}

// waitExited polls ContainerStatus until the container has exited.
func waitExited(ctx context.Context, t *testing.T, c *cri.Client, id string, timeout time.Duration) *runtimeapi.ContainerStatus {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := c.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
		if err != nil {
			t.Fatalf("ContainerStatus(%s): %v", id, err)
		}
		st := resp.GetStatus()
		if st.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("container %s still %v after %v", id, st.GetState(), timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// removeSandbox stops and removes a sandbox. A sandbox that is already gone
// (NotFound) is fine: the test's cleanup runs this again after the test did.
func removeSandbox(t *testing.T, c *cri.Client, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := testharness.RemoveSandbox(ctx, c, id); err != nil {
		t.Error(err)
	}
}

// readCRILog returns the stdout messages of a CRI log file, whose lines are
// "<RFC3339Nano time> <stdout|stderr> <P|F> <message>". Partial (P) lines are
// joined with what follows them.
func readCRILog(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("opening container log: %v", err)
	}
	defer func() { _ = f.Close() }()
	var lines []string
	var partial strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), " ", 4)
		if len(fields) < 3 {
			t.Fatalf("malformed CRI log line %q in %s", sc.Text(), path)
		}
		if _, err := time.Parse(time.RFC3339Nano, fields[0]); err != nil {
			t.Fatalf("CRI log line %q: bad timestamp: %v", sc.Text(), err)
		}
		if fields[1] != "stdout" {
			continue
		}
		if len(fields) == 4 {
			partial.WriteString(fields[3])
		}
		if fields[2] == "F" {
			lines = append(lines, partial.String())
			partial.Reset()
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading container log %s: %v", path, err)
	}
	return lines
}

// randomUID returns a random UUID-formatted string, like a pod's metadata.uid.
func randomUID(t *testing.T) string {
	h := testharness.RandomHex(16)
	return fmt.Sprintf("%s-%s-%s-%s-%s", h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])
}

func first(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[0]
}
