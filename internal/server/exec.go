package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	"k8s.io/apimachinery/pkg/util/proxy"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/streamtranslate"
)

// ErrNotFound is wrapped by Targets' errors when the pod, container or sandbox does not exist
// (or does not run); the server answers 404.
var ErrNotFound = errors.New("not found")

// ContainerTarget is a running container an exec, attach or run goes to.
type ContainerTarget struct {
	// ID is the CRI container ID.
	ID string
	// TTY is the container spec's tty: attach must use the setting the process started with.
	TTY bool
}

// Targets finds the runtime objects of a pod the node runs, as upstream's findContainer: only
// running containers qualify. uid may be empty; when set it must be the pod's.
type Targets interface {
	RunningContainer(ctx context.Context, namespace, pod string, uid types.UID, container string) (ContainerTarget, error)
	// Sandbox returns the pod's newest sandbox, for port forwarding.
	Sandbox(ctx context.Context, namespace, pod string, uid types.UID) (string, error)
}

// Streaming is the CRI runtime's streaming service (internal/cri.Client, cri-api's fake).
type Streaming interface {
	Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error)
	Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error)
	PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error)
}

// Runner runs a command to completion in a container (CRI ExecSync), for /run.
type Runner interface {
	ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (stdout, stderr []byte, exitCode int32, err error)
}

// streamHandlers serves /exec, /attach, /portForward and /run, as upstream's server.go: the
// runtime is asked for a streaming URL and the upgraded connection (SPDY or WebSocket) is
// proxied to it. A WebSocket client speaking v5.channel.k8s.io (kubectl ≥ 1.30 when the API
// server passes WebSockets through) is translated to SPDY toward the runtime, and port-forward
// over WebSockets is tunnelled, with internal/streamtranslate (upstream's translators from
// k8s.io/apiserver, without the package that links client-go's clientset): the runtime's
// streaming server speaks SPDY and the older WebSocket protocols only.
type streamHandlers struct {
	targets   Targets
	streaming Streaming
	runner    Runner
}

// execParams are the path values of /exec, /attach and /run.
func execParams(r *http.Request) (namespace, pod string, uid types.UID, container string) {
	return r.PathValue("namespace"), r.PathValue("pod"), types.UID(r.PathValue("uid")), r.PathValue("container")
}

func (h *streamHandlers) exec(w http.ResponseWriter, r *http.Request) {
	h.remoteCommand(w, r, "exec in", func(ctx context.Context, target ContainerTarget, opts *remotecommandserver.Options) (string, error) {
		resp, err := h.streaming.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: target.ID, Cmd: r.URL.Query()["command"],
			Tty: opts.TTY, Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr})
		return resp.GetUrl(), err
	})
}

func (h *streamHandlers) attach(w http.ResponseWriter, r *http.Request) {
	h.remoteCommand(w, r, "attach to", func(ctx context.Context, target ContainerTarget, opts *remotecommandserver.Options) (string, error) {
		opts.TTY = target.TTY // the process's tty cannot change after it started
		resp, err := h.streaming.Attach(ctx, &runtimeapi.AttachRequest{ContainerId: target.ID,
			Tty: opts.TTY, Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr})
		return resp.GetUrl(), err
	})
}

// remoteCommand is what exec and attach share: parse the stream options, find the running
// container, ask the runtime for a session (session returns its URL) and proxy to it.
func (h *streamHandlers) remoteCommand(w http.ResponseWriter, r *http.Request, verb string,
	session func(context.Context, ContainerTarget, *remotecommandserver.Options) (string, error)) {
	opts, err := remotecommandserver.NewOptions(r)
	if err != nil {
		httpError(w, r, http.StatusBadRequest, err.Error())
		return
	}
	ns, pod, uid, name := execParams(r)
	target, err := h.targets.RunningContainer(r.Context(), ns, pod, uid, name)
	if err != nil {
		targetError(w, r, err)
		return
	}
	sessionURL, err := session(r.Context(), target, opts)
	if err != nil {
		runtimeError(w, r, fmt.Errorf("%s container %s of pod %s/%s: %w", verb, name, ns, pod, err))
		return
	}
	h.proxyRemoteCommand(w, r, sessionURL, *opts)
}

// proxyRemoteCommand proxies an exec or attach session to the runtime's URL.
func (h *streamHandlers) proxyRemoteCommand(w http.ResponseWriter, r *http.Request, rawURL string, opts remotecommandserver.Options) {
	u, err := url.Parse(rawURL)
	if err != nil {
		httpError(w, r, http.StatusInternalServerError, fmt.Sprintf("the runtime returned a bad streaming URL %q: %v", rawURL, err))
		return
	}
	var handler http.Handler = proxy.NewUpgradeAwareHandler(u, nil, false, true, errorResponder{r: r})
	if wsstream.IsWebSocketRequestWithStreamCloseProtocol(r) {
		handler = streamtranslate.NewRemoteCommandHandler(u, streamtranslate.Streams{
			Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr, TTY: opts.TTY})
	}
	handler.ServeHTTP(w, r)
}

