package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/cri"
	"github.com/nodelet/nodelet/internal/testharness"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// nodeletBin builds the binary once per test run.
func nodeletBin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "nodelet-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath, binErr = buildNodeletIn(dir)
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// buildNodeletIn builds the repository's ./cmd/nodelet into dir.
func buildNodeletIn(dir string) (string, error) {
	root, err := testharness.RepoRoot()
	if err != nil {
		return "", err
	}
	return testharness.BuildNodelet(context.Background(), root, dir)
}

// node is one nodelet process run by a test, with its own manifest directory, state, logs,
// node name and read-only port, on the shared test environment's containerd.
type node struct {
	t         *testing.T
	env       env
	name      string
	manifests string
	rootDir   string
	logsDir   string
	port      int
	extra     []string
	// config is added to the KubeletConfiguration file of the next start (YAML lines).
	config string
	cmd    *exec.Cmd
	logs   *logWatcher
	exited chan error
}

func freePort(t *testing.T) int {
	t.Helper()
	port, err := testharness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// startNode starts nodelet; the test's cleanup stops it and removes the pods it ran.
func startNode(t *testing.T, extraArgs ...string) *node {
	t.Helper()
	return startNamedNode(t, "e2e-"+strings.ToLower(testharness.RandomHex(4)), extraArgs...)
}

// startNamedNode is startNode with the node name given.
func startNamedNode(t *testing.T, name string, extraArgs ...string) *node {
	t.Helper()
	return startNodeOn(t, testenv(t), name, extraArgs...)
}

// startNodeWithConfig is startNode with lines (YAML) added to its KubeletConfiguration file.
func startNodeWithConfig(t *testing.T, config string, extraArgs ...string) *node {
	t.Helper()
	return startNodeOnWith(t, testenv(t), "e2e-"+strings.ToLower(testharness.RandomHex(4)), config, extraArgs...)
}

// startNodeOn is startNamedNode on the runtime e describes (e.g. containerd16's).
func startNodeOn(t *testing.T, e env, name string, extraArgs ...string) *node {
	t.Helper()
	return startNodeOnWith(t, e, name, "", extraArgs...)
}

// startNodeOnWith is startNodeOn with lines added to the KubeletConfiguration file.
func startNodeOnWith(t *testing.T, e env, name, config string, extraArgs ...string) *node {
	t.Helper()
	base := t.TempDir()
	n := &node{t: t, env: e, name: name,
		manifests: filepath.Join(base, "manifests"), rootDir: filepath.Join(base, "root"),
		logsDir: filepath.Join(base, "pods"), port: freePort(t), extra: extraArgs, config: config}
	if err := os.MkdirAll(n.manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	n.start()
	t.Cleanup(n.cleanup)
	return n
}

// kubeletConfig is the KubeletConfiguration every test's nodelet starts from: its pod logs
// directory, and failCgroupV1 false, since the test machines (and CI's) run cgroup v1.
func kubeletConfig(podLogsDir string) string {
	return "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfailCgroupV1: false\npodLogsDir: " + podLogsDir + "\n"
}

func (n *node) start() {
	n.t.Helper()
	args := append([]string{"--pod-manifest-path", n.manifests, "--root-dir", n.rootDir,
		"--container-runtime-endpoint", n.env.endpoint, "--hostname-override", n.name,
		"--read-only-port", fmt.Sprint(n.port), "--file-check-frequency", "2s", "-v", "3"}, n.extra...)
	cfg := filepath.Join(n.rootDir, "..", "config.yaml")
	if err := os.WriteFile(cfg, []byte(kubeletConfig(n.logsDir)+n.config), 0o644); err != nil {
		n.t.Fatal(err)
	}
	args = append([]string{"--config", cfg}, args...)
	n.cmd = exec.Command(nodeletBin(n.t), args...)
	out, err := n.cmd.StderrPipe()
	if err != nil {
		n.t.Fatal(err)
	}
	n.logs = watchLogs(out)
	if err := n.cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
	n.exited = make(chan error, 1)
	go func(c *exec.Cmd, ch chan error) { ch <- c.Wait() }(n.cmd, n.exited)
}

// kill9 kills nodelet with SIGKILL and waits for it to be gone.
func (n *node) kill9() {
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.exited
}

func (n *node) stop() {
	if n.cmd.ProcessState != nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(15 * time.Second):
		// SIGQUIT first: Go prints every goroutine's stack, which the log below then shows.
		_ = n.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-n.exited:
		case <-time.After(5 * time.Second):
			_ = n.cmd.Process.Kill()
		}
		n.t.Errorf("nodelet did not stop within 15 s of SIGTERM (its goroutines, from SIGQUIT, end the log)")
	}
}

