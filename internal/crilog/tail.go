package crilog

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// DefaultTailWindow is how much of the end of the file Tail reads first; the window doubles
// until the lines asked for are all in it.
const DefaultTailWindow int64 = 64 << 10

// Tail returns the end of the CRI log file at path as one string, as upstream's
// readLastStringFromContainerLogs reads a termination message from the logs (tail 80 lines,
// the last 2048 bytes): the content of the last maxLines lines of both streams, partial
// records joined, each complete line with its newline, then at most the last maxBytes bytes
// of that, so the first line may be cut at its start. The log is taken as finished: an
// unterminated last record and lines without their final record are included. maxLines < 0
// or maxBytes < 0 means no such limit. Only the end of the file is read: a window that
// doubles until it holds the lines asked for.
//
// Lines come in the order they were completed; a line without its final record comes where
// its last record is (Reader.Finish puts those last, by time), as upstream has written it by
// then. Upstream counts raw records and writes a partial record's content as soon as it
// reads it, so it splits a line interleaved with the other stream; here lines are joined per
// stream and counted whole. Records that are not in the CRI format are skipped silently.
// (One approximation: a line longer than MaxLine that begins before the window read last is
// cut into its MaxLine pieces from the window's start, not from the line's.)
func Tail(path string, maxLines int, maxBytes int64) (string, error) {
	return TailWindow(path, maxLines, maxBytes, DefaultTailWindow)
}

// TailWindow is Tail reading first the last window bytes of the file (at least 1) instead of
// DefaultTailWindow.
func TailWindow(path string, maxLines int, maxBytes, window int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("failed to open log file %q: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("stat log file %q: %w", path, err)
	}
	if maxLines == 0 || maxBytes == 0 {
		return "", nil
	}
	size := fi.Size()
	for window := max(window, 1); ; window *= 2 {
		start := max(size-window, 0)
		lines, err := tailFrom(f, path, start, size, maxLines, maxBytes)
		if err != nil {
			return "", err
		}
		if start == 0 || tailComplete(lines, maxLines, maxBytes) {
			return joinTail(lines, maxBytes), nil
		}
	}
}

// tailLine is a line read from a window of the file; truncated: the line may have begun
// before the window, so its content may lack its start.
type tailLine struct {
	Line
	truncated bool
	pos       int // the number of the record that completed the line, or of its last record
}

// tailFrom reads the records in [start, end) of f, from the first record that begins at or
// after start, and keeps the last lines that Tail needs.
func tailFrom(f *os.File, path string, start, end int64, maxLines int, maxBytes int64) ([]tailLine, error) {
	var src io.Reader = io.NewSectionReader(f, start, end-start)
	if start > 0 {
		// Skip the record that straddles start: begin one byte early so that a record
		// beginning exactly at start is kept.
		br := bufio.NewReader(io.NewSectionReader(f, start-1, end-start+1))
		for {
			_, err := br.ReadSlice('\n')
			if err == nil {
				break
			}
			if errors.Is(err, io.EOF) {
				return nil, nil
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				return nil, fmt.Errorf("read log file %q: %w", path, err)
			}
		}
		src = br
	}

	var (
		kept  []tailLine
		bytes int64
		// seen: a line of the stream was read in the window; lastTruncated: the stream's
		// last line was truncated, and so are the further pieces of that line.
		seen, lastTruncated [2]bool
	)
	keep := func(l Line, pos int) {
		i := streamIndex(l.Stream)
		truncated := false
		if start > 0 {
			if l.Continued {
				truncated = lastTruncated[i]
			} else {
				truncated = !seen[i]
			}
		}
		seen[i], lastTruncated[i] = true, truncated
		at := len(kept)
		for at > 0 && kept[at-1].pos > pos {
			at--
		}
		kept = slices.Insert(kept, at, tailLine{Line: l, truncated: truncated, pos: pos})
		bytes += int64(len(l.Content))
		// Drop the lines that cannot be in the result: past maxLines, or before lines that
		// hold maxBytes already.
		drop := 0
		for drop < len(kept) && ((maxLines >= 0 && len(kept)-drop > maxLines) ||
			(maxBytes >= 0 && bytes-int64(len(kept[drop].Content)) >= maxBytes)) {
			bytes -= int64(len(kept[drop].Content))
			drop++
		}
		if drop > 0 {
			kept = append(kept[:0], kept[drop:]...)
		}
	}

	// Records are read as Reader reads them, but a line without its final record is placed
	// where its last record is rather than at the end, so that a line that ends before the
	// window comes before all the lines read in the window.
	var (
		j    Joiner
		n    int    // records parsed
		last [2]int // the number of each stream's last record, 0: none
	)
	add := func(raw []byte, terminated bool) {
		rec, err := ParseRecord(raw)
		if err != nil {
			return // not in the CRI format: skipped, as upstream
		}
		n++
		last[streamIndex(rec.Stream)] = n
		if l, ok := j.Add(rec, terminated); ok {
			keep(l, n)
		}
	}
	rr := newRecordReader(src)
	for {
		raw, _, err := rr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read log file %q: %w", path, err)
		}
		add(raw, true)
	}
	if rest := rr.rest(); len(rest) > 0 {
		add(rest, false)
	}
	pending := j.Flush()
	for i, stream := range []string{Stdout, Stderr} {
		if start > 0 && last[i] > 0 && !seen[i] && !slices.ContainsFunc(pending, func(l Line) bool { return l.Stream == stream }) {
			// Only empty partial records of the stream in the window: the end of a line that
			// begins before it. Keep its place, as a truncated line of unknown content.
			pending = append(pending, Line{Stream: stream})
		}
	}
	slices.SortFunc(pending, func(a, b Line) int {
		return cmp.Compare(last[streamIndex(a.Stream)], last[streamIndex(b.Stream)])
	})
	for _, l := range pending {
		keep(l, last[streamIndex(l.Stream)])
	}
	return kept, nil
}

// tailComplete tells whether the lines read from a window that does not begin the file are
// those a read of the whole file would end with: enough lines or bytes, and no needed byte
// lost with the start of a truncated line.
func tailComplete(lines []tailLine, maxLines int, maxBytes int64) bool {
	need := maxBytes
	for i := len(lines) - 1; i >= 0; i-- {
		if maxBytes >= 0 && need <= 0 {
			return true
		}
		n := int64(len(lines[i].Content))
		if lines[i].truncated {
			return maxBytes >= 0 && n >= need
		}
		need -= n
	}
	return (maxBytes >= 0 && need <= 0) || (maxLines >= 0 && len(lines) >= maxLines)
}

// joinTail concatenates the lines' content and keeps its last maxBytes bytes.
func joinTail(lines []tailLine, maxBytes int64) string {
	var n int64
	for _, l := range lines {
		n += int64(len(l.Content))
	}
	skip := int64(0)
	if maxBytes >= 0 && n > maxBytes {
		skip = n - maxBytes
	}
	out := make([]byte, 0, n-skip)
	for _, l := range lines {
		c := l.Content
		if skip > 0 {
			cut := min(skip, int64(len(c)))
			c, skip = c[cut:], skip-cut
		}
		out = append(out, c...)
	}
	return string(out)
}
