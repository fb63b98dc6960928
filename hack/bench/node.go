package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/cri"
	"github.com/nodelet/nodelet/internal/volumes"
)

// nodelet is one nodelet process run by the bench, with its own manifest directory, root
// directory, pod logs directory, node name and read-only port.
type nodelet struct {
	name      string
	base      string // a temporary directory holding everything below
	manifests string
	staging   string // manifests are written here first, then renamed into manifests
	rootDir   string
	logsDir   string
	logPath   string // nodelet's stderr
	port      int
	http      *http.Client

	cmd     *exec.Cmd
	exited  chan struct{} // closed once cmd.Wait has returned
	waitErr error
	killed  atomic.Bool     // kill was called: SIGKILL is the expected end
	uids    map[string]bool // UIDs of the pods /pods showed, for the cgroup clean-up
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startNodelet starts nodelet on a fresh set of directories. On error nothing is left running;
// the caller removes n.base with cleanup in every case once n is returned.
func startNodelet(tmp, bin, endpoint string) (*nodelet, error) {
	base, err := os.MkdirTemp(tmp, "node-")
	if err != nil {
		return nil, fmt.Errorf("create the node's directory: %w", err)
	}
	n := &nodelet{name: "bench-" + randomHex(4), base: base,
		manifests: filepath.Join(base, "manifests"), staging: filepath.Join(base, "staging"),
		rootDir: filepath.Join(base, "root"), logsDir: filepath.Join(base, "pods"),
		logPath: filepath.Join(base, "nodelet.log"), http: &http.Client{Timeout: 5 * time.Second},
		uids: map[string]bool{}}
	for _, d := range []string{n.manifests, n.staging, n.rootDir, n.logsDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return n, fmt.Errorf("create %s: %w", d, err)
		}
	}
	if n.port, err = freePort(); err != nil {
		return n, err
	}
	cfg := filepath.Join(base, "config.yaml")
	conf := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodLogsDir: " + n.logsDir + "\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		return n, fmt.Errorf("write the KubeletConfiguration: %w", err)
	}
	logFile, err := os.Create(n.logPath)
	if err != nil {
		return n, fmt.Errorf("create nodelet's log file: %w", err)
	}
	defer logFile.Close() // the child has its own descriptor
	n.cmd = exec.Command(bin, "--config", cfg, "--pod-manifest-path", n.manifests,
		"--root-dir", n.rootDir, "--container-runtime-endpoint", endpoint,
		"--hostname-override", n.name, "--read-only-port", fmt.Sprint(n.port),
		"--file-check-frequency", "20s")
	n.cmd.Stdout, n.cmd.Stderr = logFile, logFile
	// Should the bench die without cleaning up, nodelet does not outlive it.
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := n.cmd.Start(); err != nil {
		n.cmd = nil
		return n, fmt.Errorf("start nodelet: %w", err)
	}
	n.exited = make(chan struct{})
	go func() { n.waitErr = n.cmd.Wait(); close(n.exited) }()
	return n, nil
}

func (n *nodelet) pid() int { return n.cmd.Process.Pid }

func (n *nodelet) running() bool {
	if n.cmd == nil {
		return false
	}
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// pods reads /pods from the read-only API and remembers the UIDs it shows.
func (n *nodelet) pods(ctx context.Context) ([]v1.Pod, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/pods", n.port), nil)
	if err != nil {
		return nil, fmt.Errorf("build the /pods request: %w", err)
	}
	resp, err := n.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET /pods: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /pods: %s", resp.Status)
	}
	var list v1.PodList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, fmt.Errorf("decode /pods: %w", err)
	}
	for _, p := range list.Items {
		n.uids[string(p.UID)] = true
	}
	return list.Items, nil
}

// poll calls cond every period until it returns true or an error, nodelet exits, or ctx ends.
func (n *nodelet) poll(ctx context.Context, period time.Duration, what string, cond func() (bool, error)) error {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, context.Cause(ctx))
		case <-n.exited:
			return fmt.Errorf("waiting for %s: nodelet exited: %v", what, n.waitErr)
		case <-t.C:
		}
	}
}

// kill sends SIGKILL: the guard's way to stop nodelet at once when another one starts.
func (n *nodelet) kill() {
	n.killed.Store(true)
	_ = n.cmd.Process.Kill() // a finished process is not signalled (os.Process uses a pidfd)
}

// stop sends SIGTERM and waits up to timeout for nodelet to exit, then kills it. It returns an
// error when nodelet does not exit cleanly, unless kill was called.
func (n *nodelet) stop(timeout time.Duration) error {
	if !n.running() {
		return nil
	}
	if n.killed.Load() {
		<-n.exited
		return nil
	}
	if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("send SIGTERM to nodelet: %w", err)
	}
	select {
	case <-n.exited:
	case <-time.After(timeout):
		_ = n.cmd.Process.Kill()
		<-n.exited
		return fmt.Errorf("nodelet did not exit within %v of SIGTERM; killed it", timeout)
	}
	var ee *exec.ExitError
	if errors.As(n.waitErr, &ee) {
		return fmt.Errorf("nodelet exited after SIGTERM with %v", ee)
	}
	return n.waitErr
}

// logTail returns the last lines of nodelet's log, for error reports.
func (n *nodelet) logTail(lines int) string {
	b, err := os.ReadFile(n.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", n.logPath, err)
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// nodeSandboxes lists the runtime's sandboxes of the pods of node name: static pod names end
// in -<node name>. Other nodes' sandboxes and raw CRI ones are never returned.
func nodeSandboxes(ctx context.Context, c *cri.Client, name string) ([]*runtimeapi.PodSandbox, error) {
	all, err := c.ListPodSandbox(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("list pod sandboxes: %w", err)
	}
	var out []*runtimeapi.PodSandbox
	for _, s := range all {
		if strings.HasSuffix(s.Labels[container.PodNameLabel], "-"+name) {
			out = append(out, s)
		}
	}
	return out, nil
}

// mountsUnder lists the mount points at or under dir, innermost first (none when dir does not
// exist).
func mountsUnder(dir string) []string {
	m, _ := volumes.MountPointsUnder(dir)
	return m
}
