package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// PodSource gives the desired pods with their latest generated status (the status manager).
// The returned pods are read, never modified.
type PodSource interface {
	Pods() []*v1.Pod
}

// HealthCheck is one named health check (runtime, pleg, syncloop...). Check must be quick.
type HealthCheck interface {
	Name() string
	Check() error
}

// LogLocator tells where a container's CRI logs are:
// <podLogsDir>/<namespace>_<name>_<uid>/<container>/, holding <restartCount>.log files.
type LogLocator interface {
	ContainerLogDir(namespace, podName, container string) (dir string, ok bool)
}

// EventLister lists the events recorded on the node (internal/events.Store): those of a
// namespace and/or a pod (empty strings match all), sorted by lastTimestamp.
type EventLister interface {
	List(namespace, podName string) []v1.Event
}

// Config configures the server.
type Config struct {
	// Address is the listen address, e.g. 127.0.0.1:10255. See doc.go before making it routable.
	Address string
	// Clock drives sinceSeconds and the follow fallback ticker.
	Clock clock.Clock
	// Secure, when set, makes this the kubelet API (port 10250): HTTPS, and every request
	// authenticated and authorized by Secure.Filter; container logs and events are then served
	// on any address. Nil: the read-only API (plain HTTP, no authentication).
	Secure *Secure
	// Profiling serves Go's profiles under /debug/pprof/ (enableProfilingHandler): on the kubelet
	// API, as upstream; on the read-only API only when it is bound to loopback (upstream's
	// read-only port has no profiles; a standalone node has no kubelet API to serve them).
	Profiling bool
}

// UnixPrefix marks a Config.Address that is a unix socket path: the local API, whose file mode
// (0600, its owner root) is its authentication, as containerd's socket; it serves what the
// kubelet API serves (streams included) to the node's administrator, in every mode.
const UnixPrefix = "unix://"

// Secure is the kubelet API's TLS and access control.
type Secure struct {
	CertFile, KeyFile string
	// GetCertificate, when set, serves its certificate instead of the files' (a rotated
	// serving certificate).
	GetCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	// Filter wraps the routes with authentication and authorization (kubeletauth.Filter).
	Filter func(http.Handler) http.Handler
}

// Deps are what the server reads from.
type Deps struct {
	Pods   PodSource
	Checks []HealthCheck
	Logs   LogLocator
	// Events is optional: without it, GET /events is not served.
	Events EventLister
	// Metrics maps the metrics paths (/metrics, /metrics/probes, /metrics/resource) to their
	// handlers; served on both APIs, as upstream's read-only port serves them.
	Metrics map[string]http.Handler
	// Summary serves /stats/summary; optional.
	Summary SummaryProvider
	// Streams serves /exec, /attach, /portForward, /run and /runningpods/: the kubelet API's
	// debugging handlers, never served by the read-only API. Optional.
	Streams *Streams
}

// Streams are what the debugging handlers use.
type Streams struct {
	Targets     Targets
	Streaming   Streaming
	Runner      Runner
	RunningPods RunningPodLister
}

const (
	// readHeaderTimeout bounds a slow client's request headers; there is no write timeout
	// because a followed log streams for as long as the client wants.
	readHeaderTimeout = 10 * time.Second
	// shutdownTimeout bounds the graceful shutdown when Run's context ends.
	shutdownTimeout = 5 * time.Second
)

// Server is the read-only API.
type Server struct {
	address string
	handler http.Handler
	what    string      // for logs: "the read-only API" or "the kubelet API"
	tls     *tls.Config // nil: plain HTTP
}