// cleanup removes every manifest and lets nodelet tear its pods down, checking that it leaves
// no sandbox and no mount behind; then it stops nodelet and, should anything remain, removes it.
func (n *node) cleanup() {
	if n.cmd.ProcessState == nil {
		var uids []string
		if pods, err := n.pods(); err == nil {
			for _, p := range pods {
				uids = append(uids, string(p.UID))
			}
		}
		cgroupsLeft := func() []string {
			var out []string
			for _, uid := range uids {
				out = append(out, testharness.PodCgroups(uid)...)
			}
			return out
		}
		defer func() {
			if left := cgroupsLeft(); len(left) > 0 {
				n.t.Errorf("cleanup: pod cgroups left behind: %v", left)
			}
		}()
		ents, _ := os.ReadDir(n.manifests)
		for _, e := range ents {
			_ = os.Remove(filepath.Join(n.manifests, e.Name()))
		}
		deadline := time.Now().Add(45 * time.Second)
		for time.Now().Before(deadline) {
			pods, err := n.pods()
			// The container GC may remove a sandbox before housekeeping removed the pod's cgroups,
			// which the next housekeeping does: wait for those too.
			if err == nil && len(pods) == 0 && len(n.nodeSandboxes()) == 0 && len(testharness.MountsUnder(n.rootDir)) == 0 && len(cgroupsLeft()) == 0 {
				break
			}
			time.Sleep(300 * time.Millisecond)
		}
		if sb := n.nodeSandboxes(); len(sb) > 0 {
			n.t.Errorf("cleanup: nodelet left %d sandboxes after every manifest was removed", len(sb))
		}
		if m := testharness.MountsUnder(n.rootDir); len(m) > 0 {
			n.t.Errorf("cleanup: nodelet left mounts after every manifest was removed: %v", m)
		}
	}
	n.stop()
	for _, m := range testharness.MountsUnder(n.rootDir) {
		_ = syscall.Unmount(m, syscall.MNT_DETACH)
	}
	if n.t.Failed() {
		n.t.Logf("nodelet log:\n%s", n.logs.dump())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := cri.Dial(ctx, n.env.endpoint, 10*time.Second)
	if err != nil {
		n.t.Errorf("cleanup: %v", err)
		return
	}
	defer c.Close()
	for _, s := range n.nodeSandboxes() {
		if err := testharness.RemoveSandbox(ctx, c, s.Id); err != nil {
			n.t.Errorf("cleanup: %v", err)
		}
	}
}

// write puts a manifest in place atomically (as editors and config management do).
func (n *node) write(file, manifest string) {
	n.t.Helper()
	tmp := filepath.Join(n.manifests, "."+file+".tmp")
	if err := os.WriteFile(tmp, []byte(manifest), 0o644); err != nil {
		n.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(n.manifests, file)); err != nil {
		n.t.Fatal(err)
	}
}

func (n *node) remove(file string) {
	n.t.Helper()
	if err := os.Remove(filepath.Join(n.manifests, file)); err != nil {
		n.t.Fatal(err)
	}
}

// podName is the static pod's name on this node.
func (n *node) podName(name string) string { return name + "-" + n.name }

// pods reads /pods from the read-only API.
func (n *node) pods() ([]v1.Pod, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/pods", n.port))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var list v1.PodList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// pod returns the named static pod, or nil.
func (n *node) pod(name string) *v1.Pod {
	pods, err := n.pods()
	if err != nil {
		return nil
	}
	for i := range pods {
		if pods[i].Name == n.podName(name) {
			return &pods[i]
		}
	}
	return nil
}

// waitPod polls /pods until cond holds for the named pod (nil when it is absent); it fails
// the test with the last status seen after timeout.
func (n *node) waitPod(name string, timeout time.Duration, what string, cond func(*v1.Pod) bool) *v1.Pod {
	n.t.Helper()
	deadline := time.Now().Add(timeout)
	var last *v1.Pod
	for time.Now().Before(deadline) {
		last = n.pod(name)
		if cond(last) {
			return last
		}
		time.Sleep(200 * time.Millisecond)
	}
	js, _ := json.MarshalIndent(last, "", "  ")
	n.t.Fatalf("pod %s: waited %v for %s; last seen:\n%s", name, timeout, what, js)
	return nil
}

func isRunningReady(p *v1.Pod) bool {
	if p == nil || p.Status.Phase != v1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func containerStatus(p *v1.Pod, name string) *v1.ContainerStatus {
	if p == nil {
		return nil
	}
	for _, list := range [][]v1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// criClient dials the test environment's containerd.
func (n *node) criClient() *cri.Client {
	n.t.Helper()
	c, err := cri.Dial(context.Background(), n.env.endpoint, 10*time.Second)
	if err != nil {
		n.t.Fatal(err)
	}
	n.t.Cleanup(func() { c.Close() })
	return c
}

// sandboxesOf lists the runtime's sandboxes of one of this node's pods.
func (n *node) sandboxesOf(name string) []*runtimeapi.PodSandbox {
	n.t.Helper()
	c := n.criClient()
	list, err := c.ListPodSandbox(context.Background(), &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{container.PodNameLabel: n.podName(name)}})
	if err != nil {
		n.t.Fatal(err)
	}
	return list
}

// readContainerLog reads a container's current CRI log file and returns its content lines.
func readContainerLog(t *testing.T, n *node, p *v1.Pod, container string) string {
	t.Helper()
	cs := containerStatus(p, container)
	path := filepath.Join(n.logsDir, p.Namespace+"_"+p.Name+"_"+string(p.UID), container, fmt.Sprintf("%d.log", cs.RestartCount))
	var out strings.Builder
	for _, line := range readCRILog(t, path) {
		out.WriteString(line + "\n")
	}
	return out.String()
}

// nodeSandboxes lists the runtime's sandboxes of this node's pods.
func (n *node) nodeSandboxes() []*runtimeapi.PodSandbox {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := cri.Dial(ctx, n.env.endpoint, 10*time.Second)
	if err != nil {
		n.t.Errorf("dial the runtime: %v", err)
		return nil
	}
	defer c.Close()
	sbs, err := testharness.NodeSandboxes(ctx, c, n.name)
	if err != nil {
		n.t.Error(err)
	}
	return sbs
}
