package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"k8s.io/utils/clock"
)

// namedService is the gRPC health service name that tracks the health state
// besides the server-wide "".
const namedService = "nodelet.test"

// redirectAway is where /redirect-away points: another host, nothing listening.
const redirectAway = "http://127.0.0.2:1/"

func newLogger(w io.Writer) *log.Logger {
	return log.New(w, "", log.LstdFlags|log.Lmicroseconds|log.LUTC)
}

// server holds the health state and applies it to the three kinds of checks.
type server struct {
	cfg    config
	log    *log.Logger
	clock  clock.WithDelayedExecution // runs the start-delay and fail-after timers
	health *health.Server

	mu       sync.Mutex
	starting bool         // within --start-delay
	failing  bool         // /fail or --fail-after, until /recover
	unready  bool         // /unready, until /ready-on
	tcpAddr  string       // the TCP address once resolved ("" without a TCP listener)
	tcpLn    net.Listener // open while healthy
	stopped  bool         // run returned: the TCP listener stays closed
}

func newServer(c config, logger *log.Logger, clk clock.WithDelayedExecution) *server {
	s := &server{cfg: c, log: logger, clock: clk, health: health.NewServer(), starting: c.startDelay > 0}
	s.mu.Lock()
	s.applyLocked()
	s.mu.Unlock()
	return s
}

// healthyLocked: what /healthz, gRPC and TCP report.
func (s *server) healthyLocked() bool { return !s.starting && !s.failing }

func (s *server) healthy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.healthyLocked()
}

func (s *server) ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.unready
}

// stateLocked describes the state on one line.
func (s *server) stateLocked() string {
	return fmt.Sprintf("healthy=%t starting=%t failing=%t ready=%t", s.healthyLocked(), s.starting, s.failing, !s.unready)
}

// update changes the state with f and applies the result; why is logged when
// the state changes.
func (s *server) update(why string, f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	before := s.stateLocked()
	f()
	if after := s.stateLocked(); after != before {
		s.log.Printf("state %s (%s)", after, why)
	}
	s.applyLocked()
}

func (s *server) setFailing(failing bool, why string) {
	s.update(why, func() { s.failing = failing })
}

func (s *server) setReady(ready bool, why string) {
	s.update(why, func() { s.unready = !ready })
}

func (s *server) startupDone() {
	s.update("start delay over", func() { s.starting = false })
}

// applyLocked makes gRPC health and the TCP listener follow the state.
func (s *server) applyLocked() {
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if s.healthyLocked() {
		st = healthpb.HealthCheckResponse_SERVING
	}
	s.health.SetServingStatus("", st)
	s.health.SetServingStatus(namedService, st)
	if s.tcpAddr == "" {
		return
	}
	switch open := s.healthyLocked() && !s.stopped; {
	case open && s.tcpLn == nil:
		ln, err := net.Listen("tcp", s.tcpAddr)
		if err != nil {
			s.log.Printf("tcp: cannot reopen %s: %v", s.tcpAddr, err)
			return
		}
		s.tcpLn = ln
		go s.acceptTCP(ln)
		s.log.Printf("tcp: listening on %s", ln.Addr())
	case !open && s.tcpLn != nil:
		_ = s.tcpLn.Close()
		s.tcpLn = nil
		s.log.Printf("tcp: closed %s", s.tcpAddr)
	}
}

// acceptTCP accepts connections and closes them, until ln is closed.
func (s *server) acceptTCP(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.log.Printf("tcp: accept on %s: %v", ln.Addr(), err)
			}
			return
		}
		s.log.Printf("tcp accept from %s", c.RemoteAddr())
		_ = c.Close()
	}
}

