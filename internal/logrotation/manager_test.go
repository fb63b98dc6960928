package logrotation

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

const running = runtimeapi.ContainerState_CONTAINER_RUNNING

// harness is a Manager over a fake runtime and a fake clock at at(0), with one log directory.
type harness struct {
	m     *Manager
	rt    *fakeRuntime
	clock *clocktesting.FakeClock
	dir   string
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{rt: newFakeRuntime(), clock: clocktesting.NewFakeClock(at(0)), dir: t.TempDir()}
	m, err := New(cfg, Deps{Runtime: h.rt, Clock: h.clock})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.m = m
	return h
}

// testConfig rotates at 100 bytes and keeps maxFiles files.
func testConfig(maxFiles int) Config {
	return Config{MaxSize: 100, MaxFiles: maxFiles, MonitorInterval: 10 * time.Second, MaxWorkers: 1}
}

// container adds a running container whose log is <dir>/<id>/0.log holding content.
func (h *harness) container(t *testing.T, id, content string) string {
	t.Helper()
	log := filepath.Join(h.dir, id, "0.log")
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, log, content)
	h.rt.add(id, log, running)
	return log
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o640); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, compressSuffix) {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("gunzip %s: %v", path, err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatalf("gunzip %s: %v", path, err)
		}
	}
	return string(b)
}

// ls lists a directory's file names, sorted.
func ls(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestBelowMaxSizeNothingHappens(t *testing.T) {
	h := newHarness(t, testConfig(5))
	log := h.container(t, "c1", strings.Repeat("x", 99))
	h.m.rotateAll(context.Background())
	if got := ls(t, filepath.Dir(log)); !slices.Equal(got, []string{"0.log"}) {
		t.Errorf("files %q, want only 0.log", got)
	}
	if got := h.rt.reopened(); len(got) != 0 {
		t.Errorf("reopened %q, want none", got)
	}
}

// TestKnownPathSavesStatusCalls: once a container's log path is known, a log below MaxSize costs
// no CRI call; one that reached it is checked with the runtime and rotated; a container that no
// longer runs is forgotten.
func TestKnownPathSavesStatusCalls(t *testing.T) {
	h := newHarness(t, testConfig(5))
	log := h.container(t, "c1", strings.Repeat("x", 10))
	ctx := context.Background()
	h.m.rotateAll(ctx)
	h.m.rotateAll(ctx)
	h.m.rotateAll(ctx)
	if got := h.rt.statuses(); got != 1 {
		t.Errorf("ContainerStatus called %d times in three checks of a small log, want 1", got)
	}
	write(t, log, strings.Repeat("x", 100))
	h.m.rotateAll(ctx)
	if got := h.rt.statuses(); got != 2 {
		t.Errorf("ContainerStatus called %d times, want 2 once the log reached MaxSize", got)
	}
	if got := h.rt.reopened(); !slices.Equal(got, []string{"c1"}) {
		t.Errorf("reopened %q, want [c1]", got)
	}
	h.rt.add("c1", log, runtimeapi.ContainerState_CONTAINER_EXITED)
	h.m.rotateAll(ctx)
	if _, ok := h.m.knownPath("c1"); ok {
		t.Error("the log path of a container that stopped is still remembered")
	}
}

func TestAtMaxSizeRotatesAndReopens(t *testing.T) {
	h := newHarness(t, testConfig(5))
	content := strings.Repeat("x", 100)
	log := h.container(t, "c1", content)
	h.m.rotateAll(context.Background())
	if got, want := ls(t, filepath.Dir(log)), []string{"0.log", "0.log.20260301-120000"}; !slices.Equal(got, want) {
		t.Fatalf("files %q, want %q", got, want)
	}
	if got := read(t, log+".20260301-120000"); got != content {
		t.Errorf("rotated log holds %q, want the old content", got)
	}
	if got := read(t, log); got != "" {
		t.Errorf("new log holds %q, want the empty file the runtime reopened", got)
	}
	if got := h.rt.reopened(); !slices.Equal(got, []string{"c1"}) {
		t.Errorf("reopened %q, want [c1]", got)
	}
}

// TestManyRotations rotates six times, ten seconds apart, each round's log holding its number.
func TestManyRotations(t *testing.T) {
	tests := []struct {
		maxFiles int
		want     []string
	}{
		{2, []string{"0.log", "0.log.20260301-120050"}},
		{3, []string{"0.log", "0.log.20260301-120040.gz", "0.log.20260301-120050"}},
		{5, []string{"0.log", "0.log.20260301-120020.gz", "0.log.20260301-120030.gz", "0.log.20260301-120040.gz", "0.log.20260301-120050"}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("maxFiles %d", tc.maxFiles), func(t *testing.T) {
			h := newHarness(t, testConfig(tc.maxFiles))
			log := h.container(t, "c1", "")
			for round := range 6 {
				write(t, log, fmt.Sprintf("%03d", round)+strings.Repeat("x", 100))
				h.m.rotateAll(context.Background())
				if n := len(ls(t, filepath.Dir(log))); n > tc.maxFiles {
					t.Fatalf("round %d: %d files, more than maxFiles %d", round, n, tc.maxFiles)
				}
				h.clock.Step(10 * time.Second)
			}
			got := ls(t, filepath.Dir(log))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("files %q, want %q", got, tc.want)
			}
			// Round n rotated at 12:00:n0, so a rotated file's tens of seconds name its round.
			for _, name := range got[1:] {
				round := name[len("0.log.20260301-1200")]
				if content := read(t, filepath.Join(filepath.Dir(log), name)); !strings.HasPrefix(content, "00"+string(round)) {
					t.Errorf("%s holds %.10q..., want round %c's log", name, content, round)
				}
			}
		})
	}
}

