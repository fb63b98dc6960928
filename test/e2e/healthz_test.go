package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHealthzReportsUnreachableRuntime: with no runtime at its endpoint, nodelet keeps running,
// /healthz fails and says why, and the pods wait.
func TestHealthzReportsUnreachableRuntime(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(kubeletConfig(filepath.Join(dir, "pods"))), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	cmd := exec.Command(nodeletBin(t), "--config", cfg, "--root-dir", filepath.Join(dir, "root"), "--read-only-port", fmt.Sprint(port),
		"--container-runtime-endpoint", "unix://"+filepath.Join(dir, "missing.sock"), "--hostname-override", "healthz-node")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var code int
	var body string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz?verbose", port))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			code, body = resp.StatusCode, string(b)
			if strings.Contains(body, "cannot reach the container runtime") {
				break
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code != http.StatusInternalServerError || !strings.Contains(body, "[-]runtime failed") || !strings.Contains(body, "missing.sock") {
		t.Fatalf("/healthz answered %d:\n%s", code, body)
	}
	if !strings.Contains(body, "[-]pleg failed") {
		t.Errorf("pleg should report that it waits for the runtime:\n%s", body)
	}
}
