package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"
	testingclock "k8s.io/utils/clock/testing"
)

func TestParseCRIRecord(t *testing.T) {
	cases := []struct {
		line    string
		want    criRecord
		wantErr string
	}{
		{line: "2016-10-06T00:17:09.669794202Z stdout P log content 1",
			want: criRecord{ts: time.Date(2016, 10, 6, 0, 17, 9, 669794202, time.UTC), stream: "stdout", partial: true, content: []byte("log content 1")}},
		{line: "2016-10-06T00:17:09.669794203Z stderr F log content 2",
			want: criRecord{ts: time.Date(2016, 10, 6, 0, 17, 9, 669794203, time.UTC), stream: "stderr", content: []byte("log content 2")}},
		{line: "2016-10-06T00:17:09Z stdout F:x:y  two spaces",
			want: criRecord{ts: time.Date(2016, 10, 6, 0, 17, 9, 0, time.UTC), stream: "stdout", content: []byte(" two spaces")}},
		{line: "2016-10-06T00:17:09Z stdout F ",
			want: criRecord{ts: time.Date(2016, 10, 6, 0, 17, 9, 0, time.UTC), stream: "stdout", content: []byte("")}},
		{line: "garbage", wantErr: "timestamp is not found"},
		{line: "yesterday stdout F x", wantErr: "unexpected timestamp"},
		{line: "2016-10-06T00:17:09Z stdin F x", wantErr: "unexpected stream type"},
		{line: "2016-10-06T00:17:09Z stdout", wantErr: "stream type is not found"},
		{line: "2016-10-06T00:17:09Z stdout F", wantErr: "log tag is not found"},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			got, err := parseCRIRecord([]byte(tc.line))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.ts.Equal(tc.want.ts) || got.stream != tc.want.stream || got.partial != tc.want.partial || !bytes.Equal(got.content, tc.want.content) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestJoinerJoinsPartialRecordsPerStream(t *testing.T) {
	var j joiner
	var got []string
	add := func(at time.Duration, stream string, partial bool, content string) {
		if l, ok := j.add(criRecord{ts: t0.Add(at), stream: stream, partial: partial, content: []byte(content)}, true); ok {
			got = append(got, l.stream+"@"+l.ts.Sub(t0).String()+":"+string(l.content))
		}
	}
	add(1*time.Second, "stdout", true, "hel")
	add(2*time.Second, "stderr", false, "oops")
	add(3*time.Second, "stdout", true, "lo ")
	add(4*time.Second, "stdout", false, "world")
	add(5*time.Second, "stderr", true, "unfinished")
	want := []string{"stderr@2s:oops\n", "stdout@1s:hello world\n"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q", got, want)
	}
	rest := j.flush()
	if len(rest) != 1 || string(rest[0].content) != "unfinished" || !rest[0].first {
		t.Errorf("flush %+v", rest)
	}
	if len(j.flush()) != 0 {
		t.Error("second flush not empty")
	}
}

func TestJoinerCapsLongLines(t *testing.T) {
	var j joiner
	big := strings.Repeat("x", maxJoinedLine/2)
	var pieces []logLine
	for i := 0; i < 3; i++ {
		if l, ok := j.add(criRecord{ts: t0, stream: "stdout", partial: true, content: []byte(big)}, true); ok {
			pieces = append(pieces, l)
		}
	}
	if l, ok := j.add(criRecord{ts: t0, stream: "stdout", content: []byte("end")}, true); ok {
		pieces = append(pieces, l)
	}
	if len(pieces) != 2 || !pieces[0].first || pieces[1].first ||
		len(pieces[0].content) != maxJoinedLine || string(pieces[1].content) != big+"end\n" {
		t.Fatalf("got %d pieces, want a 1 MiB first piece and the rest of the line", len(pieces))
	}
}

// slowReader returns its data in the given chunks, then io.EOF until more is added.
type slowReader struct{ chunks []string }

func (r *slowReader) Read(p []byte) (int, error) {
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	r.chunks[0] = r.chunks[0][n:]
	if r.chunks[0] == "" {
		r.chunks = r.chunks[1:]
	}
	return n, nil
}

func TestRecordReaderKeepsUnterminatedRecords(t *testing.T) {
	src := &slowReader{chunks: []string{"one\ntw"}}
	rr := newRecordReader(src)
	next := func() string {
		rec, _, err := rr.next()
		if errors.Is(err, io.EOF) {
			return "EOF"
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(rec)
	}
	if got := next(); got != "one" {
		t.Fatalf("first %q", got)
	}
	if got := next(); got != "EOF" {
		t.Fatalf("unterminated record returned: %q", got)
	}
	src.chunks = append(src.chunks, "o\nthree")
	if got := next(); got != "two" {
		t.Fatalf("joined record %q", got)
	}
	if got := next(); got != "EOF" {
		t.Fatalf("got %q", got)
	}
	if got := string(rr.rest()); got != "three" {
		t.Fatalf("rest %q", got)
	}
}

func TestRecordReaderSkipsOverlongRecords(t *testing.T) {
	src := strings.Repeat("y", maxRecord+100) + "\nok\n"
	rr := newRecordReader(strings.NewReader(src))
	rec, skipped, err := rr.next()
	if err != nil || !skipped || string(rec) != "ok" {
		t.Fatalf("got %d bytes skipped=%v err=%v, want \"ok\" after a skipped record", len(rec), skipped, err)
	}
}

func TestLineWriter(t *testing.T) {
	ts := time.Date(2026, 3, 1, 12, 0, 0, 5000, time.FixedZone("x", 3600))
	var buf bytes.Buffer
	lw := newLineWriter(&buf, nil, logOptions{timestamps: true, limitBytes: 50, tail: -1})
	if err := lw.write(logLine{ts: ts, stream: "stdout", content: []byte("a\n"), first: true}); err != nil {
		t.Fatal(err)
	}
	if err := lw.write(logLine{ts: ts, stream: "stdout", content: []byte("piece\n")}); err != nil {
		t.Fatal(err)
	}
	err := lw.write(logLine{ts: ts, stream: "stdout", content: []byte("cut here\n"), first: true})
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
