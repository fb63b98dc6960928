package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// fakeContainers is a streaming.Runtime standing in for the container runtime behind a real
// k8s.io/cri-streaming server (what containerd runs): exec echoes its command and stdin and
// exits with the code in $EXIT; attach echoes stdin prefixed with "got:"; port-forward echoes.
type fakeContainers struct {
	mu        sync.Mutex
	forwarded []int32
}

var _ streaming.Runtime = (*fakeContainers)(nil)

func (f *fakeContainers) Exec(_ context.Context, id string, cmd []string, in io.Reader, out, _ io.WriteCloser, _ bool, _ <-chan remotecommandserver.TerminalSize) error {
	fmt.Fprintf(out, "%s ran %s\n", id, strings.Join(cmd, " "))
	if in != nil {
		data, _ := io.ReadAll(in)
		fmt.Fprintf(out, "stdin: %s", data)
	}
	if len(cmd) == 2 && cmd[0] == "exit" {
		return utilexec.CodeExitError{Err: errors.New("exited"), Code: int([]byte(cmd[1])[0] - '0')}
	}
	return nil
}

func (f *fakeContainers) Attach(_ context.Context, _ string, in io.Reader, out, _ io.WriteCloser, _ bool, _ <-chan remotecommandserver.TerminalSize) error {
	data, _ := io.ReadAll(in)
	fmt.Fprintf(out, "got:%s", data)
	return nil
}

func (f *fakeContainers) PortForward(_ context.Context, _ string, port int32, stream io.ReadWriteCloser) error {
	f.mu.Lock()
	f.forwarded = append(f.forwarded, port)
	f.mu.Unlock()
	defer stream.Close()
	buf := make([]byte, 5)
	if _, err := io.ReadFull(stream, buf); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stream, "echo:%s", buf)
	return err
}

// criStreaming is the CRI side: it hands out URLs of the streaming server.
type criStreaming struct{ srv streaming.Server }

var _ Streaming = criStreaming{}

func (c criStreaming) Exec(_ context.Context, r *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	return c.srv.GetExec(r)
}
func (c criStreaming) Attach(_ context.Context, r *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	return c.srv.GetAttach(r)
}
func (c criStreaming) PortForward(_ context.Context, r *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	return c.srv.GetPortForward(r)
}

// fakeTargets knows pod default/web with container app (ID c1) in sandbox s1.
type fakeTargets struct{}

var _ Targets = fakeTargets{}

func (fakeTargets) RunningContainer(_ context.Context, ns, pod string, uid types.UID, name string) (ContainerTarget, error) {
	if ns != "default" || pod != "web" || name != "app" || (uid != "" && uid != "uid-web") {
		return ContainerTarget{}, fmt.Errorf("container %s/%s/%s: %w", ns, pod, name, ErrNotFound)
	}
	return ContainerTarget{ID: "c1"}, nil
}

func (fakeTargets) Sandbox(_ context.Context, ns, pod string, _ types.UID) (string, error) {
	if ns != "default" || pod != "web" {
		return "", fmt.Errorf("pod %s/%s: %w", ns, pod, ErrNotFound)
	}
	return "s1", nil
}

type fakeRunner struct{}

func (fakeRunner) ExecSync(_ context.Context, id string, cmd []string, _ time.Duration) ([]byte, []byte, int32, error) {
	if cmd[0] == "false" {
		return nil, []byte("nope"), 1, nil
	}
	return []byte(id + ":" + strings.Join(cmd, ",")), []byte("!"), 0, nil
}

type fakeRunning struct{}

func (fakeRunning) RunningPods(context.Context) ([]*v1.Pod, error) {
	p := &v1.Pod{}
	p.Name, p.Namespace, p.UID = "web", "default", "uid-web"
	p.Spec.Containers = []v1.Container{{Name: "app", Image: "busybox"}}
	return []*v1.Pod{p}, nil
}

// streamEnv is a kubelet API (without TLS: the listener adds it in production) in front of a
// real CRI streaming server.
type streamEnv struct {
	api     *httptest.Server
	runtime *fakeContainers
}