func TestRotationWithinOneSecondKeepsBothLogs(t *testing.T) {
	h := newHarness(t, testConfig(5))
	log := h.container(t, "c1", "first"+strings.Repeat("x", 100))
	h.m.rotateAll(context.Background())
	write(t, log, "second"+strings.Repeat("x", 100))
	h.m.rotateAll(context.Background()) // the clock has not moved
	want := []string{"0.log", "0.log.20260301-120000.gz", "0.log.20260301-120001"}
	if got := ls(t, filepath.Dir(log)); !slices.Equal(got, want) {
		t.Fatalf("files %q, want %q", got, want)
	}
	if !strings.HasPrefix(read(t, log+".20260301-120000.gz"), "first") || !strings.HasPrefix(read(t, log+".20260301-120001"), "second") {
		t.Error("rotated logs do not hold the first and second contents in order")
	}
}

func TestLeftoversOfAnInterruptedRotationAreRemoved(t *testing.T) {
	h := newHarness(t, testConfig(5))
	log := h.container(t, "c1", strings.Repeat("x", 100))
	write(t, log+".20260301-115900.tmp", "partial gzip")        // crash while compressing
	write(t, log+".20260301-115910", "compressed already")      // crash after the .gz rename...
	write(t, log+".20260301-115910.gz", "not read by the test") // ...before removing the original
	h.m.rotateAll(context.Background())
	want := []string{"0.log", "0.log.20260301-115910.gz", "0.log.20260301-120000"}
	if got := ls(t, filepath.Dir(log)); !slices.Equal(got, want) {
		t.Errorf("files %q, want %q", got, want)
	}
}

func TestReopenFailureRenamesTheLogBack(t *testing.T) {
	for _, stopped := range []bool{false, true} {
		t.Run(fmt.Sprintf("container stopped %v", stopped), func(t *testing.T) {
			h := newHarness(t, testConfig(5))
			content := strings.Repeat("x", 100)
			log := h.container(t, "c1", content)
			write(t, log+".20260301-115900", "older")
			h.rt.setReopenErr("c1", errors.New("container is not running"))
			h.rt.stopOnReopen = stopped
			h.m.rotateAll(context.Background())
			// The older rotated file was compressed; the log is back under its name.
			want := []string{"0.log", "0.log.20260301-115900.gz"}
			if got := ls(t, filepath.Dir(log)); !slices.Equal(got, want) {
				t.Errorf("files %q, want %q", got, want)
			}
			if got := read(t, log); got != content {
				t.Errorf("log holds %q, want its content back", got)
			}
			if got := h.rt.reopened(); !slices.Equal(got, []string{"c1"}) {
				t.Errorf("reopened %q, want [c1]", got)
			}
		})
	}
}

func TestContainersSkipped(t *testing.T) {
	h := newHarness(t, testConfig(5))
	big := strings.Repeat("x", 100)
	h.rt.add("no-log", "", running)
	h.rt.add("relative", "relative/0.log", running)
	exited := h.container(t, "exited", big)
	h.rt.add("exited", exited, runtimeapi.ContainerState_CONTAINER_EXITED)
	h.m.rotateAll(context.Background())
	if got := h.rt.reopened(); len(got) != 0 {
		t.Errorf("reopened %q, want none", got)
	}
	if got := ls(t, filepath.Dir(exited)); !slices.Equal(got, []string{"0.log"}) {
		t.Errorf("exited container's files %q, want only 0.log", got)
	}
}

func TestMissingLogIsReopened(t *testing.T) {
	h := newHarness(t, testConfig(5))
	log := h.container(t, "c1", "")
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	h.m.rotateAll(context.Background())
	if got := h.rt.reopened(); !slices.Equal(got, []string{"c1"}) {
		t.Errorf("reopened %q, want [c1]", got)
	}
	if got := ls(t, filepath.Dir(log)); !slices.Equal(got, []string{"0.log"}) {
		t.Errorf("files %q, want the recreated 0.log only", got)
	}
}

func TestListErrorRotatesNothing(t *testing.T) {
	h := newHarness(t, testConfig(5))
	log := h.container(t, "c1", strings.Repeat("x", 100))
	h.rt.listErr = errors.New("runtime down")
	h.m.rotateAll(context.Background())
	if got := ls(t, filepath.Dir(log)); !slices.Equal(got, []string{"0.log"}) {
		t.Errorf("files %q, want only 0.log", got)
	}
}

func TestWorkersRotateEveryContainer(t *testing.T) {
	cfg := testConfig(5)
	cfg.MaxWorkers = 3
	h := newHarness(t, cfg)
	var logs []string
	for i := range 7 {
		logs = append(logs, h.container(t, fmt.Sprintf("c%d", i), strings.Repeat("x", 100)))
	}
	h.m.rotateAll(context.Background())
	for _, log := range logs {
		if got := ls(t, filepath.Dir(log)); !slices.Equal(got, []string{"0.log", "0.log.20260301-120000"}) {
			t.Errorf("%s: files %q, want it rotated", log, got)
		}
	}
	if got := len(h.rt.reopened()); got != len(logs) {
		t.Errorf("%d reopens, want %d", got, len(logs))
	}
}
