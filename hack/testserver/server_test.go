package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	testingclock "k8s.io/utils/clock/testing"
)

// lockedBuffer is a log destination that tests can read while servers write; written is
// signalled after each write.
type lockedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written chan struct{} // one pending signal at most
}

func newLockedBuffer() *lockedBuffer { return &lockedBuffer{written: make(chan struct{}, 1)} }

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	n, err := b.buf.Write(p)
	b.mu.Unlock()
	select {
	case b.written <- struct{}{}:
	default:
	}
	return n, err
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitLog waits for re to match what was written so far, checking again after each write,
// and returns its submatches.
func waitLog(t *testing.T, b *lockedBuffer, re *regexp.Regexp) []string {
	t.Helper()
	for {
		if m := re.FindStringSubmatch(b.String()); m != nil {
			return m
		}
		<-b.written
	}
}

func newTestServer(t *testing.T, c config) (*server, *lockedBuffer) {
	t.Helper()
	logs := newLockedBuffer()
	s := newServer(c, newLogger(logs), testingclock.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)))
	t.Cleanup(func() {
		s.update("test over", func() { s.stopped = true })
		if t.Failed() {
			t.Logf("server log:\n%s", logs)
		}
	})
	return s, logs
}

// get requests path from h and returns the status, body and Location.
func get(t *testing.T, h http.Handler, path string) (int, string, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, strings.TrimSpace(rec.Body.String()), rec.Header().Get("Location")
}

func TestParseConfig(t *testing.T) {
	env := func(vars map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    config
		wantErr string
	}{
		{name: "defaults", want: config{httpAddr: ":8080", grpcAddr: ":9090", tcpAddr: ":7070"}},
		{
			name: "flags",
			args: []string{"--http", "127.0.0.1:1", "--grpc=:2", "-tcp", "", "--start-delay", "20s",
				"--fail-after", "30", "--prestop-file", "/tmp/x"},
			want: config{httpAddr: "127.0.0.1:1", grpcAddr: ":2", startDelay: 20 * time.Second,
				failAfter: 30 * time.Second, prestopFile: "/tmp/x"},
		},
		{
			name: "environment",
			env: map[string]string{"HTTP_ADDR": ":81", "GRPC_ADDR": "", "TCP_ADDR": ":71",
				"START_DELAY": "1m", "FAIL_AFTER": "1500ms", "PRESTOP_FILE": "/p"},
			want: config{httpAddr: ":81", tcpAddr: ":71", startDelay: time.Minute,
				failAfter: 1500 * time.Millisecond, prestopFile: "/p"},
		},
		{
			name: "flags override the environment",
			args: []string{"--start-delay=2s", "--http=:82"},
			env:  map[string]string{"START_DELAY": "20s", "HTTP_ADDR": ":81"},
			want: config{httpAddr: ":82", grpcAddr: ":9090", tcpAddr: ":7070", startDelay: 2 * time.Second},
		},
		{name: "bad flag duration", args: []string{"--fail-after", "soon"}, wantErr: "invalid duration"},
		{name: "negative duration", args: []string{"--start-delay", "-1s"}, wantErr: "negative"},
		{name: "bad env duration", env: map[string]string{"START_DELAY": "x"}, wantErr: "START_DELAY"},
		{name: "extra argument", args: []string{"serve"}, wantErr: "unexpected arguments"},
		{name: "help", args: []string{"-h"}, wantErr: "help requested"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseConfig(tt.args, env(tt.env), io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("config = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestHTTPHandlers(t *testing.T) {
	s, logs := newTestServer(t, config{})
	h := s.handler()
	steps := []struct {
		path     string
		code     int
		body     string
		location string
	}{
		{path: "/healthz", code: 200, body: "ok"},
		{path: "/ready", code: 200, body: "ready"},
		{path: "/fail", code: 200, body: "failing"},
		{path: "/healthz", code: 500, body: "failing"},
		{path: "/ready", code: 200, body: "ready"}, // readiness has its own flag
		{path: "/state", code: 200, body: "healthy=false starting=false failing=true ready=true"},
		{path: "/recover", code: 200, body: "recovered"},
		{path: "/healthz", code: 200, body: "ok"},
		{path: "/unready", code: 200, body: "unready"},
		{path: "/ready", code: 500, body: "unready"},
		{path: "/healthz", code: 200, body: "ok"}, // liveness is not affected
		{path: "/ready-on", code: 200, body: "ready"},
		{path: "/ready", code: 200, body: "ready"},
		{path: "/redirect-local", code: 302, location: "/healthz"},
		{path: "/redirect-away", code: 302, location: "http://127.0.0.2:1/"},
		{path: "/slow?d=10ms", code: 200, body: "slept 10ms"},
		{path: "/slow?d=0", code: 200, body: "slept 0s"},
		{path: "/slow?d=later", code: 400, body: `invalid duration "later" (want e.g. 20s or 20)`},
		{path: "/", code: 200},
		{path: "/nothing", code: 404},
	}
	for _, st := range steps {
		code, body, loc := get(t, h, st.path)
		if code != st.code || (st.body != "" && body != st.body) || loc != st.location {
			t.Errorf("GET %s = %d %q Location %q, want %d %q Location %q",
				st.path, code, body, loc, st.code, st.body, st.location)
		}
	}
	// One line per request, plus a line per state change (/fail, /recover,
	// /unready, /ready-on).
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	var requests int
	for _, l := range lines {
		if strings.Contains(l, " http GET ") {
			requests++
		}
	}
	if requests != len(steps) || len(lines) != len(steps)+4 {
		t.Errorf("%d log lines, %d of requests, want %d and %d:\n%s", len(lines), requests, len(steps)+4, len(steps), logs)
	}
	if want := `http GET /healthz 500 from 192.0.2.1:1234 in `; !strings.Contains(logs.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, logs)
	}
}

func TestSlowStopsWithTheClient(t *testing.T) {
	s, logs := newTestServer(t, config{})
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest(http.MethodGet, "/slow?d=1h", nil).WithContext(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.handler().ServeHTTP(httptest.NewRecorder(), req)
	}()
	cancel()
	<-done // /slow returns when the client goes away
	if !strings.Contains(logs.String(), "http GET /slow?d=1h - from") {
		t.Errorf("log:\n%s", logs)
	}
}

func TestStartDelay(t *testing.T) {
	s, _ := newTestServer(t, config{startDelay: time.Hour})
	h := s.handler()
	for _, st := range []struct {
		path string
		code int
		body string
	}{
		{"/healthz", 500, "starting"},
		{"/recover", 200, "recovered"}, // does not cut the start delay short
		{"/healthz", 500, "starting"},
		{"/ready", 200, "ready"},
	} {
		if code, body, _ := get(t, h, st.path); code != st.code || body != st.body {
			t.Errorf("GET %s = %d %q, want %d %q", st.path, code, body, st.code, st.body)
		}
	}
	s.startupDone() // what the start-delay timer calls
	if code, body, _ := get(t, h, "/healthz"); code != 200 || body != "ok" {
		t.Errorf("after the start delay, GET /healthz = %d %q, want 200 ok", code, body)
	}
}

// grpcClient serves s's gRPC health over an in-process bufconn listener.
func grpcClient(t *testing.T, s *server) healthpb.HealthClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	g := s.grpcServer()
	served := make(chan error, 1)
	go func() { served <- g.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		g.Stop()
		if err := <-served; err != nil {
			t.Errorf("gRPC Serve: %v", err)
		}
	})
	return healthpb.NewHealthClient(conn)
}

func checkHealth(t *testing.T, c healthpb.HealthClient, service string, want healthpb.HealthCheckResponse_ServingStatus) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		t.Fatalf("Check(%q): %v", service, err)
	}
	if resp.GetStatus() != want {
		t.Errorf("Check(%q) = %s, want %s", service, resp.GetStatus(), want)
	}
}