// listenTCP opens the TCP listener (so that a bad address fails at start)
// and keeps it open only while healthy; it returns the bound address.
func (s *server) listenTCP() (string, error) {
	ln, err := net.Listen("tcp", s.cfg.tcpAddr)
	if err != nil {
		return "", fmt.Errorf("tcp: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tcpAddr = ln.Addr().String()
	if s.healthyLocked() && !s.stopped {
		s.tcpLn = ln
		go s.acceptTCP(ln)
	} else {
		_ = ln.Close()
	}
	return s.tcpAddr, nil
}

// run listens on the configured addresses and serves until ctx ends or a
// server fails. The start-delay and fail-after timers start here.
func (s *server) run(ctx context.Context) error {
	var httpLn, grpcLn net.Listener
	closeAll := func() {
		for _, ln := range []net.Listener{httpLn, grpcLn} {
			if ln != nil {
				_ = ln.Close()
			}
		}
	}
	var err error
	if s.cfg.httpAddr != "" {
		if httpLn, err = net.Listen("tcp", s.cfg.httpAddr); err != nil {
			return fmt.Errorf("http: %w", err)
		}
	}
	if s.cfg.grpcAddr != "" {
		if grpcLn, err = net.Listen("tcp", s.cfg.grpcAddr); err != nil {
			closeAll()
			return fmt.Errorf("grpc: %w", err)
		}
	}
	tcpAddr := ""
	if s.cfg.tcpAddr != "" {
		if tcpAddr, err = s.listenTCP(); err != nil {
			closeAll()
			return err
		}
	}
	defer s.update("stopping", func() { s.stopped = true })

	if s.cfg.startDelay > 0 {
		t := s.clock.AfterFunc(s.cfg.startDelay, s.startupDone)
		defer t.Stop()
	}
	if s.cfg.failAfter > 0 {
		t := s.clock.AfterFunc(s.cfg.failAfter, func() { s.setFailing(true, "fail-after") })
		defer t.Stop()
	}

	errc := make(chan error, 2)
	var stops []func()
	if httpLn != nil {
		hs := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: s.log}
		stops = append(stops, func() { _ = hs.Close() })
		go func() { errc <- fmt.Errorf("http: %w", hs.Serve(httpLn)) }()
	}
	if grpcLn != nil {
		gs := s.grpcServer()
		stops = append(stops, gs.Stop)
		go func() { errc <- fmt.Errorf("grpc: %w", gs.Serve(grpcLn)) }()
	}
	s.mu.Lock()
	state := s.stateLocked()
	s.mu.Unlock()
	s.log.Printf("testserver listening http=%s grpc=%s tcp=%s start-delay=%s fail-after=%s prestop-file=%q; %s",
		addrOf(httpLn), addrOf(grpcLn), tcpAddr, s.cfg.startDelay, s.cfg.failAfter, s.cfg.prestopFile, state)

	select {
	case <-ctx.Done():
		err = ctx.Err()
	case err = <-errc:
	}
	for _, stop := range stops {
		stop()
	}
	return err
}

func addrOf(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	return ln.Addr().String()
}

// onSignal records a termination signal in the prestop file, if any.
func (s *server) onSignal(sig os.Signal) {
	name := sig.String()
	if ss, ok := sig.(syscall.Signal); ok {
		switch ss {
		case syscall.SIGTERM:
			name = "sigterm"
		case syscall.SIGINT:
			name = "sigint"
		}
	}
	s.log.Printf("received %s, exiting", name)
	if s.cfg.prestopFile == "" {
		return
	}
	f, err := os.OpenFile(s.cfg.prestopFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = f.WriteString(name + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		s.log.Printf("writing %s: %v", s.cfg.prestopFile, err)
	}
}

// ---------------------------------------------------------------- HTTP

func text(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, body+"\n")
}

const index = `nodelet testserver
GET /healthz          200 when healthy, 500 when failing or starting
GET /fail, /recover   fail or pass every liveness check (HTTP, gRPC, TCP)
GET /ready            200 or 500 from the readiness flag
GET /unready, /ready-on
GET /redirect-local   302 to /healthz
GET /redirect-away    302 to ` + redirectAway + `
GET /slow?d=3s        answer after d
GET /state`

func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) { text(w, http.StatusOK, index) })
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		healthy, starting := s.healthyLocked(), s.starting
		s.mu.Unlock()
		switch {
		case healthy:
			text(w, http.StatusOK, "ok")
		case starting:
			text(w, http.StatusInternalServerError, "starting")
		default:
			text(w, http.StatusInternalServerError, "failing")
		}
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		s.setFailing(true, r.URL.Path)
		text(w, http.StatusOK, "failing")
	})
	mux.HandleFunc("/recover", func(w http.ResponseWriter, r *http.Request) {
		s.setFailing(false, r.URL.Path)
		text(w, http.StatusOK, "recovered")
	})
	mux.HandleFunc("/ready", func(w http.ResponseWriter, r *http.Request) {
		if s.ready() {
			text(w, http.StatusOK, "ready")
		} else {
			text(w, http.StatusInternalServerError, "unready")
		}
	})
	mux.HandleFunc("/unready", func(w http.ResponseWriter, r *http.Request) {
		s.setReady(false, r.URL.Path)
		text(w, http.StatusOK, "unready")
	})
	mux.HandleFunc("/ready-on", func(w http.ResponseWriter, r *http.Request) {
		s.setReady(true, r.URL.Path)
		text(w, http.StatusOK, "ready")
	})
	mux.HandleFunc("/redirect-local", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/healthz", http.StatusFound)
	})
	mux.HandleFunc("/redirect-away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, redirectAway, http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		d := time.Second
		if v := r.URL.Query().Get("d"); v != "" {
			var err error
			if d, err = parseDuration(v); err != nil {
				text(w, http.StatusBadRequest, err.Error())
				return
			}
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			text(w, http.StatusOK, "slept "+d.String())
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/state", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		st := s.stateLocked()
		s.mu.Unlock()
		text(w, http.StatusOK, st)
	})
	return s.logHTTP(mux)
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// logHTTP logs every request on one line once it is answered.
func (s *server) logHTTP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		code := fmt.Sprint(rec.code)
		if rec.code == 0 {
			code = "-" // client gone before an answer (e.g. /slow)
		}
		s.log.Printf("http %s %s %s from %s in %s ua=%q", r.Method, r.URL.RequestURI(), code,
			r.RemoteAddr, time.Since(start).Round(time.Microsecond), r.UserAgent())
	})
}

