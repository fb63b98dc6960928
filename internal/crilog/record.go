package crilog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// Stream names, as they appear in records and in Line.Stream.
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

const (
	// TimeFormat parses CRI log times (RFC 3339 with up to nanoseconds, any width).
	TimeFormat = "2006-01-02T15:04:05.999999999Z07:00"

	// MaxLine caps a line joined from partial records; past it the line is emitted in pieces.
	MaxLine = 1 << 20
	// MaxRecord caps one raw record; containerd splits lines at 16 KiB, so a longer record is
	// a corrupt file: it is skipped up to its newline.
	MaxRecord = 1 << 20
)

// Record is one parsed line of a CRI log file.
type Record struct {
	Time    time.Time
	Stream  string // Stdout or Stderr
	Partial bool   // a P record: the line goes on in the stream's next record
	Content []byte // without the record's newline; shares the parsed slice
}

// ParseRecord parses `<RFC3339Nano time> <stdout|stderr> <F|P>[:more tags] <content>` (the
// line without its newline), as k8s.io/cri-client/pkg/logs parseCRILog. The returned
// Content is a subslice of line.
func ParseRecord(line []byte) (Record, error) {
	var rec Record
	ts, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return rec, errors.New("timestamp is not found")
	}
	t, err := time.Parse(TimeFormat, string(ts))
	if err != nil {
		return rec, fmt.Errorf("unexpected timestamp %q: %w", ts, err)
	}
	stream, rest, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return rec, errors.New("stream type is not found")
	}
	if s := string(stream); s != Stdout && s != Stderr {
		return rec, fmt.Errorf("unexpected stream type %q", s)
	}
	tags, content, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return rec, errors.New("log tag is not found")
	}
	tag, _, _ := bytes.Cut(tags, []byte{':'}) // forward compatible: only the first tag counts
	return Record{Time: t, Stream: string(stream), Partial: string(tag) == "P", Content: content}, nil
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
			if len(rr.carry)+len(chunk)-1 > MaxRecord {
				rr.carry, skipped = nil, true
				continue
			}
			rr.carry = append(rr.carry, chunk[:len(chunk)-1]...)
			rec, rr.carry = rr.carry, rr.carry[:0:0]
			return rec, skipped, nil
		case errors.Is(err, bufio.ErrBufferFull) || errors.Is(err, io.EOF):
			if !rr.skipping {
				rr.carry = append(rr.carry, chunk...)
				if len(rr.carry) > MaxRecord {
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
