package lifecycle

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
	testingclock "k8s.io/utils/clock/testing"
)

// The fake satisfies the interface the Runner needs.
var _ Execer = (*fakeExecer)(nil)

// TestMain keeps the logs of expected failures out of the test output.
func TestMain(m *testing.M) {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	os.Exit(m.Run())
}

type execCall struct {
	id      string
	cmd     []string
	timeout time.Duration
}

// fakeExecer answers every ExecSync with the same result and records the calls.
type fakeExecer struct {
	stdout, stderr string
	code           int32
	err            error

	mu    sync.Mutex
	calls []execCall
}

func (f *fakeExecer) ExecSync(_ context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, int32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, execCall{id, cmd, timeout})
	if f.err != nil {
		return nil, nil, 0, f.err
	}
	return []byte(f.stdout), []byte(f.stderr), f.code, nil
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func testPod() (*v1.Pod, *v1.Container) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"}}
	return pod, &v1.Container{Name: "app", Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 8080}}}
}

func TestRunExec(t *testing.T) {
	cmd := []string{"sh", "-c", "exit 1"}
	for _, tc := range []struct {
		name    string
		exec    *fakeExecer
		wantErr string
		wantMsg string
	}{
		{name: "exit 0", exec: &fakeExecer{stdout: "fine"}},
		{name: "non-zero exit: the command, the code and stderr; the output in the message",
			exec:    &fakeExecer{stdout: "out", stderr: "boom", code: 1},
			wantErr: "command 'sh -c exit 1' exited with 1: boom",
			wantMsg: `Exec lifecycle hook ([sh -c exit 1]) for Container "app" in Pod "web_default(uid-1)" failed - error: command 'sh -c exit 1' exited with 1: boom, message: "outboom"`},
		{name: "the runtime cannot run it",
			exec:    &fakeExecer{err: status.Error(codes.NotFound, "container not found")},
			wantErr: "rpc error: code = NotFound desc = container not found",
			wantMsg: `Exec lifecycle hook ([sh -c exit 1]) for Container "app" in Pod "web_default(uid-1)" failed - error: rpc error: code = NotFound desc = container not found, message: ""`},
		{name: "timed out",
			exec:    &fakeExecer{err: status.Error(codes.DeadlineExceeded, "deadline exceeded")},
			wantErr: `command "sh -c exit 1" timed out`,
			wantMsg: `Exec lifecycle hook ([sh -c exit 1]) for Container "app" in Pod "web_default(uid-1)" failed - error: command "sh -c exit 1" timed out, message: ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(testingclock.NewFakeClock(t0), tc.exec)
			pod, c := testPod()
			msg, err := r.Run(context.Background(), pod, c, "cid", &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: cmd}}, "")
			if gotErr := errString(err); gotErr != tc.wantErr || msg != tc.wantMsg {
				t.Errorf("got (%q, %q), want (%q, %q)", msg, gotErr, tc.wantMsg, tc.wantErr)
			}
			if len(tc.exec.calls) != 1 || tc.exec.calls[0].id != "cid" || !slices.Equal(tc.exec.calls[0].cmd, cmd) || tc.exec.calls[0].timeout != 0 {
				t.Errorf("ExecSync calls %+v, want one of %v in cid without a timeout", tc.exec.calls, cmd)
			}
		})
	}
}

func TestExecTimeoutFollowsTheDeadline(t *testing.T) {
	for _, tc := range []struct {
		left, want time.Duration
	}{
		{30 * time.Second, 30 * time.Second}, // 29.99... s rounds up
		{1500 * time.Millisecond, 2 * time.Second},
		{300 * time.Millisecond, time.Second},
	} {
		f := &fakeExecer{}
		ctx, cancel := context.WithTimeout(context.Background(), tc.left)
		_, err := New(testingclock.NewFakeClock(t0), f).Run(ctx, &v1.Pod{}, &v1.Container{}, "cid",
			&v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}, "")
		cancel()
		if err != nil || f.calls[0].timeout != tc.want {
			t.Errorf("%v left: timeout %v (err %v), want %v", tc.left, f.calls[0].timeout, err, tc.want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// hookServer answers every path but /fail with 200 and records the requests.
type hookServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

func newHookServer(t *testing.T, tlsServer bool) *hookServer {
	s := &hookServer{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r)
		s.mu.Unlock()
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	if tlsServer {
		s.Server = httptest.NewTLSServer(h)
	} else {
		s.Server = httptest.NewServer(h)
	}
	t.Cleanup(s.Close)
	return s
}

func (s *hookServer) requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

func (s *hookServer) port(t *testing.T) int32 {
	_, p, err := net.SplitHostPort(s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return int32(n)
}

func TestRunHTTPGet(t *testing.T) {
	srv := newHookServer(t, false)
	port := srv.port(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedAddr := closed.Listener.Addr().(*net.TCPAddr)
	closed.Close()
	for _, tc := range []struct {
		name    string
		action  v1.HTTPGetAction
		podIP   string
		wantErr string // a part of the error
		wantMsg string // a prefix of the message
		ua      string // the User-Agent the server saw
	}{
		{name: "to the pod IP", action: v1.HTTPGetAction{Path: "/ok", Port: intstr.FromInt32(port)}, podIP: "127.0.0.1", ua: "kube-lifecycle/1.37"},
		{name: "an explicit host", action: v1.HTTPGetAction{Path: "/ok", Host: "127.0.0.1", Port: intstr.FromInt32(port)}, podIP: "10.0.0.9", ua: "kube-lifecycle/1.37"},
		{name: "a 500 is an answer: success, as upstream", action: v1.HTTPGetAction{Path: "/fail", Port: intstr.FromInt32(port)}, podIP: "127.0.0.1", ua: "kube-lifecycle/1.37"},
		{name: "the action's User-Agent", action: v1.HTTPGetAction{Path: "/ok", Port: intstr.FromInt32(port),
			HTTPHeaders: []v1.HTTPHeader{{Name: "user-agent", Value: "mine"}}}, podIP: "127.0.0.1", ua: "mine"},
		{name: "no host: the pod has no IP", action: v1.HTTPGetAction{Path: "/ok", Port: intstr.FromInt32(port)},
			wantErr: "no host to connect to",
			wantMsg: `HTTP lifecycle hook (/ok) for Container "app" in Pod "web_default(uid-1)" failed - error: no host to connect to`},
		{name: "unknown port name", action: v1.HTTPGetAction{Path: "/ok", Port: intstr.FromString("admin")}, podIP: "127.0.0.1",
			wantErr: `couldn't find port "admin"`, wantMsg: `HTTP lifecycle hook (/ok) for Container "app"`},
		{name: "nobody listens", action: v1.HTTPGetAction{Path: "/stop", Port: intstr.FromInt(closedAddr.Port)}, podIP: "127.0.0.1",
			wantErr: "connection refused", wantMsg: `HTTP lifecycle hook (/stop) for Container "app" in Pod "web_default(uid-1)" failed - error: Get "http://127.0.0.1:`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(srv.requests())
			pod, c := testPod()
			msg, err := New(testingclock.NewFakeClock(t0), &fakeExecer{}).Run(context.Background(), pod, c, "cid",
				&v1.LifecycleHandler{HTTPGet: &tc.action}, tc.podIP)
			if tc.wantErr == "" {
				if err != nil || msg != "" {
					t.Fatalf("failed: %q %v", msg, err)
				}
				reqs := srv.requests()
				if len(reqs) != before+1 || reqs[before].URL.Path != tc.action.Path || reqs[before].UserAgent() != tc.ua {
					t.Errorf("requests %d (had %d); last %s with User-Agent %q, want %s with %q", len(reqs), before,
						reqs[len(reqs)-1].URL.Path, reqs[len(reqs)-1].UserAgent(), tc.action.Path, tc.ua)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(msg, tc.wantMsg) {
				t.Errorf("got (%q, %v), want an error with %q and a message starting %q", msg, err, tc.wantErr, tc.wantMsg)
			}
		})
	}
}

// Upstream retries an HTTPS hook answered in plain HTTP once in HTTP, without Authorization.
func TestRunHTTPGetFallsBackToHTTP(t *testing.T) {
	srv := newHookServer(t, false)
	pod, c := testPod()
	action := &v1.HTTPGetAction{Path: "/ok", Port: intstr.FromInt32(srv.port(t)), Scheme: v1.URISchemeHTTPS,
		HTTPHeaders: []v1.HTTPHeader{{Name: "Authorization", Value: "Bearer secret"}}}
	msg, err := New(testingclock.NewFakeClock(t0), &fakeExecer{}).Run(context.Background(), pod, c, "cid",
		&v1.LifecycleHandler{HTTPGet: action}, "127.0.0.1")
	if err != nil {
		t.Fatalf("%q %v", msg, err)
	}
	reqs := srv.requests()
	if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "" {
		t.Errorf("requests %d; the retry carried Authorization %q", len(reqs), reqs[0].Header.Get("Authorization"))
	}

	tlsSrv := newHookServer(t, true) // a real HTTPS hook: certificates are not verified
	action.Port = intstr.FromInt32(tlsSrv.port(t))
	if msg, err := New(testingclock.NewFakeClock(t0), &fakeExecer{}).Run(context.Background(), pod, c, "cid",
		&v1.LifecycleHandler{HTTPGet: action}, "127.0.0.1"); err != nil {
		t.Fatalf("HTTPS hook: %q %v", msg, err)
	}
	if reqs := tlsSrv.requests(); len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer secret" {
		t.Errorf("HTTPS requests %d, want 1 with its Authorization", len(reqs))
	}
}

func TestRunHTTPGetEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	arrived := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done() // answers only once the client gave up
	}))
	defer srv.Close()
	go func() {
		<-arrived
		cancel() // the hook's context ends while the GET is in flight
	}()
	_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(p)
	pod, c := testPod()
	_, err := New(testingclock.NewFakeClock(t0), &fakeExecer{}).Run(ctx, pod, c, "cid",
		&v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/slow", Port: intstr.FromInt(port)}}, "127.0.0.1")
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("err %v, want the context's end", err)
	}
}

