package oomwatcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

const (
	// DefaultPath is the kernel log device.
	DefaultPath = "/dev/kmsg"
	// ReasonSystemOOM is upstream's event reason (pkg/kubelet/oom: systemOOMEvent).
	ReasonSystemOOM = "SystemOOM"
	// clockSlack is how much older than the watcher's start a kill may be and still be
	// reported: the kernel log's clock (local_clock) and CLOCK_MONOTONIC may drift apart a
	// little, and a kill just before the start is better reported than lost.
	clockSlack = time.Second
)

// Recorder records node events (internal/events.Store, the agent's recorder).
type Recorder interface {
	NodeEventf(eventType, reason, messageFmt string, args ...any)
}

// Config is the watcher's configuration.
type Config struct {
	// Path is the kernel log device; "" is DefaultPath.
	Path string
}

// Deps are the watcher's collaborators.
type Deps struct {
	Recorder Recorder
	// Clock gives the wall time of the start, to which kernel log times are related.
	Clock clock.PassiveClock
	// Open opens the kernel log; nil is os.Open. When what it returns is an io.Seeker, the
	// watcher seeks to its end.
	Open func(path string) (io.ReadCloser, error)
	// Uptime is the time since boot on the kernel log's clock; nil is CLOCK_MONOTONIC.
	Uptime func() (time.Duration, error)
}

// Watcher reads the kernel log and records a SystemOOM node event for each system OOM kill.
type Watcher struct {
	path string
	deps Deps
}

// New checks the dependencies and returns the watcher; Run starts it.
func New(cfg Config, deps Deps) (*Watcher, error) {
	if deps.Recorder == nil || deps.Clock == nil {
		return nil, errors.New("oomwatcher: Recorder and Clock are required")
	}
	if cfg.Path == "" {
		cfg.Path = DefaultPath
	}
	if deps.Open == nil {
		deps.Open = func(path string) (io.ReadCloser, error) { return os.Open(path) }
	}
	if deps.Uptime == nil {
		deps.Uptime = monotonicUptime
	}
	return &Watcher{path: cfg.Path, deps: deps}, nil
}

// Run reads the kernel log from its end until ctx ends or the log cannot be read any longer.
// A kernel log that cannot be opened is logged once: nodelet runs on without OOM events.
func (w *Watcher) Run(ctx context.Context) {
	const consequence = "system OOM kills will not be reported as SystemOOM node events"
	up, err := w.deps.Uptime()
	if err != nil {
		klog.ErrorS(err, "Cannot read the time since boot; "+consequence)
		return
	}
	start := w.deps.Clock.Now()
	f, err := w.deps.Open(w.path)
	if err != nil {
		klog.ErrorS(err, "Cannot open the kernel log; "+consequence+": run nodelet as root, with the kernel log readable (not in a user namespace with kernel.dmesg_restrict=1)", "path", w.path)
		return
	}
	stop := context.AfterFunc(ctx, func() { _ = f.Close() })
	defer func() {
		if stop() {
			_ = f.Close()
		}
	}()
	if s, ok := f.(io.Seeker); ok {
		if _, err := s.Seek(0, io.SeekEnd); err != nil {
			klog.V(2).InfoS("Cannot seek to the end of the kernel log; reading it from the start, earlier OOM kills are skipped by their time", "path", w.path, "err", err)
		}
	}
	klog.InfoS("Watching the kernel log for system OOM kills", "path", w.path)
	err = w.follow(f, start, start.Add(-up))
	if ctx.Err() != nil {
		return
	}
	klog.ErrorS(err, "Stopped reading the kernel log; "+consequence+" until nodelet restarts", "path", w.path)
}

// follow parses the log until it ends and records the system OOMs at or after start.
func (w *Watcher) follow(r io.Reader, start, bootTime time.Time) error {
	records, parser := newRecordReader(r), NewParser(bootTime)
	for {
		line, err := records.next()
		switch {
		case err == nil:
		case errors.Is(err, syscall.EPIPE):
			klog.V(2).InfoS("Kernel log records were overwritten before nodelet read them; an OOM kill among them is not reported", "path", w.path)
			continue
		case errors.Is(err, io.EOF), errors.Is(err, os.ErrClosed):
			return fmt.Errorf("kernel log ended: %w", err)
		default:
			return fmt.Errorf("read %s: %w", w.path, err)
		}
		rec, err := ParseRecord(line)
		if err != nil {
			klog.V(2).InfoS("Skipping a malformed kernel log record", "record", line, "err", err)
			continue
		}
		ev, done, err := parser.Feed(rec)
		if err != nil {
			klog.ErrorS(err, "Cannot parse a pid in the kernel's OOM report; the OOM event may lack it", "record", line)
		}
		if done && !ev.TimeOfDeath.Before(start.Add(-clockSlack)) {
			w.record(ev)
		}
	}
}

// record is upstream's: a Warning SystemOOM node event for a system OOM only.
func (w *Watcher) record(ev Event) {
	if ev.VictimContainerName != RootCgroup {
		klog.V(3).InfoS("OOM kill in a memory cgroup; not a system OOM", "cgroup", ev.VictimContainerName,
			"taskCgroup", ev.ContainerName, "process", ev.ProcessName, "pid", ev.Pid)
		return
	}
	klog.V(1).InfoS("Got sys oom event", "process", ev.ProcessName, "pid", ev.Pid, "taskCgroup", ev.ContainerName,
		"constraint", ev.Constraint, "timeOfDeath", ev.TimeOfDeath)
	msg := "System OOM encountered"
	if ev.ProcessName != "" && ev.Pid != 0 {
		msg = fmt.Sprintf("%s, victim process: %s, pid: %d", msg, ev.ProcessName, ev.Pid)
	}
	w.deps.Recorder.NodeEventf(v1.EventTypeWarning, ReasonSystemOOM, "%s", msg)
}
