package server

import (
	"errors"
	"io"

	"github.com/nodelet/nodelet/internal/crilog"
)

// timeFormatOut is the fixed-width RFC3339Nano the kubelet prefixes with timestamps=true.
const timeFormatOut = "2006-01-02T15:04:05.000000000Z07:00"

// errLimitReached ends a read when limitBytes have been written.
var errLimitReached = errors.New("limitBytes reached")

// lineWriter writes lines with the options' filters, timestamp prefix and byte limit, as
// k8s.io/cri-client/pkg/logs logWriter does.
type lineWriter struct {
	w      io.Writer
	flush  func()
	opts   logOptions
	remain int64 // -1: no limit
	prefix []byte
}

func newLineWriter(w io.Writer, flush func(), opts logOptions) *lineWriter {
	return &lineWriter{w: w, flush: flush, opts: opts, remain: opts.limitBytes}
}

// wanted tells whether the line passes the since and stream filters.
func (lw *lineWriter) wanted(l crilog.Line) bool {
	if l.Time.Before(lw.opts.since) {
		return false
	}
	return lw.opts.stream == "" || lw.opts.stream == l.Stream
}

// write writes one wanted line and flushes; errLimitReached when the limit is now reached.
// Only the first piece of a line longer than crilog.MaxLine gets the timestamp prefix.
func (lw *lineWriter) write(l crilog.Line) error {
	out := l.Content
	if lw.opts.timestamps && !l.Continued {
		lw.prefix = append(append(l.Time.AppendFormat(lw.prefix[:0], timeFormatOut), ' '), l.Content...)
		out = lw.prefix
	}
	if lw.remain >= 0 && int64(len(out)) > lw.remain {
		out = out[:lw.remain]
	}
	n, err := lw.w.Write(out)
	if lw.flush != nil {
		lw.flush()
	}
	if err != nil {
		return err
	}
	if n < len(out) {
		return io.ErrShortWrite
	}
	if lw.remain >= 0 {
		lw.remain -= int64(n)
		if lw.remain == 0 {
			return errLimitReached
		}
	}
	return nil
}
