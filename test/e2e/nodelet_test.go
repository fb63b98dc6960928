package e2e

import (
	"bufio"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// buildNodelet builds the binary into a directory every user can read.
func buildNodelet(t *testing.T) string {
	t.Helper()
	bin, err := buildNodeletIn(worldReadableTempDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// worldReadableTempDir is a temp dir that an unprivileged user can enter (t.TempDir is 0700).
func worldReadableTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "nodelet-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// logWatcher collects a process's log lines and lets a test wait for one.
type logWatcher struct {
	mu    sync.Mutex
	lines []string
	added chan struct{}
}

func watchLogs(r io.Reader) *logWatcher {
	w := &logWatcher{added: make(chan struct{}, 1)}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			w.mu.Unlock()
			select {
			case w.added <- struct{}{}:
			default:
			}
		}
	}()
	return w
}

// matching returns the lines containing every one of subs.
func (w *logWatcher) matching(subs ...string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
next:
	for _, l := range w.lines {
		for _, s := range subs {
			if !strings.Contains(l, s) {
				continue next
			}
		}
		out = append(out, l)
	}
	return out
}

// waitCount waits until at least n lines contain every one of subs.
func (w *logWatcher) waitCount(t *testing.T, timeout time.Duration, n int, subs ...string) {
	t.Helper()
	deadline := time.After(timeout)
	for len(w.matching(subs...)) < n {
		select {
		case <-w.added:
		case <-deadline:
			w.mu.Lock()
			defer w.mu.Unlock()
			t.Fatalf("waited %v for %d log lines with %q; log:\n%s", timeout, n, subs, strings.Join(w.lines, "\n"))
		}
	}
}

func (w *logWatcher) dump() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.lines, "\n")
}
