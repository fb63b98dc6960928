package prober

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// fakeExec answers ExecSync from a script and records the calls.
type fakeExec struct {
	mu     sync.Mutex
	calls  []execCall
	stdout string
	stderr string
	code   int32
	err    error
	onCall func() // runs on each call, e.g. to note the time
}

type execCall struct {
	id      string
	cmd     []string
	timeout time.Duration
}

var _ Execer = (*fakeExec)(nil)

func (f *fakeExec) ExecSync(_ context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, int32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, execCall{id, cmd, timeout})
	if f.onCall != nil {
		f.onCall()
	}
	if f.err != nil {
		return nil, nil, 0, f.err
	}
	return []byte(f.stdout), []byte(f.stderr), f.code, nil
}

func (f *fakeExec) set(stdout string, code int32, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stdout, f.code, f.err = stdout, code, err
}

func (f *fakeExec) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func TestExecProbe(t *testing.T) {
	cases := []struct {
		name           string
		stdout, stderr string
		code           int32
		err            error
		want           probeResult
		output         string
		wantErr        bool
	}{
		{name: "exit 0", stdout: "ok\n", want: probeSuccess, output: "ok\n"},
		{name: "exit 1 with output", stdout: "out;", stderr: "err", code: 1, want: probeFailure, output: "out;err"},
		{name: "output capped", stdout: strings.Repeat("x", 20<<10), code: 2, want: probeFailure, output: strings.Repeat("x", maxExecOutput)},
		{name: "runtime timeout", err: grpcstatus.Error(codes.DeadlineExceeded, "timeout 1s exceeded: context deadline exceeded"),
			want: probeFailure, output: `command "sh -c sleep 5" timed out`},
		{name: "client deadline", err: fmt.Errorf("exec: %w", context.DeadlineExceeded), want: probeFailure, output: `command "sh -c sleep 5" timed out`},
		{name: "cannot exec", err: grpcstatus.Error(codes.NotFound, "container not found"), want: probeUnknown, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex := &fakeExec{stdout: tc.stdout, stderr: tc.stderr, code: tc.code, err: tc.err}
			got := execProbe(context.Background(), ex, "abc", []string{"sh", "-c", "sleep 5"}, 3*time.Second)
			if got.Result != tc.want || got.Output != tc.output || (got.Err != nil) != tc.wantErr {
				t.Errorf("got %v %q err %v, want %v %q err %v", got.Result, trunc(got.Output), got.Err, tc.want, trunc(tc.output), tc.wantErr)
			}
			if c := ex.calls[0]; c.id != "abc" || c.timeout != 3*time.Second {
				t.Errorf("ExecSync(%q, timeout %v)", c.id, c.timeout)
			}
		})
	}
}

func TestRunProbeExecExpandsStaticEnv(t *testing.T) {
	ex := &fakeExec{}
	c := &v1.Container{Name: "app", Env: []v1.EnvVar{{Name: "FILE", Value: "/tmp/ok"},
		{Name: "SECRET", ValueFrom: &v1.EnvVarSource{}}}}
	p := &v1.Probe{TimeoutSeconds: 2, ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{
		Command: []string{"cat", "$(FILE)", "$(SECRET)", "$(OTHER)", "$$(FILE)"}}}}
	out := runProbe(context.Background(), ex, p, &v1.Pod{}, c, "10.0.0.1", "abc")
	if out.Result != probeSuccess {
		t.Fatalf("result %v", out)
	}
	want := []string{"cat", "/tmp/ok", "", "$(OTHER)", "$(FILE)"}
	if got := ex.calls[0].cmd; fmt.Sprint(got) != fmt.Sprint(want) || ex.calls[0].timeout != 2*time.Second {
		t.Errorf("cmd %q timeout %v, want %q 2s", got, ex.calls[0].timeout, want)
	}
}

func trunc(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

func serverHostPort(t *testing.T, rawURL string) (string, int) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return u.Hostname(), port
}

