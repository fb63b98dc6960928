// Command testserver is a small static server for nodelet's probe and hook
// tests. It is packaged as the test image docker.io/nodelet/testserver:1.0 by
// hack/testimages (with busybox's sh, cat, touch, sleep, echo and wget).
//
// It serves HTTP, gRPC health (grpc.health.v1.Health) and a plain TCP port,
// and can be told to fail:
//
//	GET /healthz          200 "ok" when healthy, 500 when failing or still starting
//	GET /fail, /recover   make every liveness check fail or pass again: /healthz, gRPC
//	                      (NOT_SERVING for "" and "nodelet.test") and the TCP port
//	                      (closed while failing, reopened on the same address)
//	GET /ready            200 "ready" or 500, from a readiness flag of its own
//	GET /unready, /ready-on  clear or set that flag (liveness is not affected)
//	GET /redirect-local   302 to /healthz
//	GET /redirect-away    302 to http://127.0.0.2:1/
//	GET /slow?d=3s        answer 200 after d (default 1s)
//	GET /state            one line: healthy, starting, failing, ready
//
// Flags (each with an environment variable as its default; "" disables a listener):
//
//	--http ADDR           HTTP_ADDR     (default ":8080")
//	--grpc ADDR           GRPC_ADDR     (default ":9090")
//	--tcp ADDR            TCP_ADDR      (default ":7070"; accepts connections and closes them)
//	--start-delay D       START_DELAY   every liveness check fails until D after start
//	--fail-after D        FAIL_AFTER    fail (as /fail) D after start; /recover undoes it
//	--prestop-file PATH   PRESTOP_FILE  on SIGTERM, append the line "sigterm" to PATH
//
// Durations are Go durations ("20s") or whole seconds ("20"). Every request
// is logged on one line to stdout. SIGTERM and SIGINT exit 0 at once.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/utils/clock"
)

// config is what the flags and the environment set.
type config struct {
	httpAddr    string
	grpcAddr    string
	tcpAddr     string
	startDelay  time.Duration
	failAfter   time.Duration
	prestopFile string
}

// duration is a flag.Value taking a Go duration or whole seconds.
type duration struct{ d *time.Duration }

func (v duration) String() string {
	if v.d == nil {
		return "0s"
	}
	return v.d.String()
}

func (v duration) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	var d time.Duration
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		d = time.Duration(n) * time.Second
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, fmt.Errorf("invalid duration %q (want e.g. 20s or 20)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("invalid duration %q: negative", s)
	}
	return d, nil
}

// parseConfig reads args (without the program name) over defaults taken from
// the environment through lookupEnv (os.LookupEnv); a variable set to ""
// counts, so HTTP_ADDR= disables the HTTP listener.
func parseConfig(args []string, lookupEnv func(string) (string, bool), errOut io.Writer) (config, error) {
	env := func(name, def string) string {
		if v, ok := lookupEnv(name); ok {
			return v
		}
		return def
	}
	var c config
	fs := flag.NewFlagSet("testserver", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.StringVar(&c.httpAddr, "http", env("HTTP_ADDR", ":8080"), "HTTP listen address, \"\" for none (env HTTP_ADDR)")
	fs.StringVar(&c.grpcAddr, "grpc", env("GRPC_ADDR", ":9090"), "gRPC health listen address, \"\" for none (env GRPC_ADDR)")
	fs.StringVar(&c.tcpAddr, "tcp", env("TCP_ADDR", ":7070"), "plain TCP listen address, \"\" for none (env TCP_ADDR)")
	fs.StringVar(&c.prestopFile, "prestop-file", env("PRESTOP_FILE", ""), "on SIGTERM, append \"sigterm\" to this file (env PRESTOP_FILE)")
	for _, d := range []struct {
		flag, env string
		to        *time.Duration
		usage     string
	}{
		{"start-delay", "START_DELAY", &c.startDelay, "liveness checks fail until this long after start (env START_DELAY)"},
		{"fail-after", "FAIL_AFTER", &c.failAfter, "fail as /fail this long after start, 0 for never (env FAIL_AFTER)"},
	} {
		if err := (duration{d.to}).Set(env(d.env, "")); err != nil {
			return c, fmt.Errorf("%s: %w", d.env, err)
		}
		fs.Var(duration{d.to}, d.flag, d.usage)
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	return c, nil
}

func main() {
	c, err := parseConfig(os.Args[1:], os.LookupEnv, os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(2)
	}
	logger := newLogger(os.Stdout)

	// PID 1 in a container ignores signals it does not handle: handle them.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)

	s := newServer(c, logger, clock.RealClock{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- s.run(ctx) }()
	select {
	case sig := <-sigs:
		s.onSignal(sig)
		os.Exit(0)
	case err := <-errc:
		logger.Printf("exiting: %v", err)
		os.Exit(1)
	}
}