// New checks cfg and deps and builds the routes.
func New(cfg Config, deps Deps) (*Server, error) {
	switch {
	case cfg.Address == "":
		return nil, errors.New("server: Config.Address is required")
	case cfg.Clock == nil:
		return nil, errors.New("server: Config.Clock is required")
	case deps.Pods == nil:
		return nil, errors.New("server: Deps.Pods is required")
	case deps.Logs == nil:
		return nil, errors.New("server: Deps.Logs is required")
	}
	checks := append([]HealthCheck{pingCheck{}}, deps.Checks...)
	seen := map[string]bool{}
	for i, c := range checks {
		if c == nil {
			return nil, fmt.Errorf("server: Deps.Checks[%d] is nil", i-1)
		}
		name := c.Name()
		if name == "" || strings.Contains(name, "/") {
			return nil, fmt.Errorf("server: health check name %q must be non-empty and without '/'", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("server: duplicate health check %q", name)
		}
		seen[name] = true
	}

	mux := http.NewServeMux()
	mux.Handle("GET /pods", &podsHandler{pods: deps.Pods})
	hz := &healthzHandler{checks: checks}
	mux.HandleFunc("GET /healthz", hz.all)
	mux.HandleFunc("GET /healthz/{name}", hz.one)
	local := strings.HasPrefix(cfg.Address, UnixPrefix)
	loopback := isLoopback(cfg.Address) || cfg.Secure != nil || local
	mux.Handle("GET /containerLogs/{namespace}/{pod}/{container}",
		loopbackOnly(loopback, cfg.Address, "container logs", &containerLogsHandler{pods: deps.Pods, logs: deps.Logs, clock: cfg.Clock}))
	if deps.Events != nil {
		mux.Handle("GET /events", loopbackOnly(loopback, cfg.Address, "events", &eventsHandler{events: deps.Events}))
	}
	for path, h := range deps.Metrics {
		mux.Handle("GET "+path, h)
	}
	if deps.Summary != nil {
		mux.Handle("GET /stats/summary", &summaryHandler{summary: deps.Summary})
	}
	if (cfg.Secure != nil || local) && deps.Streams != nil {
		installStreams(mux, deps.Streams)
	}
	if cfg.Profiling && loopback {
		installProfiling(mux)
	}
	if local {
		return &Server{address: cfg.Address, handler: mux, what: "the local API"}, nil
	}
	if cfg.Secure == nil {
		return &Server{address: cfg.Address, handler: mux, what: "the read-only API"}, nil
	}
	if cfg.Secure.Filter == nil || (cfg.Secure.GetCertificate == nil && (cfg.Secure.CertFile == "" || cfg.Secure.KeyFile == "")) {
		return nil, errors.New("server: Secure needs CertFile and KeyFile or GetCertificate, and Filter")
	}
	// Client certificates are verified by the authenticator against clientCAFile.
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ClientAuth: tls.RequestClientCert, GetCertificate: cfg.Secure.GetCertificate}
	if tc.GetCertificate == nil {
		cert, err := tls.LoadX509KeyPair(cfg.Secure.CertFile, cfg.Secure.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("server: load the serving certificate %s: %w", cfg.Secure.CertFile, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return &Server{address: cfg.Address, handler: cfg.Secure.Filter(mux), what: "the kubelet API", tls: tc}, nil
}

// loopbackOnly returns h when the server is bound to loopback; otherwise, after logging why, a
// handler answering 403, for the routes that expose container output (see doc.go).
func loopbackOnly(loopback bool, address, what string, h http.Handler) http.Handler {
	if loopback {
		return h
	}
	klog.InfoS("The read-only API is not bound to loopback: "+what+" are not served", "address", address)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpError(w, r, http.StatusForbidden, what+" are only served when the read-only API is bound to a loopback address")
	})
}

// isLoopback tells whether a listen address only accepts local connections.
func isLoopback(address string) bool {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Handler returns the routes, for tests with httptest.
func (s *Server) Handler() http.Handler {
	return s.handler
}

// Run listens on Config.Address and serves until ctx ends, then shuts down gracefully: it stops
// accepting, ends the requests in flight (their contexts derive from ctx, so followed logs end
// too) and waits for them for at most 5 s. A listen or serve failure is returned.
func (s *Server) Run(ctx context.Context) error {
	ln, err := s.listen(ctx)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Serve is Run on a listener the caller opened (tests: the server accepts as soon as Serve is
// called); it closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	logger := klog.FromContext(ctx).WithName("server")
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: readHeaderTimeout,
		BaseContext:       func(net.Listener) context.Context { return klog.NewContext(ctx, logger) },
		TLSConfig:         s.tls.Clone(), // nil for plain HTTP; ServeTLS adds h2 to NextProtos
	}
	logger.Info("Serving "+s.what, "address", ln.Addr().String())
	served := make(chan error, 1)
	go func() { served <- s.serve(srv, ln) }()

	select {
	case err := <-served:
		return fmt.Errorf("server: serve on %s: %w", s.address, err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		logger.Error(err, "Graceful shutdown of "+s.what+" timed out; closing the remaining connections")
		_ = srv.Close()
	}
	<-served // http.ErrServerClosed
	logger.Info("Stopped serving "+s.what, "address", ln.Addr().String())
	return nil
}

// listen opens the TCP address, or the unix socket (a stale one removed, then made 0600).
func (s *Server) listen(ctx context.Context) (net.Listener, error) {
	var lc net.ListenConfig
	path, local := strings.CutPrefix(s.address, UnixPrefix)
	if !local {
		ln, err := lc.Listen(ctx, "tcp", s.address)
		if err != nil {
			return nil, fmt.Errorf("server: listen on %s: %w", s.address, err)
		}
		return ln, nil
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		_ = os.Remove(path) // left by a nodelet that was killed
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("server: socket directory: %w", err)
	}
	ln, err := lc.Listen(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("server: listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("server: restrict %s to its owner: %w", path, err)
	}
	return ln, nil
}

// serve serves plain HTTP, or HTTPS with HTTP/2 offered next to HTTP/1.1 as upstream's
// ListenAndServeTLS does. The API server reads logs over HTTP/2 when the node offers it, and
// must: its WebSocket copy of a log (wsstream) drops the bytes of a read that also returns
// io.EOF, which an HTTP/1.1 body does with its last bytes (after Content-Length, or with the
// terminating chunk); an HTTP/2 body returns them first and io.EOF on the next read.
func (s *Server) serve(srv *http.Server, ln net.Listener) error {
	if s.tls == nil {
		return srv.Serve(ln)
	}
	return srv.ServeTLS(ln, "", "") // the certificate is in srv.TLSConfig
}

// pingCheck always passes, as the kubelet's "ping" check: /healthz/ping tells the server is up.
type pingCheck struct{}

func (pingCheck) Name() string { return "ping" }
func (pingCheck) Check() error { return nil }

// httpError writes a plain-text error, as the kubelet does, and logs it at V(2).
func httpError(w http.ResponseWriter, r *http.Request, code int, msg string) {
	klog.FromContext(r.Context()).V(2).Info("Read-only API request failed", "path", r.URL.Path, "code", code, "reason", msg)
	http.Error(w, msg, code)
}