func TestGRPCHealth(t *testing.T) {
	s, logs := newTestServer(t, config{})
	c := grpcClient(t, s)
	serving, notServing := healthpb.HealthCheckResponse_SERVING, healthpb.HealthCheckResponse_NOT_SERVING

	for _, svc := range []string{"", namedService} {
		checkHealth(t, c, svc, serving)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Check(ctx, &healthpb.HealthCheckRequest{Service: "other"}); status.Code(err) != codes.NotFound {
		t.Errorf("Check(other) error = %v, want NotFound", err)
	}

	watch, err := c.Watch(ctx, &healthpb.HealthCheckRequest{Service: namedService})
	if err != nil {
		t.Fatal(err)
	}
	next := func(want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		resp, err := watch.Recv()
		if err != nil {
			t.Fatalf("Watch: %v", err)
		}
		if resp.GetStatus() != want {
			t.Errorf("Watch sent %s, want %s", resp.GetStatus(), want)
		}
	}
	next(serving)

	s.setFailing(true, "test")
	next(notServing)
	for _, svc := range []string{"", namedService} {
		checkHealth(t, c, svc, notServing)
	}
	s.setReady(false, "test") // readiness does not touch gRPC health
	checkHealth(t, c, "", notServing)
	s.setFailing(false, "test")
	next(serving)
	checkHealth(t, c, "", serving)

	want := regexp.MustCompile(`grpc /grpc.health.v1.Health/Check service="nodelet.test" NOT_SERVING from \S+ in `)
	if !want.MatchString(logs.String()) {
		t.Errorf("log lacks %s:\n%s", want, logs)
	}
	if !strings.Contains(logs.String(), `grpc /grpc.health.v1.Health/Check service="other" NotFound from`) {
		t.Errorf("log lacks the NotFound check:\n%s", logs)
	}
}

func TestGRPCStartDelay(t *testing.T) {
	s, _ := newTestServer(t, config{startDelay: time.Hour})
	c := grpcClient(t, s)
	checkHealth(t, c, namedService, healthpb.HealthCheckResponse_NOT_SERVING)
	s.startupDone()
	checkHealth(t, c, namedService, healthpb.HealthCheckResponse_SERVING)
}

func dialOK(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return false
	}
	// The server closes at once: the read ends with EOF (or a reset).
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, rerr := c.Read(make([]byte, 1))
	_ = c.Close()
	return rerr != nil && !errors.Is(rerr, os.ErrDeadlineExceeded)
}

