package crilog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// t0 is the tests' "now".
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// rec formats one CRI log record: at is relative to t0.
func rec(at time.Duration, stream, tag, content string) string {
	return fmt.Sprintf("%s %s %s %s\n", t0.Add(at).Format(time.RFC3339Nano), stream, tag, content)
}

func TestParseRecord(t *testing.T) {
	cases := []struct {
		line    string
		want    Record
		wantErr string
	}{
		{line: "2016-10-06T00:17:09.669794202Z stdout P log content 1",
			want: Record{Time: time.Date(2016, 10, 6, 0, 17, 9, 669794202, time.UTC), Stream: "stdout", Partial: true, Content: []byte("log content 1")}},
		{line: "2016-10-06T00:17:09.669794203Z stderr F log content 2",
			want: Record{Time: time.Date(2016, 10, 6, 0, 17, 9, 669794203, time.UTC), Stream: "stderr", Content: []byte("log content 2")}},
		{line: "2016-10-06T00:17:09Z stdout F:x:y  two spaces",
			want: Record{Time: time.Date(2016, 10, 6, 0, 17, 9, 0, time.UTC), Stream: "stdout", Content: []byte(" two spaces")}},
		{line: "2016-10-06T00:17:09Z stdout F ",
			want: Record{Time: time.Date(2016, 10, 6, 0, 17, 9, 0, time.UTC), Stream: "stdout", Content: []byte("")}},
		{line: "garbage", wantErr: "timestamp is not found"},
		{line: "yesterday stdout F x", wantErr: "unexpected timestamp"},
		{line: "2016-10-06T00:17:09Z stdin F x", wantErr: "unexpected stream type"},
		{line: "2016-10-06T00:17:09Z stdout", wantErr: "stream type is not found"},
		{line: "2016-10-06T00:17:09Z stdout F", wantErr: "log tag is not found"},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			got, err := ParseRecord([]byte(tc.line))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.Time.Equal(tc.want.Time) || got.Stream != tc.want.Stream || got.Partial != tc.want.Partial || !bytes.Equal(got.Content, tc.want.Content) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
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
	src := strings.Repeat("y", MaxRecord+100) + "\nok\n"
	rr := newRecordReader(strings.NewReader(src))
	rec, skipped, err := rr.next()
	if err != nil || !skipped || string(rec) != "ok" {
		t.Fatalf("got %d bytes skipped=%v err=%v, want \"ok\" after a skipped record", len(rec), skipped, err)
	}
}
