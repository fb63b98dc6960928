package oomwatcher

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Record is one record of the kernel log as /dev/kmsg gives it (Documentation/ABI/testing/dev-kmsg).
type Record struct {
	// Facility is the syslog facility: 0 for the kernel, 1 (user) for a line written to /dev/kmsg.
	Facility int
	// Level is the syslog level (0 emergency ... 7 debug).
	Level int
	// Seq is the record's sequence number.
	Seq uint64
	// SinceBoot is the record's time on the kernel's monotonic clock.
	SinceBoot time.Duration
	// Message is the text, without the trailing newline and the dictionary lines.
	Message string
}

// ParseRecord parses the first line of a /dev/kmsg record:
// "priority,sequence,timestamp_us,flags[,...];message".
func ParseRecord(line string) (Record, error) {
	line = strings.TrimSuffix(line, "\n")
	prefix, message, ok := strings.Cut(line, ";")
	if !ok {
		return Record{}, errors.New("invalid kmsg record: no ';' after the prefix")
	}
	fields := strings.Split(prefix, ",")
	if len(fields) < 3 {
		return Record{}, fmt.Errorf("invalid kmsg record prefix %q: want priority,sequence,timestamp", prefix)
	}
	prio, err := strconv.Atoi(fields[0])
	if err != nil || prio < 0 {
		return Record{}, fmt.Errorf("invalid kmsg record priority %q", fields[0])
	}
	seq, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return Record{}, fmt.Errorf("invalid kmsg record sequence number %q: %w", fields[1], err)
	}
	us, err := strconv.ParseInt(fields[2], 10, 64)
	if err != nil || us < 0 {
		return Record{}, fmt.Errorf("invalid kmsg record timestamp %q", fields[2])
	}
	return Record{Facility: prio >> 3, Level: prio & 7, Seq: seq, SinceBoot: time.Duration(us) * time.Microsecond, Message: message}, nil
}

// maxRecord is the kernel's CONSOLE_EXT_LOG_MAX: /dev/kmsg fails a read into a smaller buffer
// than the record with EINVAL.
const maxRecord = 8192

// recordReader yields the first line of each record. /dev/kmsg returns one whole record per
// read; any other reader (a test's) may return records cut anywhere, so lines are joined
// across reads. Dictionary lines (starting with a space) are skipped.
type recordReader struct {
	r       io.Reader
	buf     []byte
	pending []byte
	// err is the last read's error, returned once the lines read with it are consumed.
	err error
}

func newRecordReader(r io.Reader) *recordReader {
	return &recordReader{r: r, buf: make([]byte, maxRecord)}
}

// next returns the next record line, or the reader's error: io.EOF at its end (and from then
// on); syscall.EPIPE when the kernel overwrote records before they were read, after which
// reading goes on.
func (rr *recordReader) next() (string, error) {
	for {
		if line, ok := rr.cut(); ok {
			return line, nil
		}
		if err := rr.err; err != nil {
			if !errors.Is(err, io.EOF) {
				rr.err = nil
				return "", err
			}
			if line := string(rr.pending); line != "" {
				// The last record of a stream, without its newline.
				rr.pending = nil
				if line[0] != ' ' {
					return line, nil
				}
			}
			return "", err
		}
		if len(rr.pending) > maxRecord {
			rr.pending = nil
			return "", fmt.Errorf("kernel log line longer than %d bytes", maxRecord)
		}
		n, err := rr.r.Read(rr.buf)
		rr.pending = append(rr.pending, rr.buf[:n]...)
		rr.err = err
	}
}

// cut takes the next record line out of what was read.
func (rr *recordReader) cut() (string, bool) {
	for {
		i := bytes.IndexByte(rr.pending, '\n')
		if i < 0 {
			return "", false
		}
		line := string(rr.pending[:i])
		rr.pending = rr.pending[i+1:]
		if line != "" && line[0] != ' ' {
			return line, true
		}
	}
}
