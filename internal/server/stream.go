package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// followCheckPeriod is how often a followed log is read even without an fsnotify event, and
// the container's state checked: upstream's logForceCheckPeriod.
const followCheckPeriod = time.Second

// logStream reads one container log file for one request.
type logStream struct {
	logger klog.Logger
	path   string
	f      *os.File
	rr     *recordReader
	j      joiner
}

// newLogStream takes over f, the open log file at path; close releases it.
func newLogStream(logger klog.Logger, path string, f *os.File) *logStream {
	return &logStream{logger: logger, path: path, f: f, rr: newRecordReader(f)}
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
	write := func(l logLine) error {
		if !lw.wanted(l) {
			return nil
		}
		return lw.write(l)
	}
	if lw.opts.tail < 0 {
		if err := s.readAvailable(write); err != nil {
			return err
		}
		if !lw.opts.follow {
			return s.finish(write)
		}
		return s.follow(ctx, write, clk, running)
	}

	// tailLines: keep the last lines of what is there now, write them, then follow if asked.
	tail := newLineRing(lw.opts.tail)
	keep := func(l logLine) error {
		if lw.wanted(l) {
			tail.push(l)
		}
		return nil
	}
	if err := s.readAvailable(keep); err != nil {
		return err
	}
	if !lw.opts.follow {
		if err := s.finish(keep); err != nil {
			return err
		}
	}
	for _, l := range tail.lines() {
		if err := lw.write(l); err != nil {
			return err
		}
	}
	if !lw.opts.follow {
		return nil
	}
	return s.follow(ctx, write, clk, running)
}

// readAvailable emits the lines completed by the records now in the file.
func (s *logStream) readAvailable(emit func(logLine) error) error {
	for {
		raw, skipped, err := s.rr.next()
		if skipped {
			s.logger.Info("Skipped an over-long record in a container log file", "path", s.path, "limit", maxRecord)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read log file %q: %w", s.path, err)
		}
		if err := s.add(raw, true, emit); err != nil {
			return err
		}
	}
}

// finish emits what is left when nothing more will be read: an unterminated last record and
// the lines still waiting for their final record.
func (s *logStream) finish(emit func(logLine) error) error {
	if rest := s.rr.rest(); len(rest) > 0 {
		s.logger.V(4).Info("Incomplete line at the end of a container log file", "path", s.path)
		if err := s.add(rest, false, emit); err != nil {
			return err
		}
	}
	for _, l := range s.j.flush() {
		if err := emit(l); err != nil {
			return err
		}
	}
	return nil
}

func (s *logStream) add(raw []byte, terminated bool, emit func(logLine) error) error {
	rec, err := parseCRIRecord(raw)
	if err != nil {
		// As upstream: a line that is not in the CRI format is logged and skipped.
		s.logger.V(2).Info("Skipping a line of a container log file that is not in the CRI format", "path", s.path, "err", err)
		return nil
	}
	if l, ok := s.j.add(rec, terminated); ok {
		return emit(l)
	}
	return nil
}

// follow emits new lines as the file grows until the container stops running (then what it
// wrote last is emitted too) or ctx ends.
func (s *logStream) follow(ctx context.Context, emit func(logLine) error, clk clock.Clock, running func() bool) error {
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
		if err := s.readAvailable(emit); err != nil {
			return err
		}
		if !running() {
			// The container exited: read what it wrote between the read above and its exit.
			if err := s.readAvailable(emit); err != nil {
				return err
			}
			return s.finish(emit)
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
		}
		timer.Stop()
	}
}

// reopen switches to a file re-created at the path (rotation) after reading the old one out.
func (s *logStream) reopen(emit func(logLine) error) error {
	if err := s.readAvailable(emit); err != nil {
		return err
	}
	if rest := s.rr.rest(); len(rest) > 0 {
		if err := s.add(rest, false, emit); err != nil {
			return err
		}
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
	s.f, s.rr = f, newRecordReader(f)
	return nil
}

func sameFile(a, b *os.File) bool {
	ai, errA := a.Stat()
	bi, errB := b.Stat()
	return errA == nil && errB == nil && os.SameFile(ai, bi)
}

// lineRing keeps the last n lines pushed.
type lineRing struct {
	n     int64
	buf   []logLine
	start int
}

func newLineRing(n int64) *lineRing {
	return &lineRing{n: n}
}

func (r *lineRing) push(l logLine) {
	switch {
	case r.n == 0:
	case int64(len(r.buf)) < r.n:
		r.buf = append(r.buf, l)
	default:
		r.buf[r.start] = l
		r.start = (r.start + 1) % len(r.buf)
	}
}

func (r *lineRing) lines() []logLine {
	return append(r.buf[r.start:len(r.buf):len(r.buf)], r.buf[:r.start]...)
}