func TestRunSleep(t *testing.T) {
	pod, c := testPod()
	sleep := func(s int64) *v1.LifecycleHandler { return &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: s}} }

	// In a synctest bubble, synctest.Wait returns once the hook waits on the fake clock.
	t.Run("waits the seconds on the clock", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			clk := testingclock.NewFakeClock(t0)
			done := make(chan error, 1)
			go func() {
				_, err := New(clk, &fakeExecer{}).Run(context.Background(), pod, c, "cid", sleep(5), "")
				done <- err
			}()
			synctest.Wait()
			if n := clk.Waiters(); n != 1 {
				t.Fatalf("%d timers on the clock, want 1", n)
			}
			clk.Step(4999 * time.Millisecond)
			synctest.Wait()
			select {
			case err := <-done:
				t.Fatalf("returned before 5 s: %v", err)
			default:
			}
			clk.Step(time.Millisecond)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if clk.HasWaiters() {
				t.Error("the sleep left its timer behind")
			}
		})
	})
	t.Run("ends early with the context", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			clk := testingclock.NewFakeClock(t0)
			ctx, cancel := context.WithCancel(context.Background())
			type result struct {
				msg string
				err error
			}
			done := make(chan result, 1)
			go func() {
				msg, err := New(clk, &fakeExecer{}).Run(ctx, pod, c, "cid", sleep(5), "")
				done <- result{msg, err}
			}()
			synctest.Wait()
			if n := clk.Waiters(); n != 1 {
				t.Fatalf("%d timers on the clock, want 1", n)
			}
			cancel()
			res := <-done
			want := `Sleep lifecycle hook (5) for Container "app" in Pod "web_default(uid-1)" failed - error: container terminated before sleep hook finished`
			if res.err == nil || res.msg != want {
				t.Errorf("got (%q, %v), want %q", res.msg, res.err, want)
			}
		})
	})
	t.Run("zero seconds", func(t *testing.T) {
		if _, err := New(testingclock.NewFakeClock(t0), &fakeExecer{}).Run(context.Background(), pod, c, "cid", sleep(0), ""); err != nil {
			t.Fatal(err)
		}
	})
}

// tcpSocket is deprecated and was never supported as a hook: upstream fails it as an invalid
// handler, as it does a handler with no action at all.
func TestRunInvalidHandlers(t *testing.T) {
	pod, c := testPod()
	for name, h := range map[string]*v1.LifecycleHandler{
		"tcpSocket": {TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(80)}},
		"empty":     {},
		"nil":       nil,
	} {
		f := &fakeExecer{}
		msg, err := New(testingclock.NewFakeClock(t0), f).Run(context.Background(), pod, c, "cid", h, "127.0.0.1")
		if err == nil || !strings.HasPrefix(err.Error(), "invalid handler: ") || msg != "Cannot run handler: "+err.Error() {
			t.Errorf("%s: got (%q, %v), want an invalid handler", name, msg, err)
		}
		if len(f.calls) != 0 {
			t.Errorf("%s: ran %v", name, f.calls)
		}
	}
}
