package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

// get sends a GET to the server's handler and returns the status and body.
func get(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptestGet(h, target)
	return rec.Code, rec.Body.String()
}

func httptestGet(h http.Handler, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec
}

func TestNewValidates(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	pods, logs := &fakePods{}, &fakeLogs{}
	cases := map[string]struct {
		cfg  Config
		deps Deps
		want string
	}{
		"no address":      {Config{Clock: clk}, Deps{Pods: pods, Logs: logs}, "Address is required"},
		"no clock":        {Config{Address: "x"}, Deps{Pods: pods, Logs: logs}, "Clock is required"},
		"no pods":         {Config{Address: "x", Clock: clk}, Deps{Logs: logs}, "Pods is required"},
		"no logs":         {Config{Address: "x", Clock: clk}, Deps{Pods: pods}, "Logs is required"},
		"nil check":       {Config{Address: "x", Clock: clk}, Deps{Pods: pods, Logs: logs, Checks: []HealthCheck{nil}}, "Checks[0] is nil"},
		"duplicate check": {Config{Address: "x", Clock: clk}, Deps{Pods: pods, Logs: logs, Checks: []HealthCheck{&fakeCheck{name: "a"}, &fakeCheck{name: "a"}}}, `duplicate health check "a"`},
		"ping is taken":   {Config{Address: "x", Clock: clk}, Deps{Pods: pods, Logs: logs, Checks: []HealthCheck{&fakeCheck{name: "ping"}}}, `duplicate health check "ping"`},
		"slash in name":   {Config{Address: "x", Clock: clk}, Deps{Pods: pods, Logs: logs, Checks: []HealthCheck{&fakeCheck{name: "a/b"}}}, "without '/'"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := New(tc.cfg, tc.deps)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New() error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestContainerLogsOnlyOnLoopback(t *testing.T) {
	for addr, loopback := range map[string]bool{
		"127.0.0.1:10255": true, "[::1]:10255": true, "localhost:10255": true,
		"0.0.0.0:10255": false, ":10255": false, "10.0.0.5:10255": false, "[::]:10255": false, "bad": false,
	} {
		e := newEnv(t)
		p := podWith("web", 0, "app")
		e.addPod(p)
		e.writeLog(p, "app", 0, rec(0, "stdout", "F", "secret"))
		srv, err := New(Config{Address: addr, Clock: e.clock}, Deps{Pods: e.pods, Logs: e.logs})
		if err != nil {
			t.Fatal(err)
		}
		code, body := get(t, srv.Handler(), "/containerLogs/default/web/app")
		if loopback && (code != http.StatusOK || body != "secret\n") {
			t.Errorf("%s: %d %q, want the log", addr, code, body)
		}
		if !loopback && (code != http.StatusForbidden || strings.Contains(body, "secret")) {
			t.Errorf("%s: %d %q, want 403", addr, code, body)
		}
		if code, _ := get(t, srv.Handler(), "/pods"); code != http.StatusOK {
			t.Errorf("%s: /pods %d", addr, code)
		}
	}
}

func TestUnknownRouteAndMethod(t *testing.T) {
	e := newEnv(t)
	if code, _ := get(t, e.srv.Handler(), "/nope"); code != http.StatusNotFound {
		t.Errorf("GET /nope: code %d, want 404", code)
	}
	rec := httptest.NewRecorder()
	e.srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/pods", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /pods: code %d, want 405", rec.Code)
	}
}

// TestRun serves on a real loopback port and stops when the context ends, also ending a
// followed log in flight. The listener is open before Serve, so the first request needs no
// retry: the connection waits in the listen backlog.
func TestRun(t *testing.T) {
	ln := listenLoopback(t)
	e := newEnv(t)
	p := podWith("web", 0, "app")
	e.addPod(p)
	e.writeLog(p, "app", 0, rec(0, "stdout", "F", "hello"))
	srv, err := New(Config{Address: ln.Addr().String(), Clock: clock.RealClock{}}, Deps{Pods: e.pods, Logs: e.logs})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()

	resp, err := http.Get("http://" + ln.Addr().String() + "/containerLogs/default/web/app?follow=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, len("hello\n"))
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "hello\n" {
		t.Fatalf("followed log: %q, %v", buf, err)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve() = %v, want nil", err)
	}
	if rest, _ := io.ReadAll(resp.Body); len(rest) != 0 {
		t.Errorf("followed log after shutdown: %q", rest)
	}
}

func TestRunListenError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv, err := New(Config{Address: ln.Addr().String(), Clock: clock.RealClock{}}, Deps{Pods: &fakePods{}, Logs: &fakeLogs{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("Run() on a taken port = %v, want a listen error", err)
	}
}

// listenLoopback opens a listener on a free loopback port; Serve closes it, the cleanup too.
func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}
