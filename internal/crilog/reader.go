package crilog

import (
	"errors"
	"fmt"
	"io"

	"k8s.io/klog/v2"
)

// Reader turns the records of a CRI log file into lines. It reads a file that may still grow:
// ReadAvailable can be called again after the file has grown, and Switch moves to a file
// re-created at the same path (rotation) without losing a line being joined.
type Reader struct {
	logger klog.Logger
	path   string
	rr     *recordReader
	j      Joiner
}

// NewReader reads the log file at path from r. Skipped records are logged to logger (the
// zero Logger discards them) with the path; path also names the file in read errors.
func NewReader(r io.Reader, path string, logger klog.Logger) *Reader {
	return &Reader{logger: logger, path: path, rr: newRecordReader(r)}
}

// ReadAvailable calls emit with each line completed by the records now in the file; a
// record whose newline is not written yet is kept for the next call. It returns emit's
// first error, or a read error.
func (r *Reader) ReadAvailable(emit func(Line) error) error {
	for {
		raw, skipped, err := r.rr.next()
		if skipped {
			r.logger.Info("Skipped an over-long record in a container log file", "path", r.path, "limit", MaxRecord)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read log file %q: %w", r.path, err)
		}
		if err := r.add(raw, true, emit); err != nil {
			return err
		}
	}
}

// ReadUnterminated takes the bytes after the file's last newline, if any, as its last record
// (without a newline) and emits the line it completes: the file will not grow any more.
func (r *Reader) ReadUnterminated(emit func(Line) error) error {
	if rest := r.rr.rest(); len(rest) > 0 {
		return r.add(rest, false, emit)
	}
	return nil
}

// Finish emits what is left when nothing more will be read, after ReadAvailable: an
// unterminated last record, then the lines still waiting for their final record.
func (r *Reader) Finish(emit func(Line) error) error {
	if rest := r.rr.rest(); len(rest) > 0 {
		r.logger.V(4).Info("Incomplete line at the end of a container log file", "path", r.path)
		if err := r.add(rest, false, emit); err != nil {
			return err
		}
	}
	for _, l := range r.j.Flush() {
		if err := emit(l); err != nil {
			return err
		}
	}
	return nil
}

// Switch goes on reading from src, a file re-created at the same path, keeping the lines
// being joined. Call ReadAvailable and ReadUnterminated on the old file first.
func (r *Reader) Switch(src io.Reader) {
	r.rr = newRecordReader(src)
}

func (r *Reader) add(raw []byte, terminated bool, emit func(Line) error) error {
	rec, err := ParseRecord(raw)
	if err != nil {
		// As upstream: a line that is not in the CRI format is logged and skipped.
		r.logger.V(2).Info("Skipping a line of a container log file that is not in the CRI format", "path", r.path, "err", err)
		return nil
	}
	if l, ok := r.j.Add(rec, terminated); ok {
		return emit(l)
	}
	return nil
}