// ---------------------------------------------------------------- gRPC

func (s *server) grpcServer() *grpc.Server {
	g := grpc.NewServer(grpc.ChainUnaryInterceptor(s.logUnary), grpc.ChainStreamInterceptor(s.logStream))
	healthpb.RegisterHealthServer(g, s.health)
	return g
}

func peerAddr(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return "?"
}

// logUnary logs every unary call (health Check) on one line.
func (s *server) logUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := h(ctx, req)
	var b strings.Builder
	fmt.Fprintf(&b, "grpc %s", info.FullMethod)
	if r, ok := req.(*healthpb.HealthCheckRequest); ok {
		fmt.Fprintf(&b, " service=%q", r.GetService())
	}
	if r, ok := resp.(*healthpb.HealthCheckResponse); ok && err == nil {
		fmt.Fprintf(&b, " %s", r.GetStatus())
	} else {
		fmt.Fprintf(&b, " %s", status.Code(err))
	}
	s.log.Printf("%s from %s in %s", b.String(), peerAddr(ctx), time.Since(start).Round(time.Microsecond))
	return resp, err
}

// logStream logs every streaming call (health Watch) on one line when it ends.
func (s *server) logStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	start := time.Now()
	err := h(srv, ss)
	s.log.Printf("grpc %s (stream) %s from %s in %s", info.FullMethod, status.Code(err),
		peerAddr(ss.Context()), time.Since(start).Round(time.Microsecond))
	return err
}
