package e2e

import (
	"context"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nodelet/nodelet/internal/cri"
	"github.com/nodelet/nodelet/internal/testharness"
)

// TestMakeRun runs the README's first command, `make run`, as written: it brings the test
// environment up, builds nodelet and starts it on examples/. The test waits until nodelet has
// taken every example pod, then stops the whole process group.
func TestMakeRun(t *testing.T) {
	e := testenv(t)
	// `make run` stops like the kubelet, leaving its pods running: remove them afterwards.
	leftovers := &node{t: t, env: e, name: "make-run-node", rootDir: "/var/lib/nodelet"}
	t.Cleanup(func() {
		c, err := cri.Dial(context.Background(), e.endpoint, 10*time.Second)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		defer c.Close()
		for _, s := range leftovers.nodeSandboxes() {
			_ = c.StopPodSandbox(context.Background(), s.Id)
			_ = c.RemovePodSandbox(context.Background(), s.Id)
		}
		for _, m := range testharness.MountsUnder(leftovers.rootDir) {
			_ = syscall.Unmount(m, syscall.MNT_DETACH)
		}
	})
	cmd := exec.Command("make", "-C", "../..", "run", "NODE_NAME=make-run-node")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	logs := watchLogs(out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Error("make run did not stop within 10 s of SIGTERM")
		}
	}()
	for _, pod := range []string{"default/web-make-run-node", "default/counter-make-run-node", "default/with-sidecar-make-run-node", "default/crashloop-make-run-node", "default/once-make-run-node"} {
		logs.waitCount(t, 3*time.Minute, 1, `"Pod added"`, `pod="`+pod+`"`)
	}
	// The web example answers on its hostPort.
	var body string
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(body, "hello from nodelet") {
		if resp, err := http.Get("http://127.0.0.1:8080/"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if !strings.Contains(body, "hello from nodelet") {
		t.Errorf("the web example did not answer on hostPort 8080; last answer %q", body)
	}
	if n := len(logs.matching("Pod manifest rejected")); n != 0 {
		t.Errorf("an example manifest was rejected:\n%s", logs.dump())
	}
}