func TestHTTPProbe(t *testing.T) {
	mux := http.NewServeMux()
	var port int
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("fine")) })
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "bad", http.StatusInternalServerError) })
	mux.HandleFunc("/same-host", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/same-host-fail", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/fail", http.StatusFound) })
	mux.HandleFunc("/other-host", func(w http.ResponseWriter, r *http.Request) {
		// localhost is another host name than 127.0.0.1, though the same server.
		http.Redirect(w, r, fmt.Sprintf("http://localhost:%d/ok", port), http.StatusMovedPermanently)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	mux.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "" || !strings.HasPrefix(r.UserAgent(), "kube-probe/") {
			w.WriteHeader(http.StatusTeapot)
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	host, port := serverHostPort(t, srv.URL)
	c := &v1.Container{Name: "app", Ports: []v1.ContainerPort{{Name: "http", ContainerPort: int32(port)}}}

	cases := []struct {
		path   string
		want   probeResult
		output string
	}{
		{"/ok", probeSuccess, "fine"},
		{"/fail", probeFailure, "HTTP probe failed with statuscode: 500"},
		{"/same-host", probeSuccess, "fine"},
		{"/same-host-fail", probeFailure, "HTTP probe failed with statuscode: 500"},
		{"/other-host", probeWarning, "Probe terminated redirects"},
		{"/slow", probeFailure, "Client.Timeout exceeded"},
		{"/headers", probeSuccess, ""},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			start := time.Now()
			out := httpProbe(context.Background(), &v1.HTTPGetAction{Path: tc.path, Port: intstr.FromString("http")}, c, host, 300*time.Millisecond)
			if out.Result != tc.want || !strings.Contains(out.Output, tc.output) || out.Err != nil {
				t.Errorf("got %v %q %v, want %v containing %q", out.Result, trunc(out.Output), out.Err, tc.want, tc.output)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v: the timeout was not applied", d)
			}
		})
	}

	// Through runProbe: the host defaults to the pod IP, and a bad port is an error.
	p := &v1.Probe{TimeoutSeconds: 1, ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/ok", Port: intstr.FromInt32(int32(port))}}}
	if out := runProbe(context.Background(), nil, p, &v1.Pod{}, c, host, ""); out.Result != probeSuccess {
		t.Errorf("runProbe httpGet to the pod IP: %+v", out)
	}
	p.HTTPGet.Port = intstr.FromString("nope")
	if out := runProbe(context.Background(), nil, p, &v1.Pod{}, c, host, ""); out.Err == nil || out.Result != probeUnknown {
		t.Errorf("runProbe httpGet to an unknown port name: %+v, want an error", out)
	}
}

func TestTCPProbe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			_ = conn.Close()
		}
	}()
	open := ln.Addr().(*net.TCPAddr).Port

	closedLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := closedLn.Addr().(*net.TCPAddr).Port
	_ = closedLn.Close()

	if out := tcpProbe(context.Background(), "127.0.0.1", open, time.Second); out.Result != probeSuccess {
		t.Errorf("open port: %+v", out)
	}
	if out := tcpProbe(context.Background(), "127.0.0.1", closed, time.Second); out.Result != probeFailure ||
		!strings.Contains(out.Output, "connection refused") {
		t.Errorf("closed port: %+v", out)
	}

	// Through runProbe: a named port, the pod IP by default, an explicit host, no host at all.
	c := &v1.Container{Name: "app", Ports: []v1.ContainerPort{{Name: "db", ContainerPort: int32(open)}}}
	p := &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromString("db")}}}
	if out := runProbe(context.Background(), nil, p, &v1.Pod{}, c, "127.0.0.1", ""); out.Result != probeSuccess {
		t.Errorf("named port on the pod IP: %+v", out)
	}
	if out := runProbe(context.Background(), nil, p, &v1.Pod{}, c, "", ""); !errors.Is(out.Err, errNoHost) {
		t.Errorf("no pod IP: %+v, want errNoHost", out)
	}
	p.TCPSocket.Host = "127.0.0.1"
	if out := runProbe(context.Background(), nil, p, &v1.Pod{}, c, "", ""); out.Result != probeSuccess {
		t.Errorf("explicit host: %+v", out)
	}
	p.TCPSocket.Port = intstr.FromString("nope")
	if out := runProbe(context.Background(), nil, p, &v1.Pod{}, c, "", ""); out.Err == nil {
		t.Errorf("unknown port name: %+v, want an error", out)
	}
}

func TestRunProbeWithoutHandler(t *testing.T) {
	pod := &v1.Pod{}
	pod.Namespace, pod.Name = "ns", "web"
	out := runProbe(context.Background(), nil, &v1.Probe{}, pod, &v1.Container{Name: "app"}, "10.0.0.1", "abc")
	if out.Err == nil || out.Err.Error() != "missing probe handler for ns/web:app" {
		t.Errorf("got %+v", out)
	}
}
