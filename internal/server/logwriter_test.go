package server

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/crilog"
)

// The CRI format itself (records, joining, reading) is tested in internal/crilog.

func TestLineWriter(t *testing.T) {
	ts := time.Date(2026, 3, 1, 12, 0, 0, 5000, time.FixedZone("x", 3600))
	var buf bytes.Buffer
	lw := newLineWriter(&buf, nil, logOptions{timestamps: true, limitBytes: 50, tail: -1})
	if err := lw.write(crilog.Line{Time: ts, Stream: "stdout", Content: []byte("a\n")}); err != nil {
		t.Fatal(err)
	}
	if err := lw.write(crilog.Line{Time: ts, Stream: "stdout", Content: []byte("piece\n"), Continued: true}); err != nil {
		t.Fatal(err)
	}
	err := lw.write(crilog.Line{Time: ts, Stream: "stdout", Content: []byte("cut here\n")})
	if !errors.Is(err, errLimitReached) {
		t.Fatalf("error %v, want errLimitReached", err)
	}
	want := "2026-03-01T12:00:00.000005000+01:00 a\npiece\n2026-0"
	if buf.String() != want {
		t.Errorf("wrote %q, want %q", buf.String(), want)
	}
}

// FuzzLogStream reads arbitrary file contents: no panic, limitBytes holds, and a tail is the
// end of the whole output.
func FuzzLogStream(f *testing.F) {
	f.Add([]byte(strings.Join(sampleLog, "")), int64(3), int64(20))
	f.Add([]byte("2026-03-01T12:00:00Z stdout P a\n2026-03-01T12:00:00Z stdout P b"), int64(1), int64(1))
	f.Add([]byte("\n\n garbage \x00\n"), int64(0), int64(5))
	f.Fuzz(func(t *testing.T, data []byte, tail, limit int64) {
		path := filepath.Join(t.TempDir(), "0.log")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		read := func(opts logOptions) string {
			fh, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			s := newLogStream(klog.Background(), path, fh)
			defer s.close()
			var buf bytes.Buffer
			if err := streamLog(context.Background(), s, newLineWriter(&buf, nil, opts), testingclock.NewFakeClock(t0), func() bool { return false }); err != nil {
				t.Fatal(err)
			}
			return buf.String()
		}
		all := read(logOptions{tail: -1, limitBytes: -1})
		if limit > 0 {
			if got := read(logOptions{tail: -1, limitBytes: limit}); int64(len(got)) > limit || !strings.HasPrefix(all, got) {
				t.Fatalf("limitBytes %d: %q is not a prefix of %q within the limit", limit, got, all)
			}
		}
		if tail >= 0 {
			if got := read(logOptions{tail: tail, limitBytes: -1}); !strings.HasSuffix(all, got) {
				t.Fatalf("tail %d: %q is not a suffix of %q", tail, got, all)
			}
		}
	})
}
