package crilog

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func writeLog(t *testing.T, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTail(t *testing.T) {
	s := time.Second
	mixed := strings.Join([]string{
		rec(1*s, Stdout, "F", "starting"),
		rec(2*s, Stdout, "P", "panic: "),
		rec(3*s, Stderr, "F", "warning"),
		rec(4*s, Stdout, "P", "runtime "),
		rec(5*s, Stdout, "F", "error"),
		"not a CRI line\n",
		rec(6*s, Stderr, "F", ""),
		rec(7*s, Stderr, "F", "exit status 2"),
	}, "")
	cases := []struct {
		name     string
		data     string
		maxLines int
		maxBytes int64
		want     string
	}{
		{"all", mixed, -1, -1, "starting\nwarning\npanic: runtime error\n\nexit status 2\n"},
		{"upstream's bounds", mixed, 80, 2048, "starting\nwarning\npanic: runtime error\n\nexit status 2\n"},
		{"lines count joined lines", mixed, 3, 2048, "panic: runtime error\n\nexit status 2\n"},
		{"byte bound cuts a line at its start", mixed, 80, 26, "time error\n\nexit status 2\n"},
		{"byte bound inside the last line", mixed, 80, 5, "us 2\n"},
		{"lines and bytes", mixed, 1, 8, "tatus 2\n"},
		{"zero lines", mixed, 0, 2048, ""},
		{"zero bytes", mixed, 80, 0, ""},
		{"empty file", "", 80, 2048, ""},
		{"only garbage", "garbage\n\n", 80, 2048, ""},
		{"unterminated last record", rec(0, Stdout, "F", "done") + strings.TrimSuffix(rec(s, Stderr, "F", "fatal: no newline"), "\n"),
			80, 2048, "done\nfatal: no newline"},
		{"line without its final record, where its last record is", rec(0, Stderr, "P", "killed while ") + rec(s, Stdout, "F", "other") + rec(2*s, Stderr, "P", "writing"),
			80, 2048, "other\nkilled while writing"},
		{"line without its final record, before a later line", rec(0, Stderr, "P", "killed while writing ") + rec(s, Stdout, "F", "other"),
			80, 2048, "killed while writing other\n"},
		{"stderr only", rec(0, Stderr, "F", "a") + rec(s, Stderr, "F", "b"), 1, 2048, "b\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Tail(writeLog(t, tc.data), tc.maxLines, tc.maxBytes)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTailMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.log")
	got, err := Tail(path, 80, 2048)
	if !errors.Is(err, fs.ErrNotExist) || got != "" {
		t.Fatalf("got %q, %v; want a not-exist error", got, err)
	}
	if want := `failed to open log file "` + path + `"`; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want it to begin with upstream's %q", err, want)
	}
}

func TestTailReadsOnlyTheEnd(t *testing.T) {
	// A file much larger than the window: the first record is corrupt (the window never
	// reaches it), the last lines come from the end.
	var b strings.Builder
	b.WriteString("corrupt\n")
	for b.Len() < 4*int(DefaultTailWindow) {
		b.WriteString(rec(0, Stdout, "F", strings.Repeat("x", 100)))
	}
	b.WriteString(rec(0, Stderr, "P", "the "))
	b.WriteString(rec(0, Stdout, "F", strings.Repeat("y", 100)))
	b.WriteString(rec(0, Stderr, "F", "end"))
	got, err := Tail(writeLog(t, b.String()), 2, 2048)
	if want := strings.Repeat("y", 100) + "\nthe end\n"; got != want || err != nil {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

// wholeFileTail is Tail's reference: the whole file read forward, record by record (no line
// in these tests reaches MaxLine); a line is placed at the record that completes it, a line
// without its final record at its last record.
func wholeFileTail(data string, maxLines int, maxBytes int64) string {
	type line struct {
		content string
		pos     int // the number of the line's last record
	}
	var (
		lines   []line
		pending = map[string]*line{}
	)
	raws := strings.SplitAfter(data, "\n")
	for i, raw := range raws {
		rec, err := ParseRecord([]byte(strings.TrimSuffix(raw, "\n")))
		if err != nil {
			continue
		}
		p := pending[rec.Stream]
		if p == nil {
			p = &line{}
			pending[rec.Stream] = p
		}
		p.content += string(rec.Content)
		p.pos = i
		if !rec.Partial {
			if strings.HasSuffix(raw, "\n") {
				p.content += "\n"
			}
			lines = append(lines, *p)
			delete(pending, rec.Stream)
		}
	}
	var rest []line
	for _, p := range pending {
		if p.content != "" {
			rest = append(rest, *p)
		}
	}
	lines = append(lines, rest...)
	slices.SortStableFunc(lines, func(a, b line) int { return a.pos - b.pos })
	if maxLines >= 0 && len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	var out string
	for _, l := range lines {
		out += l.content
	}
	if maxBytes >= 0 && int64(len(out)) > maxBytes {
		out = out[int64(len(out))-maxBytes:]
	}
	return out
}

// TestTailWindowsMatchAWholeFileRead reads random logs with many window sizes: the windows
// must grow until the result is that of a read of the whole file.
func TestTailWindowsMatchAWholeFileRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 100; iter++ {
		var b strings.Builder
		for n := rng.IntN(30); n > 0; n-- {
			stream, tag := Stdout, "F"
			if rng.IntN(2) == 0 {
				stream = Stderr
			}
			if rng.IntN(3) == 0 {
				tag = "P"
			}
			if rng.IntN(20) == 0 {
				b.WriteString("garbage\n")
			}
			b.WriteString(rec(time.Duration(b.Len()), stream, tag, strings.Repeat(string(rune('a'+rng.IntN(26))), rng.IntN(40))))
		}
		data := b.String()
		if rng.IntN(4) == 0 {
			data = strings.TrimSuffix(data, "\n")
		}
		path := writeLog(t, data)
		for _, bounds := range []struct {
			lines int
			bytes int64
		}{{80, 2048}, {3, -1}, {-1, 50}, {5, 30}, {1, 1}, {-1, -1}, {10, 200}} {
			want := wholeFileTail(data, bounds.lines, bounds.bytes)
			for _, w := range []int64{1, 7, 40, 100, 333, 1 << 20} {
				got, err := TailWindow(path, bounds.lines, bounds.bytes, w)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("log %q, %d lines, %d bytes, window %d:\n got %q\nwant %q", data, bounds.lines, bounds.bytes, w, got, want)
				}
			}
		}
	}
}

// FuzzTail reads arbitrary files with small windows: the result is the reference's.
func FuzzTail(f *testing.F) {
	f.Add(rec(0, Stdout, "P", "a")+rec(0, Stderr, "F", "b")+rec(0, Stdout, "F", "c"), 2, int64(3), int64(5))
	f.Add("garbage\n"+rec(0, Stderr, "P", "")+rec(0, Stdout, "P", "x"), 80, int64(2048), int64(1))
	f.Add("\n\n\x00 stdout F\n", -1, int64(-1), int64(2))
	f.Fuzz(func(t *testing.T, data string, maxLines int, maxBytes, window int64) {
		window = 1 + window&0xffff
		path := writeLog(t, data)
		got, err := TailWindow(path, maxLines, maxBytes, window)
		if err != nil {
			t.Fatal(err)
		}
		if want := wholeFileTail(data, maxLines, maxBytes); got != want {
			t.Fatalf("window %d, %d lines, %d bytes:\n got %q\nwant %q", window, maxLines, maxBytes, got, want)
		}
	})
}
