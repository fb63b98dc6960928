package logrotation

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCleanRemovesCurrentAndRotatedLogs(t *testing.T) {
	h := newHarness(t, testConfig(5))
	log := h.container(t, "c1", "current")
	dir := filepath.Dir(log)
	for _, name := range []string{"0.log.20260301-115900.gz", "0.log.20260301-120000", "0.log.20260301-120010.tmp", "1.log", "0.logs"} {
		write(t, filepath.Join(dir, name), "x")
	}
	if err := h.m.Clean(context.Background(), "c1"); err != nil {
		t.Fatalf("Clean: %v", err)
	}
	// 1.log is another restart's log; 0.logs is not 0.log's.
	if got, want := ls(t, dir), []string{"0.logs", "1.log"}; !slices.Equal(got, want) {
		t.Errorf("files %q, want %q", got, want)
	}
	if err := h.m.Clean(context.Background(), "c1"); err != nil {
		t.Errorf("second Clean: %v, want nil (nothing left)", err)
	}
}

func TestCleanWithoutLogs(t *testing.T) {
	h := newHarness(t, testConfig(5))
	h.rt.add("no-log", "", running)
	if err := h.m.Clean(context.Background(), "no-log"); err != nil {
		t.Errorf("Clean of a container without a log path: %v, want nil", err)
	}
	h.rt.add("dir-gone", filepath.Join(h.dir, "gone", "0.log"), running)
	if err := h.m.Clean(context.Background(), "dir-gone"); err != nil {
		t.Errorf("Clean of a container whose log directory is gone: %v, want nil", err)
	}
	if _, err := os.Stat(h.dir); err != nil {
		t.Errorf("log root: %v", err)
	}
}

func TestCleanErrors(t *testing.T) {
	h := newHarness(t, testConfig(5))
	h.rt.add("relative", "relative/0.log", running)
	for _, id := range []string{"unknown", "relative"} {
		err := h.m.Clean(context.Background(), id)
		if err == nil {
			t.Errorf("Clean(%s) succeeded, want an error", id)
			continue
		}
		if !strings.Contains(err.Error(), id) {
			t.Errorf("Clean(%s) error %q does not name the container", id, err)
		}
	}
}