func TestTCPFollowsHealth(t *testing.T) {
	s, logs := newTestServer(t, config{tcpAddr: "127.0.0.1:0"})
	addr, err := s.listenTCP()
	if err != nil {
		t.Fatal(err)
	}
	if !dialOK(addr) {
		t.Fatalf("TCP %s: not accepting while healthy", addr)
	}
	s.setFailing(true, "test")
	if dialOK(addr) {
		t.Fatalf("TCP %s: accepting while failing", addr)
	}
	s.setReady(false, "test")
	s.setFailing(false, "test")
	if !dialOK(addr) {
		t.Fatalf("TCP %s: not reopened on recovery", addr)
	}
	waitLog(t, logs, regexp.MustCompile(`tcp accept from 127\.0\.0\.1:\d+`))
}

func TestTCPStartDelay(t *testing.T) {
	s, _ := newTestServer(t, config{tcpAddr: "127.0.0.1:0", startDelay: time.Hour})
	addr, err := s.listenTCP()
	if err != nil {
		t.Fatal(err)
	}
	if dialOK(addr) {
		t.Fatalf("TCP %s: accepting during the start delay", addr)
	}
	s.startupDone()
	if !dialOK(addr) {
		t.Fatalf("TCP %s: not accepting after the start delay", addr)
	}
}

var listeningRE = regexp.MustCompile(`testserver listening http=(\S*) grpc=(\S*) tcp=(\S*) `)

// TestRunTimers runs the whole server on loopback, its timers on a fake clock.
func TestRunTimers(t *testing.T) {
	s, logs := newTestServer(t, config{httpAddr: "127.0.0.1:0", grpcAddr: "127.0.0.1:0", tcpAddr: "127.0.0.1:0",
		startDelay: 100 * time.Millisecond, failAfter: 300 * time.Millisecond})
	clk := s.clock.(*testingclock.FakeClock)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- s.run(ctx) }()
	defer func() {
		cancel()
		if err := <-ran; !errors.Is(err, context.Canceled) {
			t.Errorf("run = %v, want context.Canceled", err)
		}
	}()
	m := waitLog(t, logs, listeningRE) // logged once the timers are set
	base, grpcAddr, tcpAddr := "http://"+m[1], m[2], m[3]
	healthz := func() int {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	// Start delay, then healthy, then fail-after: the fake clock's timers run within Step.
	if code := healthz(); code != 500 {
		t.Errorf("healthz during the start delay = %d, want 500", code)
	}
	clk.Step(100 * time.Millisecond)
	if code := healthz(); code != 200 {
		t.Errorf("healthz after the start delay = %d, want 200", code)
	}
	clk.Step(200 * time.Millisecond)
	if code := healthz(); code != 500 {
		t.Errorf("healthz after fail-after = %d, want 500", code)
	}
	if dialOK(tcpAddr) {
		t.Error("TCP accepting after fail-after")
	}
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	c := healthpb.NewHealthClient(conn)
	checkHealth(t, c, "", healthpb.HealthCheckResponse_NOT_SERVING)

	resp, err := http.Get(base + "/recover")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if code := healthz(); code != 200 {
		t.Errorf("healthz after /recover = %d, want 200", code)
	}
	checkHealth(t, c, namedService, healthpb.HealthCheckResponse_SERVING)
	if !dialOK(tcpAddr) {
		t.Error("TCP not accepting after /recover")
	}
}

func TestRunBadAddress(t *testing.T) {
	s, _ := newTestServer(t, config{httpAddr: "127.0.0.1:0", grpcAddr: "256.0.0.1:1"})
	if err := s.run(context.Background()); err == nil || !strings.HasPrefix(err.Error(), "grpc: ") {
		t.Fatalf("run = %v, want a grpc listen error", err)
	}
}

func TestOnSignalAppends(t *testing.T) {
	file := filepath.Join(t.TempDir(), "prestop")
	s, _ := newTestServer(t, config{prestopFile: file})
	s.onSignal(syscall.SIGTERM)
	s.onSignal(syscall.SIGTERM)
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "sigterm\nsigterm\n" {
		t.Errorf("prestop file = %q, want two sigterm lines", got)
	}
}
