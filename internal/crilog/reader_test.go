package crilog

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"
)

// collect returns an emit func that records "<stream>:<content>" and the collected list.
func collect() (func(Line) error, *[]string) {
	var got []string
	return func(l Line) error {
		got = append(got, l.Stream+":"+string(l.Content))
		return nil
	}, &got
}

func TestReaderReadsAGrowingFile(t *testing.T) {
	src := &slowReader{chunks: []string{
		rec(0, Stdout, "F", "one") +
			"not a CRI line\n" +
			rec(time.Second, Stdout, "P", "two ") +
			strings.TrimSuffix(rec(2*time.Second, Stderr, "F", "err"), "\n"),
	}}
	r := NewReader(src, "/logs/0.log", klog.Logger{})
	emit, got := collect()
	if err := r.ReadAvailable(emit); err != nil {
		t.Fatal(err)
	}
	if want := "stdout:one\n"; strings.Join(*got, "|") != want {
		t.Fatalf("first read %q, want %q", *got, want)
	}
	src.chunks = append(src.chunks, "\n"+rec(3*time.Second, Stdout, "F", "halves"))
	if err := r.ReadAvailable(emit); err != nil {
		t.Fatal(err)
	}
	if want := "stdout:one\n|stderr:err\n|stdout:two halves\n"; strings.Join(*got, "|") != want {
		t.Fatalf("second read %q, want %q", *got, want)
	}
}

func TestReaderFinish(t *testing.T) {
	data := rec(0, Stderr, "P", "pending") + strings.TrimSuffix(rec(time.Second, Stdout, "F", "no newline"), "\n")
	r := NewReader(strings.NewReader(data), "/logs/0.log", klog.Logger{})
	emit, got := collect()
	if err := r.ReadAvailable(emit); err != nil {
		t.Fatal(err)
	}
	if len(*got) != 0 {
		t.Fatalf("lines before Finish: %q", *got)
	}
	if err := r.Finish(emit); err != nil {
		t.Fatal(err)
	}
	if want := "stdout:no newline|stderr:pending"; strings.Join(*got, "|") != want {
		t.Fatalf("finish %q, want %q", *got, want)
	}
}

func TestReaderSwitchKeepsPendingLines(t *testing.T) {
	old := rec(0, Stdout, "P", "begun in the old file, ") + strings.TrimSuffix(rec(time.Second, Stderr, "F", "unterminated"), "\n")
	r := NewReader(strings.NewReader(old), "/logs/0.log", klog.Logger{})
	emit, got := collect()
	if err := r.ReadAvailable(emit); err != nil {
		t.Fatal(err)
	}
	if err := r.ReadUnterminated(emit); err != nil {
		t.Fatal(err)
	}
	r.Switch(strings.NewReader(rec(2*time.Second, Stdout, "F", "ended in the new one")))
	if err := r.ReadAvailable(emit); err != nil {
		t.Fatal(err)
	}
	if want := "stderr:unterminated|stdout:begun in the old file, ended in the new one\n"; strings.Join(*got, "|") != want {
		t.Fatalf("got %q, want %q", *got, want)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestReaderErrors(t *testing.T) {
	r := NewReader(failingReader{}, "/logs/0.log", klog.Logger{})
	err := r.ReadAvailable(func(Line) error { return nil })
	if err == nil || err.Error() != `read log file "/logs/0.log": disk on fire` {
		t.Errorf("read error %v", err)
	}
	stop := errors.New("stop")
	r = NewReader(strings.NewReader(rec(0, Stdout, "F", "a")+rec(0, Stdout, "F", "b")), "/logs/0.log", klog.Logger{})
	n := 0
	err = r.ReadAvailable(func(Line) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("emit error: %v after %d lines, want emit's error after the first", err, n)
	}
	// The reader goes on after an emit error.
	if err := r.ReadAvailable(func(l Line) error {
		if string(l.Content) != "b\n" {
			t.Errorf("next line %q", l.Content)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