func newStreamEnv(t *testing.T) *streamEnv {
	t.Helper()
	rt := &fakeContainers{}
	mux := http.NewServeMux()
	criSrv := httptest.NewServer(mux)
	t.Cleanup(criSrv.Close)
	u, _ := url.Parse(criSrv.URL)
	cfg := streaming.DefaultConfig
	cfg.Addr, cfg.BaseURL = u.Host, u
	srv, err := streaming.NewServer(cfg, rt)
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/", srv)

	e := newEnv(t)
	certFile, keyFile := selfSignedPair(t)
	api, err := New(Config{Address: ":10250", Clock: e.clock, Secure: &Secure{CertFile: certFile, KeyFile: keyFile,
		Filter: func(h http.Handler) http.Handler { return h }}},
		Deps{Pods: e.pods, Logs: e.logs, Streams: &Streams{Targets: fakeTargets{}, Streaming: criStreaming{srv}, Runner: fakeRunner{}, RunningPods: fakeRunning{}}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(api.Handler())
	t.Cleanup(hs.Close)
	return &streamEnv{api: hs, runtime: rt}
}

func (e *streamEnv) url(path string) *url.URL {
	u, _ := url.Parse(e.api.URL + path)
	return u
}

// exec runs a remote command with kubectl's executors: SPDY, or WebSocket (v5, translated to
// SPDY toward the runtime).
func (e *streamEnv) exec(t *testing.T, websocket bool, path string, stdin string) (string, error) {
	t.Helper()
	cfg := &rest.Config{Host: e.api.URL}
	var ex remotecommand.Executor
	var err error
	if websocket {
		ex, err = remotecommand.NewWebSocketExecutor(cfg, "GET", e.url(path).String())
	} else {
		ex, err = remotecommand.NewSPDYExecutor(cfg, "POST", e.url(path))
	}
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	opts := remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut}
	if stdin != "" {
		opts.Stdin = strings.NewReader(stdin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = ex.StreamWithContext(ctx, opts)
	return out.String(), err
}

func TestExecAndAttachOverSPDYAndWebSocket(t *testing.T) {
	e := newStreamEnv(t)
	for _, ws := range []bool{false, true} {
		name := map[bool]string{false: "spdy", true: "websocket"}[ws]
		t.Run(name, func(t *testing.T) {
			out, err := e.exec(t, ws, "/exec/default/web/app?command=echo&command=hi&output=1&error=1", "")
			if err != nil || out != "c1 ran echo hi\n" {
				t.Errorf("exec: %q, %v", out, err)
			}
			out, err = e.exec(t, ws, "/exec/default/web/uid-web/app?command=cat&input=1&output=1&error=1", "from stdin")
			if err != nil || out != "c1 ran cat\nstdin: from stdin" {
				t.Errorf("exec with stdin: %q, %v", out, err)
			}
			_, err = e.exec(t, ws, "/exec/default/web/app?command=exit&command=3&output=1&error=1", "")
			var exit utilexec.ExitError
			if !errors.As(err, &exit) || exit.ExitStatus() != 3 {
				t.Errorf("exec exit 3: %v, want exit status 3", err)
			}
			out, err = e.exec(t, ws, "/attach/default/web/app?input=1&output=1&error=1", "line")
			if err != nil || out != "got:line" {
				t.Errorf("attach: %q, %v", out, err)
			}
		})
	}
}

func TestPortForwardOverSPDYAndWebSocketTunnel(t *testing.T) {
	e := newStreamEnv(t)
	for _, tunnel := range []bool{false, true} {
		name := map[bool]string{false: "spdy", true: "websocket-tunnel"}[tunnel]
		t.Run(name, func(t *testing.T) {
			cfg := &rest.Config{Host: e.api.URL}
			transport, upgrader, err := spdy.RoundTripperFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			target := e.url("/portForward/default/web")
			var dialer httpstream.Dialer = spdy.NewDialer(upgrader, &http.Client{Transport: transport}, "POST", target)
			if tunnel {
				if dialer, err = portforward.NewSPDYOverWebsocketDialer(target, cfg); err != nil {
					t.Fatal(err)
				}
			}
			stop, ready := make(chan struct{}), make(chan struct{})
			fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:8080"}, stop, ready, io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- fw.ForwardPorts() }()
			select {
			case <-ready:
			case err := <-done:
				t.Fatalf("port-forward ended: %v", err)
			}
			ports, err := fw.GetPorts()
			if err != nil {
				t.Fatal(err)
			}
			conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", ports[0].Local))
			if err != nil {
				t.Fatal(err)
			}
			_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
			if _, err := conn.Write([]byte("hello")); err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(conn)
			conn.Close()
			close(stop)
			<-done
			if string(got) != "echo:hello" {
				t.Errorf("forwarded connection answered %q, want echo:hello", got)
			}
			e.runtime.mu.Lock()
			defer e.runtime.mu.Unlock()
			if n := len(e.runtime.forwarded); n == 0 || e.runtime.forwarded[n-1] != 8080 {
				t.Errorf("runtime forwarded ports %v, want 8080 last", e.runtime.forwarded)
			}
		})
	}
}

func TestStreamErrors(t *testing.T) {
	e := newStreamEnv(t)
	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{"POST", "/exec/default/web/app?command=ls", http.StatusBadRequest}, // no stream chosen
		{"POST", "/exec/default/nope/app?command=ls&output=1", http.StatusNotFound},
		{"POST", "/exec/default/web/other-uid/app?command=ls&output=1", http.StatusNotFound},
		{"POST", "/attach/default/web/sidecar?output=1", http.StatusNotFound},
		{"POST", "/portForward/default/nope?port=80", http.StatusNotFound},
		{"POST", "/portForward/default/web?port=80", http.StatusBadRequest}, // not an upgrade request
		{"POST", "/run/default/web/app?cmd=false", http.StatusInternalServerError},
		{"GET", "/run/default/web/app?cmd=ls", http.StatusMethodNotAllowed},
	} {
		req, _ := http.NewRequest(tc.method, e.api.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("%s %s: %d %q, want %d", tc.method, tc.path, resp.StatusCode, body, tc.code)
		}
	}
}

func TestRunAndRunningPods(t *testing.T) {
	e := newStreamEnv(t)
	resp, err := http.Post(e.api.URL+"/run/default/web/app?cmd=echo+a+b", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "c1:echo,a,b!" {
		t.Errorf("/run: %d %q, want stdout then stderr", resp.StatusCode, body)
	}
	resp, err = http.Get(e.api.URL + "/runningpods/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	want := `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"web","namespace":"default","uid":"uid-web"},"spec":{"containers":[{"name":"app","image":"busybox","resources":{}}]},"status":{}}]}` + "\n"
	if string(body) != want {
		t.Errorf("/runningpods/:\n%s\nwant\n%s", body, want)
	}
}

// The read-only API never serves the debugging handlers.
func TestReadOnlyAPIHasNoStreams(t *testing.T) {
	e := newEnv(t)
	srv, err := New(Config{Address: "127.0.0.1:10255", Clock: e.clock},
		Deps{Pods: e.pods, Logs: e.logs, Streams: &Streams{Targets: fakeTargets{}, Runner: fakeRunner{}, RunningPods: fakeRunning{}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/exec/default/web/app?command=ls&output=1", "/run/default/web/app?cmd=ls", "/runningpods/", "/portForward/default/web?port=80"} {
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, nil))
		if w.Code != http.StatusNotFound && w.Code != http.StatusMethodNotAllowed {
			t.Errorf("read-only %s: %d, want 404", path, w.Code)
		}
	}
}

// The local API listens on a unix socket only its owner may use, replaces a socket a killed
// nodelet left, and serves the streams and /run (which the read-only API does not).
func TestLocalSocketAPI(t *testing.T) {
	e := newEnv(t)
	dir, err := os.MkdirTemp("", "sock") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "nodelet.sock")
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close() // the socket file stays, as after a SIGKILL
	srv, err := New(Config{Address: UnixPrefix + path, Clock: e.clock},
		Deps{Pods: e.pods, Logs: e.logs, Streams: &Streams{Targets: fakeTargets{}, Runner: fakeRunner{}, RunningPods: fakeRunning{}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	var resp *http.Response
	for i := 0; ; i++ {
		if resp, err = client.Post("http://nodelet/run/default/web/app?cmd=echo+hi", "", nil); err == nil {
			break
		}
		if i == 100 {
			t.Fatalf("local API not reachable: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("POST /run over the socket: %d %s", resp.StatusCode, body)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode: %v %v, want 0600", fi.Mode(), err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
