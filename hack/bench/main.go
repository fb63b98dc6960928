package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nodelet/nodelet/internal/cri"
	"github.com/nodelet/nodelet/internal/testharness"
)

// options are the command's flags.
type options struct {
	pods    []int
	runs    int
	out     string
	timeout time.Duration // per phase: pods ready, pods gone
	maxWait time.Duration // for other agents to exit before a run
	retries int           // attempts of a run interrupted by another agent
	kubelet bool          // also measure the upstream kubelet
	scale   scaleSettings // the scale session; pods 0: none
	profile string        // with a directory: profile nodelet's scale session into it, no table
	// nodeletArgs are added to nodelet's command line (e.g. -v=4 for a timeline); keepLogs, a
	// directory the agents' logs are copied to at the end of each run.
	nodeletArgs []string
	keepLogs    string
}

func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	pods := fs.String("pods", "1,30", "comma-separated pod counts to measure")
	fs.IntVar(&o.runs, "runs", 3, "runs per pod count")
	fs.StringVar(&o.out, "out", "", "Markdown file to write the results to (stdout only when empty)")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "limit of each wait: all pods ready, all pods gone")
	fs.DurationVar(&o.maxWait, "max-wait", 30*time.Minute, "limit of each wait for other nodelet and kubelet processes to exit")
	nodeletArgs := fs.String("nodelet-args", "", "space-separated arguments added to nodelet's command line, e.g. -v=4 (the figures then include the extra logging)")
	fs.StringVar(&o.keepLogs, "keep-logs", "", "directory to copy each run's agent log into, named after the node")
	fs.IntVar(&o.retries, "retries", 3, "attempts of a run another nodelet or kubelet interrupts")
	fs.BoolVar(&o.kubelet, "kubelet", true, "also measure the upstream kubelet "+kubeletVersion+" (hack/cluster.sh build builds it once)")
	fs.IntVar(&o.scale.pods, "scale", 100, "pods of the scale session (burst, steady state, restart, churn); 0 skips it")
	fs.IntVar(&o.scale.latencyPods, "latency-pods", 20, "pods whose container the scale session kills to measure the status latency; 0 skips it")
	fs.DurationVar(&o.scale.steady, "steady", time.Minute, "the scale session's steady-state window")
	fs.Float64Var(&o.scale.churnRate, "churn-rate", 5, "pods a second the scale session creates, then deletes; 0 skips the churn")
	fs.StringVar(&o.profile, "profile", "", "profile one scale session of nodelet into this directory (CPU of the burst and the steady state, heap after the churn and the steady state) instead of measuring")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	o.nodeletArgs = strings.Fields(*nodeletArgs)
	for _, s := range strings.Split(*pods, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return o, fmt.Errorf("--pods: %q is not a positive pod count", s)
		}
		o.pods = append(o.pods, n)
	}
	if o.scale.pods < 0 || o.scale.latencyPods < 0 || o.scale.churnRate < 0 || o.scale.steady <= 0 {
		return o, errors.New("--scale, --latency-pods and --churn-rate must not be negative, --steady must be positive")
	}
	if o.profile != "" && o.scale.pods == 0 {
		return o, errors.New("--profile profiles the scale session: --scale must not be 0")
	}
	if o.runs < 1 || o.retries < 1 {
		return o, errors.New("--runs and --retries must be at least 1")
	}
	return o, nil
}

