package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary act as the testserver command, for
// TestProcessSIGTERM.
func TestMain(m *testing.M) {
	if os.Getenv("TESTSERVER_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestProcessSIGTERM runs the command as a process: flags and environment,
// a request, then SIGTERM must exit 0 at once after writing the prestop file.
func TestProcessSIGTERM(t *testing.T) {
	prestop := filepath.Join(t.TempDir(), "prestop")
	cmd := exec.Command(os.Args[0], "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0", "--prestop-file", prestop)
	cmd.Env = append(os.Environ(), "TESTSERVER_RUN_MAIN=1", "TCP_ADDR=", "START_DELAY=1h",
		// Under -race, exiting sleeps 1s by default.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	out := newLockedBuffer()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("output:\n%s", out)
		}
	}()

	m := waitLog(t, out, listeningRE)
	if m[3] != "" {
		t.Errorf("TCP_ADDR= did not disable TCP: tcp=%s", m[3])
	}
	resp, err := http.Get("http://" + m[1] + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 500 {
		t.Errorf("healthz with START_DELAY=1h = %d, want 500", resp.StatusCode)
	}

	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Errorf("exit after SIGTERM: %v, want status 0", err)
	}
	took := time.Since(sent)
	t.Logf("exited %s after SIGTERM", took.Round(time.Millisecond))
	if took > 3*time.Second {
		t.Errorf("took %s to exit after SIGTERM", took)
	}
	got, err := os.ReadFile(prestop)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "sigterm\n" {
		t.Errorf("prestop file = %q, want %q", got, "sigterm\n")
	}
}
