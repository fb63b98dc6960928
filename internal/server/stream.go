package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/crilog"
)

// followCheckPeriod is how often a followed log is read even without an fsnotify event, and
// the container's state checked: upstream's logForceCheckPeriod.
const followCheckPeriod = time.Second

// logStream reads one container log file for one request.
type logStream struct {
	logger klog.Logger
	path   string
	f      *os.File
	r      *crilog.Reader
}

// newLogStream takes over f, the open log file at path; close releases it.
func newLogStream(logger klog.Logger, path string, f *os.File) *logStream {
	return &logStream{logger: logger, path: path, f: f, r: crilog.NewReader(f, path, logger)}
}

func (s *logStream) close() { _ = s.f.Close() }

// streamLog writes the log of s to lw as opts ask: the tail, then, with follow, the lines
// written later while running() says the container instance still runs, until ctx ends. It
// returns nil when done (or when limitBytes is reached) and an error when the file cannot be
// read or the client cannot be written to.
func streamLog(ctx context.Context, s *logStream, lw *lineWriter, clk clock.Clock, running func() bool) error {
	err := s.streamLog(ctx, lw, clk, running)
	if errors.Is(err, errLimitReached) {
		return nil
	}
	return err
}

func (s *logStream) streamLog(ctx context.Context, lw *lineWriter, clk clock.Clock, running func() bool) error {
	write := func(l crilog.Line) error {
		if !lw.wanted(l) {
			return nil
		}
		return lw.write(l)
	}
	if lw.opts.tail < 0 {
		if err := s.r.ReadAvailable(write); err != nil {
			return err
		}
		if !lw.opts.follow {
			return s.r.Finish(write)
		}
		return s.follow(ctx, write, clk, running)
	}

	// tailLines: keep the last lines of what is there now, write them, then follow if asked.
	tail := crilog.NewRing(lw.opts.tail)
	keep := func(l crilog.Line) error {
		if lw.wanted(l) {
			tail.Push(l)
		}
		return nil
	}
	if err := s.r.ReadAvailable(keep); err != nil {
		return err
	}
	if !lw.opts.follow {
		if err := s.r.Finish(keep); err != nil {
			return err
		}
	}
	for _, l := range tail.Lines() {
		if err := lw.write(l); err != nil {
			return err
		}
	}
	if !lw.opts.follow {
		return nil
	}
	return s.follow(ctx, write, clk, running)
}

// follow emits new lines as the file grows until the container stops running (then what it
// wrote last is emitted too) or ctx ends.
func (s *logStream) follow(ctx context.Context, emit func(crilog.Line) error, clk clock.Clock, running func() bool) error {
	dir, base := filepath.Split(s.path)
	var events <-chan fsnotify.Event
	var watchErrs <-chan error
	if w, err := fsnotify.NewWatcher(); err != nil {
		s.logger.Info("Cannot watch a followed container log; reading it every second instead", "path", s.path, "err", err)
	} else {
		defer func() { _ = w.Close() }()
		if err := w.Add(dir); err != nil {
			s.logger.Info("Cannot watch a followed container log; reading it every second instead", "path", s.path, "err", err)
		} else {
			events, watchErrs = w.Events, w.Errors
		}
	}
	for {
		if err := s.r.ReadAvailable(emit); err != nil {
			return err
		}
		if !running() {
			// The container exited: read what it wrote between the read above and its exit.
			if err := s.r.ReadAvailable(emit); err != nil {
				return err
			}
			return s.r.Finish(emit)
		}
		timer := clk.NewTimer(followCheckPeriod)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case ev := <-events:
			if ev.Has(fsnotify.Create) && filepath.Base(ev.Name) == base {
				if err := s.reopen(emit); err != nil {
					return err
				}
			}
		case err := <-watchErrs:
			s.logger.V(2).Info("Watch error on a followed container log", "path", s.path, "err", err)
		case <-timer.C():
			// A rotation fsnotify did not report (it happened before the watch was set up,
			// or there is no watch) is found here, within followCheckPeriod.
			if s.replaced() {
				if err := s.reopen(emit); err != nil {
					return err
				}
			}
		}
		timer.Stop()
	}
}

// reopen switches to a file re-created at the path (rotation) after reading the old one out.
func (s *logStream) reopen(emit func(crilog.Line) error) error {
	if err := s.r.ReadAvailable(emit); err != nil {
		return err
	}
	if err := s.r.ReadUnterminated(emit); err != nil {
		return err
	}
	f, err := os.Open(s.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("reopen log file %q: %w", s.path, err)
	}
	if sameFile(s.f, f) {
		_ = f.Close()
		return nil
	}
	s.logger.V(4).Info("Following a re-created container log file", "path", s.path)
	_ = s.f.Close()
	s.f = f
	s.r.Switch(f)
	return nil
}

// replaced reports whether the path now names another file than the one being read.
func (s *logStream) replaced() bool {
	cur, err1 := s.f.Stat()
	now, err2 := os.Stat(s.path)
	return err1 == nil && err2 == nil && !os.SameFile(cur, now)
}

func sameFile(a, b *os.File) bool {
	ai, errA := a.Stat()
	bi, errB := b.Stat()
	return errA == nil && errB == nil && os.SameFile(ai, bi)
}
