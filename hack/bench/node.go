package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/nodelet/nodelet/internal/testharness"
)

// agentKind names a node agent the bench measures.
type agentKind string

const (
	kindNodelet agentKind = "nodelet"
	kindKubelet agentKind = "kubelet" // the upstream kubelet, standalone
)

// agent is one node agent process run by the bench — nodelet or the upstream kubelet — with
// its own manifest directory, root directory, pod logs directory, node name and read-only port.
type agent struct {
	kind      agentKind
	name      string
	base      string // a temporary directory holding everything below
	manifests string
	staging   string // manifests are written here first, then renamed into manifests
	rootDir   string
	logsDir   string
	logPath   string // the agent's stderr
	port      int
	http      *http.Client
	// keepsStoppedSandboxes: the agent removes the sandboxes of deleted pods only later (the
	// kubelet's container GC, once a minute), so a teardown ends when they are stopped.
	keepsStoppedSandboxes bool
	host                  *hostChanges // what the agent changes outside base, undone by cleanup
	startupCPU            float64      // CPU s from exec until it was quiet (startMeasured)

	bin     string // the binary and arguments of launch, for restart
	args    []string
	mu      sync.Mutex // guards cmd, exited and waitErr against the guard's kill during a restart
	cmd     *exec.Cmd
	exited  chan struct{} // closed once cmd.Wait has returned
	waitErr error
	killed  atomic.Bool     // kill was called: SIGKILL is the expected end
	uids    map[string]bool // UIDs of the pods /pods showed, for the cgroup clean-up
}

// newAgent makes a fresh set of directories and a free read-only port for an agent of kind.
// The caller removes a.base with cleanup in every case once a is returned.
func newAgent(tmp string, kind agentKind) (*agent, error) {
	base, err := os.MkdirTemp(tmp, "node-")
	if err != nil {
		return nil, fmt.Errorf("create the node's directory: %w", err)
	}
	a := &agent{kind: kind, name: "bench-" + testharness.RandomHex(4), base: base,
		manifests: filepath.Join(base, "manifests"), staging: filepath.Join(base, "staging"),
		rootDir: filepath.Join(base, "root"), logsDir: filepath.Join(base, "pods"),
		logPath: filepath.Join(base, string(kind)+".log"), http: &http.Client{Timeout: 5 * time.Second},
		uids: map[string]bool{}}
	for _, d := range []string{a.manifests, a.staging, a.rootDir, a.logsDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return a, fmt.Errorf("create %s: %w", d, err)
		}
	}
	if a.port, err = testharness.FreePort(); err != nil {
		return a, err
	}
	return a, nil
}

// startNodelet starts nodelet on a fresh set of directories. On error nothing is left running;
// the caller removes n.base with cleanup in every case once n is returned.
func startNodelet(tmp, bin, endpoint string, extra ...string) (*agent, error) {
	n, err := newAgent(tmp, kindNodelet)
	if err != nil {
		return n, err
	}
	cfg := filepath.Join(n.base, "config.yaml")
	// failCgroupV1: false, as for the kubelet: this machine has cgroup v1.
	conf := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfailCgroupV1: false\npodLogsDir: " + n.logsDir + "\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		return n, fmt.Errorf("write the KubeletConfiguration: %w", err)
	}
	args := []string{"--config", cfg, "--pod-manifest-path", n.manifests,
		"--root-dir", n.rootDir, "--container-runtime-endpoint", endpoint,
		"--hostname-override", n.name, "--read-only-port", fmt.Sprint(n.port),
		"--file-check-frequency", fileCheckFrequency.String()}
	return n, n.launch(bin, append(args, extra...)...)
}

// launch starts the agent's binary with args, its output going to a.logPath.
func (a *agent) launch(bin string, args ...string) error {
	a.bin, a.args = bin, args
	return a.exec(os.O_CREATE | os.O_TRUNC | os.O_WRONLY)
}

// exec starts a.bin with a.args, its output going to a.logPath opened with flag.
func (a *agent) exec(flag int) error {
	logFile, err := os.OpenFile(a.logPath, flag, 0o644)
	if err != nil {
		return fmt.Errorf("open %s's log file: %w", a.kind, err)
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(a.bin, a.args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Should the bench die without cleaning up, the agent does not outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", a.kind, err)
	}
	exited := make(chan struct{})
	a.mu.Lock()
	a.cmd, a.exited, a.waitErr = cmd, exited, nil
	a.mu.Unlock()
	go func() {
		err := cmd.Wait()
		a.mu.Lock()
		if a.cmd == cmd {
			a.waitErr = err
		}
		a.mu.Unlock()
		close(exited)
	}()
	return nil
}

// restart kills the agent with SIGKILL, as a crash would, waits for it to exit and starts it
// again with the same arguments, appending to its log; it returns when the new process started.
func (a *agent) restart() error {
	a.mu.Lock()
	cmd, exited := a.cmd, a.exited
	a.mu.Unlock()
	_ = cmd.Process.Kill()
	<-exited
	return a.exec(os.O_APPEND | os.O_WRONLY)
}

func (a *agent) pid() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cmd.Process.Pid
}

func (a *agent) running() bool {
	if a.cmd == nil {
		return false
	}
	select {
	case <-a.exited:
		return false
	default:
		return true
	}
}

// pods reads /pods from the read-only API and remembers the UIDs it shows.
func (a *agent) pods(ctx context.Context) ([]v1.Pod, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/pods", a.port), nil)
	if err != nil {
		return nil, fmt.Errorf("build the /pods request: %w", err)
	}
	resp, err := a.http.Do(req)
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
		a.uids[string(p.UID)] = true
	}
	return list.Items, nil
}

// poll calls cond every period until it returns true or an error, the agent exits, or ctx ends.
func (a *agent) poll(ctx context.Context, period time.Duration, what string, cond func() (bool, error)) error {
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
		case <-a.exited:
			return fmt.Errorf("waiting for %s: %s exited: %v", what, a.kind, a.waitErr)
		case <-t.C:
		}
	}
}

// kill sends SIGKILL: the guard's way to stop the agent at once when another one starts.
func (a *agent) kill() {
	a.killed.Store(true)
	a.mu.Lock()
	defer a.mu.Unlock()
	_ = a.cmd.Process.Kill() // a finished process is not signalled (os.Process uses a pidfd)
}

// stop sends SIGTERM and waits up to timeout for the agent to exit, then kills it. It returns an
// error when the agent does not exit cleanly, unless kill was called.
func (a *agent) stop(timeout time.Duration) error {
	if !a.running() {
		return nil
	}
	if a.killed.Load() {
		<-a.exited
		return nil
	}
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("send SIGTERM to %s: %w", a.kind, err)
	}
	select {
	case <-a.exited:
	case <-time.After(timeout):
		_ = a.cmd.Process.Kill()
		<-a.exited
		return fmt.Errorf("%s did not exit within %v of SIGTERM; killed it", a.kind, timeout)
	}
	var ee *exec.ExitError
	if errors.As(a.waitErr, &ee) {
		return fmt.Errorf("%s exited after SIGTERM with %v", a.kind, ee)
	}
	return a.waitErr
}

// logTail returns the last lines of the agent's log, for error reports.
func (a *agent) logTail(lines int) string {
	b, err := os.ReadFile(a.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", a.logPath, err)
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
