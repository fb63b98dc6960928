package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

const (
	// timeFormatIn parses CRI log times (RFC 3339 with up to nanoseconds, any width).
	timeFormatIn = "2006-01-02T15:04:05.999999999Z07:00"
	// timeFormatOut is the fixed-width RFC3339Nano the kubelet prefixes with timestamps=true.
	timeFormatOut = "2006-01-02T15:04:05.000000000Z07:00"

	// maxJoinedLine caps a line joined from partial records; past it the line is written in
	// pieces (only the first gets a timestamp), as the kubelet writes partial records.
	maxJoinedLine = 1 << 20
	// maxRecord caps one raw record; containerd splits lines at 16 KiB, so a longer record is
	// a corrupt file: it is skipped up to its newline.
	maxRecord = 1 << 20
)

// logLine is a unit of output: a whole logical line, or a piece of one longer than
// maxJoinedLine, or, at the end of a log that is not followed, an unterminated line.
type logLine struct {
	ts      time.Time // time of the line's first record
	stream  string    // "stdout" or "stderr"
	content []byte    // ends with '\n' when the line is complete
	first   bool      // the line's first piece: it gets the timestamp prefix
}

// criRecord is one parsed line of a CRI log file.
type criRecord struct {
	ts      time.Time
	stream  string
	partial bool
	content []byte
}

// parseCRIRecord parses `<RFC3339Nano time> <stdout|stderr> <F|P>[:more tags] <content>`
// (the line without its newline), as k8s.io/cri-client/pkg/logs parseCRILog.
func parseCRIRecord(line []byte) (criRecord, error) {
	var rec criRecord
	ts, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return rec, errors.New("timestamp is not found")
	}
	t, err := time.Parse(timeFormatIn, string(ts))
	if err != nil {
		return rec, fmt.Errorf("unexpected timestamp %q: %w", ts, err)
	}
	stream, rest, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return rec, errors.New("stream type is not found")
	}
	if s := string(stream); s != "stdout" && s != "stderr" {
		return rec, fmt.Errorf("unexpected stream type %q", s)
	}
	tags, content, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return rec, errors.New("log tag is not found")
	}
	tag, _, _ := bytes.Cut(tags, []byte{':'}) // forward compatible: only the first tag counts
	return criRecord{ts: t, stream: string(stream), partial: string(tag) == "P", content: content}, nil
}

// pendingLine is a line being joined from partial records.
type pendingLine struct {
	active bool
	ts     time.Time
	buf    []byte
	first  bool
}

// joiner joins partial records into lines, separately for stdout and stderr.
type joiner struct {
	pending [2]pendingLine
}

func streamIndex(stream string) int {
	if stream == "stderr" {
		return 1
	}
	return 0
}

// add takes one record; terminated tells whether it ended with a newline in the file. It
// returns the line it completes, or a piece of an over-long line, if any.
func (j *joiner) add(rec criRecord, terminated bool) (logLine, bool) {
	p := &j.pending[streamIndex(rec.stream)]
	if !p.active {
		*p = pendingLine{active: true, ts: rec.ts, first: true}
	}
	p.buf = append(p.buf, rec.content...)
	if !rec.partial {
		if terminated {
			p.buf = append(p.buf, '\n')
		}
		line := logLine{ts: p.ts, stream: rec.stream, content: p.buf, first: p.first}
		*p = pendingLine{}
		return line, true
	}
	if len(p.buf) >= maxJoinedLine {
		line := logLine{ts: p.ts, stream: rec.stream, content: p.buf, first: p.first}
		p.buf, p.first = nil, false
		return line, true
	}
	return logLine{}, false
}

// flush returns the lines still waiting for their final record, oldest first: the end of a
// log that is not followed, or of a container that exited.
func (j *joiner) flush() []logLine {
	var out []logLine
	for i, stream := range []string{"stdout", "stderr"} {
		p := &j.pending[i]
		if p.active && len(p.buf) > 0 {
			out = append(out, logLine{ts: p.ts, stream: stream, content: p.buf, first: p.first})
		}
		j.pending[i] = pendingLine{}
	}
	if len(out) == 2 && out[1].ts.Before(out[0].ts) {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// recordReader reads the raw records of a log file that may still grow: a record is only
// returned once its newline is there, the bytes of an unterminated one are kept for the next
// call.
type recordReader struct {
	r        *bufio.Reader
	carry    []byte // an unterminated record read so far
	skipping bool   // inside an over-long record, discarding up to its newline
}

func newRecordReader(r io.Reader) *recordReader {
	return &recordReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next newline-terminated record without its newline, or io.EOF when the
// file has no complete record left (the carry then holds any unterminated bytes). The
// returned slice is valid until the next call. skipped reports an over-long record dropped.
func (rr *recordReader) next() (rec []byte, skipped bool, err error) {
	for {
		chunk, err := rr.r.ReadSlice('\n')
		switch {
		case err == nil:
			if rr.skipping {
				rr.skipping = false
				skipped = true
				continue
			}
			if len(rr.carry) == 0 {
				return chunk[:len(chunk)-1], skipped, nil
			}
			if len(rr.carry)+len(chunk)-1 > maxRecord {
				rr.carry, skipped = nil, true
				continue
			}
			rr.carry = append(rr.carry, chunk[:len(chunk)-1]...)
			rec, rr.carry = rr.carry, rr.carry[:0:0]
			return rec, skipped, nil
		case errors.Is(err, bufio.ErrBufferFull) || errors.Is(err, io.EOF):
			if !rr.skipping {
				rr.carry = append(rr.carry, chunk...)
				if len(rr.carry) > maxRecord {
					rr.carry, rr.skipping = nil, true
				}
			}
			if errors.Is(err, io.EOF) {
				return nil, skipped, io.EOF
			}
		default:
			return nil, skipped, err
		}
	}
}

// rest returns and forgets the unterminated bytes at the end of the file.
func (rr *recordReader) rest() []byte {
	rest := rr.carry
	rr.carry = nil
	return rest
}

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
func (lw *lineWriter) wanted(l logLine) bool {
	if l.ts.Before(lw.opts.since) {
		return false
	}
	return lw.opts.stream == "" || lw.opts.stream == l.stream
}

// write writes one wanted line and flushes; errLimitReached when the limit is now reached.
func (lw *lineWriter) write(l logLine) error {
	out := l.content
	if lw.opts.timestamps && l.first {
		lw.prefix = append(append(l.ts.AppendFormat(lw.prefix[:0], timeFormatOut), ' '), l.content...)
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