func (h *streamHandlers) portForward(w http.ResponseWriter, r *http.Request) {
	tunnel := wsstream.IsWebSocketRequestWithTunnelingProtocol(r)
	var ports []int32
	if !tunnel { // a tunnelled session names its ports in the SPDY streams it opens
		opts, err := portforward.NewV4Options(r)
		if err != nil {
			httpError(w, r, http.StatusBadRequest, err.Error())
			return
		}
		ports = opts.Ports
	}
	ns, pod, uid := r.PathValue("namespace"), r.PathValue("pod"), types.UID(r.PathValue("uid"))
	sandbox, err := h.targets.Sandbox(r.Context(), ns, pod, uid)
	if err != nil {
		targetError(w, r, err)
		return
	}
	resp, err := h.streaming.PortForward(r.Context(), &runtimeapi.PortForwardRequest{PodSandboxId: sandbox, Port: ports})
	if err != nil {
		runtimeError(w, r, fmt.Errorf("port-forward to pod %s/%s: %w", ns, pod, err))
		return
	}
	u, err := url.Parse(resp.GetUrl())
	if err != nil {
		httpError(w, r, http.StatusInternalServerError, fmt.Sprintf("the runtime returned a bad streaming URL %q: %v", resp.GetUrl(), err))
		return
	}
	var handler http.Handler = proxy.NewUpgradeAwareHandler(u, nil, false, true, errorResponder{r: r})
	if tunnel {
		handler = streamtranslate.NewPortForwardTunnelHandler(handler)
	}
	handler.ServeHTTP(w, r)
}

// run serves POST /run: the command (the cmd parameter, split on spaces as upstream does) runs
// to completion and its stdout then stderr are returned; a non-zero exit is a 500.
func (h *streamHandlers) run(w http.ResponseWriter, r *http.Request) {
	ns, pod, uid, name := execParams(r)
	target, err := h.targets.RunningContainer(r.Context(), ns, pod, uid, name)
	if err != nil {
		targetError(w, r, err)
		return
	}
	cmd := strings.Split(r.FormValue("cmd"), " ")
	stdout, stderr, code, err := h.runner.ExecSync(r.Context(), target.ID, cmd, 0)
	if err == nil && code != 0 {
		err = fmt.Errorf("command %q exited with %d: %s", cmd, code, append(stdout, stderr...))
	}
	if err != nil {
		httpError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(stdout, stderr...))
}

func targetError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, ErrNotFound) {
		httpError(w, r, http.StatusNotFound, err.Error())
		return
	}
	httpError(w, r, http.StatusInternalServerError, err.Error())
}

// runtimeError maps a CRI error as k8s.io/cri-streaming's WriteError does.
func runtimeError(w http.ResponseWriter, r *http.Request, err error) {
	switch grpcstatus.Code(errors.Unwrap(err)) {
	case codes.NotFound:
		httpError(w, r, http.StatusNotFound, err.Error())
	case codes.ResourceExhausted:
		// The runtime's streaming server has too many sessions in flight: the client retries.
		w.Header().Set("Retry-After", "1")
		httpError(w, r, http.StatusTooManyRequests, err.Error())
	default:
		httpError(w, r, http.StatusInternalServerError, err.Error())
	}
}

// errorResponder reports a failed proxy connection to the runtime's streaming server.
type errorResponder struct{ r *http.Request }

func (e errorResponder) Error(w http.ResponseWriter, req *http.Request, err error) {
	if !httpstream.IsUpgradeRequest(req) {
		httpError(w, req, http.StatusBadRequest, "this endpoint needs a SPDY or WebSocket upgrade request (use kubectl)")
		return
	}
	klog.FromContext(e.r.Context()).Error(err, "Proxying a stream to the container runtime failed; check that the runtime's streaming server (containerd: stream_server_address) is reachable", "path", req.URL.Path)
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

// installStreams adds the debugging handlers, with and without the pod UID in the path, for
// GET and POST as upstream.
func installStreams(mux *http.ServeMux, s *Streams) {
	h := &streamHandlers{targets: s.Targets, streaming: s.Streaming, runner: s.Runner}
	for _, method := range []string{"GET ", "POST "} {
		mux.HandleFunc(method+"/exec/{namespace}/{pod}/{container}", h.exec)
		mux.HandleFunc(method+"/exec/{namespace}/{pod}/{uid}/{container}", h.exec)
		mux.HandleFunc(method+"/attach/{namespace}/{pod}/{container}", h.attach)
		mux.HandleFunc(method+"/attach/{namespace}/{pod}/{uid}/{container}", h.attach)
		mux.HandleFunc(method+"/portForward/{namespace}/{pod}", h.portForward)
		mux.HandleFunc(method+"/portForward/{namespace}/{pod}/{uid}", h.portForward)
	}
	mux.HandleFunc("POST /run/{namespace}/{pod}/{container}", h.run)
	mux.HandleFunc("POST /run/{namespace}/{pod}/{uid}/{container}", h.run)
	if s.RunningPods != nil {
		mux.Handle("GET /runningpods/", &runningPodsHandler{pods: s.RunningPods})
	}
}