func main() {
	opts, err := parseOptions(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(2)
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "bench: must run as root (the test environment runs containerd, mounts and a bridge)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	command := strings.Join(append([]string{"go run ./hack/bench"}, os.Args[1:]...), " ")
	if err := run(ctx, opts, command); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		stop()
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// bench is the state shared by the runs.
type bench struct {
	opts       options
	root       string // the repository
	tmp        string
	bin        string // nodelet
	kubeletBin string // the upstream kubelet, with --kubelet
	endpoint   string
	cri        *cri.Client
	hz         float64

	prof      *profiler // with --profile
	unsettled []string  // the runs that started on a machine that had not become idle

	waits         []*waitRecord
	interruptions []string
	leftCgroups   int // pods whose empty pod cgroup nodelet left behind
	leakedShims   int // shims containerd left running after aborted runs
	nodeletPods   int // pods nodelet ran, in every run
}

// notes are the findings the report lists after the tables.
func (b *bench) notes() []string {
	var out []string
	if len(b.unsettled) > 0 {
		out = append(out, fmt.Sprintf("the machine was not idle (%.0f%% of its CPU time over %d s) after %v before: %s",
			100*settleIdle, settleSteps, settleLimit, strings.Join(b.unsettled, "; ")))
	}
	if b.leftCgroups > 0 {
		out = append(out, fmt.Sprintf("nodelet left the empty pod-level cgroup (`/kubepods/besteffort/pod<uid>`) of %d of the %d pods "+
			"it ran after removing them; the bench removed them", b.leftCgroups, b.nodeletPods))
	}
	if b.leakedShims > 0 {
		out = append(out, fmt.Sprintf("containerd left %d shims running after aborted runs (RunPodSandbox or StartContainer "+
			"cancelled mid-way); the bench stopped them", b.leakedShims))
	}
	return out
}

func run(ctx context.Context, opts options, command string) (err error) {
	root, err := testharness.RepoRoot()
	if err != nil {
		return err
	}
	if err := testenvUp(ctx, root); err != nil {
		return err
	}
	b := &bench{opts: opts, root: root, endpoint: testharness.TestenvEndpoint(), hz: clockTicks()}
	if b.tmp, err = os.MkdirTemp("", "nodelet-bench-"); err != nil {
		return fmt.Errorf("create a temporary directory: %w", err)
	}
	defer func() {
		// RemoveAll would descend into a mount point: a run that could not unmount keeps its files.
		if m := testharness.MountsUnder(b.tmp); len(m) > 0 {
			err = errors.Join(err, fmt.Errorf("mounts remain below %s, so it is kept: %v", b.tmp, m))
		} else if rerr := os.RemoveAll(b.tmp); rerr != nil {
			err = errors.Join(err, fmt.Errorf("remove %s: %w", b.tmp, rerr))
		}
	}()
	if b.bin, err = buildNodelet(ctx, root, b.tmp); err != nil {
		return err
	}
	if opts.kubelet {
		if b.kubeletBin, err = kubeletBinary(ctx, root); err != nil {
			return err
		}
	}
	if b.cri, err = cri.Dial(ctx, b.endpoint, 10*time.Second); err != nil {
		return fmt.Errorf("connect to the test environment's runtime: %w", err)
	}
	defer func() { _ = b.cri.Close() }() // b.cri may be replaced by ensureRuntime
	if err := ensureImage(ctx, b.cri); err != nil {
		return err
	}
	if opts.profile != "" {
		return b.profileRun(ctx)
	}
	rep := report{command: command, date: time.Now().UTC(), machine: describeMachine(root, b.cri), runs: opts.runs,
		loadStart: loadAverage()}
	if opts.kubelet {
		rep.machine.kubelet = fmt.Sprintf("%s, `%s`", binaryVersion(b.kubeletBin), b.kubeletBin)
	}
	kinds := []agentKind{kindNodelet}
	if opts.kubelet {
		kinds = append(kinds, kindKubelet)
	}
	for _, pods := range opts.pods {
		r := row{pods: pods}
		for i := 1; i <= opts.runs; i++ {
			for _, kind := range kinds {
				what := fmt.Sprintf("%s run %d/%d with %d pods", kind, i, opts.runs, pods)
				var ar agentResult
				if err := b.alone(ctx, what, func(ctx context.Context, g *guard) (err error) {
					ar, err = b.agentRun(ctx, g, kind, pods)
					return err
				}); err != nil {
					return err
				}
				logf("%s: all Running after %.2f s, %.2f CPU s, peak RSS %.1f MiB, teardown %.2f s",
					what, ar.ready.Seconds(), ar.cpu, mib(ar.mem.peakKiB), ar.teardown.Seconds())
				if kind == kindKubelet {
					r.kubelet = append(r.kubelet, ar)
				} else {
					r.nodelet = append(r.nodelet, ar)
				}
			}
			what := fmt.Sprintf("raw CRI run %d/%d with %d pods", i, opts.runs, pods)
			var rr rawResult
			if err := b.alone(ctx, what, func(ctx context.Context, _ *guard) (err error) {
				rr, err = b.rawRun(ctx, pods)
				return err
			}); err != nil {
				return err
			}
			logf("%s: created in %.2f s, torn down in %.2f s", what, rr.create.Seconds(), rr.teardown.Seconds())
			r.raw = append(r.raw, rr)
		}
		rep.rows = append(rep.rows, r)
	}
	if opts.scale.pods > 0 {
		for i := 1; i <= opts.runs; i++ {
			for _, kind := range kinds {
				what := fmt.Sprintf("%s scale session %d/%d with %d pods", kind, i, opts.runs, opts.scale.pods)
				var sr scaleResult
				if err := b.alone(ctx, what, func(ctx context.Context, g *guard) (err error) {
					sr, err = b.scaleRun(ctx, g, kind, opts.scale)
					return err
				}); err != nil {
					return err
				}
				logf("%s: %s", what, sr.summary())
				rep.scale.add(kind, sr)
			}
		}
		rep.scaleSettings = opts.scale
	}
	rep.loadEnd = loadAverage()
	rep.waits, rep.interruptions, rep.notes = b.waits, b.interruptions, b.notes()
	for _, n := range rep.notes {
		logf("note: %s", n)
	}
	fmt.Print(rep.resultsSection())
	if opts.out != "" {
		if err := os.WriteFile(opts.out, []byte(rep.markdown()+keepHandWritten(opts.out)), 0o644); err != nil {
			return fmt.Errorf("write the results: %w", err)
		}
		logf("results written to %s", opts.out)
	}
	return nil
}

// alone runs fn once no other agent runs, under a guard; a run another agent interrupts (fn
// has cleaned up after itself by then) is repeated, up to opts.retries attempts.
func (b *bench) alone(ctx context.Context, what string, fn func(context.Context, *guard) error) error {
	for attempt := 1; ; attempt++ {
		w, err := waitAlone(ctx, b.endpoint, b.opts.maxWait, what)
		if err != nil {
			return err
		}
		if w != nil {
			b.waits = append(b.waits, w)
		}
		if err := b.ensureRuntime(ctx); err != nil {
			return fmt.Errorf("before the %s: %w", what, err)
		}
		waited, settled, err := settle(ctx)
		if err != nil {
			return fmt.Errorf("before the %s: wait for the machine to be idle: %w", what, err)
		}
		if !settled {
			logf("the machine was still busy %v before the %s; starting it anyway", waited.Round(time.Second), what)
			b.unsettled = append(b.unsettled, what)
		}
		g := startGuard(ctx, b.endpoint)
		err = fn(g.ctx, g)
		others := g.stop()
		if others == nil {
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			return nil
		}
		logf("%s interrupted by another agent starting (%v); aborted it, removed what it created and repeating it "+
			"(attempt %d of %d; the run's error: %v)", what, others, attempt, b.opts.retries, err)
		var names []string
		for _, p := range others {
			names = append(names, p.short())
		}
		b.interruptions = append(b.interruptions, fmt.Sprintf("The %s was interrupted by another agent starting (%s): "+
			"the bench aborted it at once, removed what it had created and repeated it", what, strings.Join(names, "; ")))
		if attempt == b.opts.retries {
			return fmt.Errorf("%s: interrupted by other agents %d times", what, attempt)
		}
	}
}

func mib(kib uint64) float64 { return float64(kib) / 1024 }

// profileRun runs one scale session of nodelet with the profiler (--profile).
func (b *bench) profileRun(ctx context.Context) error {
	if err := os.MkdirAll(b.opts.profile, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", b.opts.profile, err)
	}
	b.prof = &profiler{dir: b.opts.profile}
	what := fmt.Sprintf("nodelet scale session with %d pods, profiled", b.opts.scale.pods)
	var sr scaleResult
	if err := b.alone(ctx, what, func(ctx context.Context, g *guard) (err error) {
		sr, err = b.scaleRun(ctx, g, kindNodelet, b.opts.scale)
		return err
	}); err != nil {
		return err
	}
	logf("%s: %s (perturbed by the profiling: not a measurement)", what, sr.summary())
	logf("read them with: go tool pprof -top %s/<name>.pprof", b.opts.profile)
	return nil
}
