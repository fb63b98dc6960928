package crilog

import (
	"slices"
	"time"
)

// Line is a unit of output: a whole logical line, or a piece of one longer than MaxLine, or,
// at the end of a log, a line whose final record was never written.
type Line struct {
	Time   time.Time // time of the line's first record
	Stream string    // Stdout or Stderr
	// Content ends with '\n' when the line is complete and its final record was terminated
	// in the file. It is owned by the receiver: later records do not change it.
	Content []byte
	// Continued marks the pieces of an over-long line after its first: a reader that
	// prefixes lines with their time prefixes only the first piece.
	Continued bool
}

// pendingLine is a line being joined from partial records.
type pendingLine struct {
	active    bool
	ts        time.Time
	buf       []byte
	continued bool
}

// Joiner joins partial records into lines, separately for stdout and stderr. The zero value
// is ready to use.
type Joiner struct {
	pending [2]pendingLine
}

func streamIndex(stream string) int {
	if stream == Stderr {
		return 1
	}
	return 0
}

// Add takes one record; terminated tells whether it ended with a newline in the file. It
// returns the line it completes, or a piece of an over-long line, if any. The record's
// content is copied.
func (j *Joiner) Add(rec Record, terminated bool) (Line, bool) {
	p := &j.pending[streamIndex(rec.Stream)]
	if !p.active {
		*p = pendingLine{active: true, ts: rec.Time}
	}
	p.buf = append(p.buf, rec.Content...)
	if !rec.Partial {
		if terminated {
			p.buf = append(p.buf, '\n')
		}
		line := Line{Time: p.ts, Stream: rec.Stream, Content: p.buf, Continued: p.continued}
		*p = pendingLine{}
		return line, true
	}
	if len(p.buf) >= MaxLine {
		line := Line{Time: p.ts, Stream: rec.Stream, Content: p.buf, Continued: p.continued}
		p.buf, p.continued = nil, true
		return line, true
	}
	return Line{}, false
}

// Flush returns the lines still waiting for their final record, oldest first, and forgets
// them: the end of a log that is not followed, or of a container that exited.
func (j *Joiner) Flush() []Line {
	var out []Line
	for i, stream := range []string{Stdout, Stderr} {
		p := &j.pending[i]
		if p.active && len(p.buf) > 0 {
			out = append(out, Line{Time: p.ts, Stream: stream, Content: p.buf, Continued: p.continued})
		}
		j.pending[i] = pendingLine{}
	}
	if len(out) == 2 && out[1].Time.Before(out[0].Time) {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// Ring keeps the last n lines pushed.
type Ring struct {
	n     int64
	buf   []Line
	start int
}

// NewRing returns a ring that keeps n lines; n <= 0 keeps none.
func NewRing(n int64) *Ring {
	return &Ring{n: n}
}

// Push adds a line, dropping the oldest one when the ring is full.
func (r *Ring) Push(l Line) {
	switch {
	case r.n <= 0:
	case int64(len(r.buf)) < r.n:
		r.buf = append(r.buf, l)
	default:
		r.buf[r.start] = l
		r.start = (r.start + 1) % len(r.buf)
	}
}

// Lines returns the lines kept, oldest first, in a new slice.
func (r *Ring) Lines() []Line {
	return slices.Concat(r.buf[r.start:], r.buf[:r.start])
}
