package podconfig

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// recorder is a Sink and a Reporter that keeps what it was given.
type recorder struct {
	snapshots chan []*v1.Pod
	reported  chan struct{}
	mu        sync.Mutex
	reports   []string
}

var (
	_ Sink     = (*recorder)(nil)
	_ Reporter = (*recorder)(nil)
)

func newRecorder() *recorder {
	return &recorder{snapshots: make(chan []*v1.Pod, 100), reported: make(chan struct{}, 1000)}
}

func (r *recorder) Send(ctx context.Context, _ string, pods []*v1.Pod) error {
	select {
	case r.snapshots <- pods:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *recorder) Report(source, origin string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, fmt.Sprintf("%s %s: %v", source, origin, err))
	select {
	case r.reported <- struct{}{}:
	default:
	}
}

func (r *recorder) reportsFor(sub string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.reports {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}

func names(pods []*v1.Pod) string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// waitFor reads snapshots until one has exactly the wanted pod names. fsnotify delivers events
// asynchronously, so the test waits for the outcome, not for a time (go test's -timeout ends a
// wait that never ends; in a synctest bubble, synctest reports it at once).
func (r *recorder) waitFor(t *testing.T, want string) []*v1.Pod {
	t.Helper()
	for {
		if pods := <-r.snapshots; names(pods) == want {
			return pods
		}
	}
}

func manifest(name, image string) []byte {
	return []byte(fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec: {containers: [{name: c, image: %q}]}\n", name, image))
}

func startFileSource(t *testing.T, path string) (*recorder, *clocktesting.FakeClock) {
	t.Helper()
	rec := newRecorder()
	clk := clocktesting.NewFakeClock(time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := RunFileSource(ctx, FileConfig{Path: path, NodeName: "n1", Period: 20 * time.Second, Clock: clk, Sink: rec, Reporter: rec}); err != nil {
			t.Errorf("RunFileSource: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return rec, clk
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeAtomic writes a file as editors do (a hidden temp file renamed over it), so that the
// source never sees it half-written; a plain write is a truncate then a write, two changes.
func writeAtomic(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	write(t, tmp, data)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestFileSourceFollowsFsnotifyEvents(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), manifest("a", "busybox:1"))
	rec, _ := startFileSource(t, dir) // the fake clock never ticks: only fsnotify can show changes
	first := rec.waitFor(t, "a-n1")

	write(t, filepath.Join(dir, "b.json"), []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`))
	beforeRename := rec.waitFor(t, "a-n1,b-n1")

	write(t, filepath.Join(dir, "a.yaml"), manifest("a", "busybox:2")) // modify
	pods := rec.waitFor(t, "a-n1,b-n1")
	for ; pods[0].Spec.Containers[0].Image != "busybox:2"; pods = rec.waitFor(t, "a-n1,b-n1") {
	}
	if pods[0].UID == first[0].UID {
		t.Error("a modified manifest keeps its UID; it must get a new one")
	}

	if err := os.Rename(filepath.Join(dir, "b.json"), filepath.Join(dir, "c.json")); err != nil { // rename
		t.Fatal(err)
	}
	// The same pod in a new file: the file path is part of the UID, as upstream.
	renamed := rec.waitFor(t, "a-n1,b-n1")
	for ; renamed[1].UID == beforeRename[1].UID; renamed = rec.waitFor(t, "a-n1,b-n1") {
	}

	if err := os.Remove(filepath.Join(dir, "c.json")); err != nil { // delete
		t.Fatal(err)
	}
	rec.waitFor(t, "a-n1")

	// Atomic save: write a hidden temp file (ignored), then rename it over the manifest.
	tmp := filepath.Join(dir, ".a.yaml.swp")
	write(t, tmp, manifest("a2", "busybox:3"))
	if err := os.Rename(tmp, filepath.Join(dir, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "a2-n1")
}

func TestFileSourceSingleFileAtomicSave(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pod.yaml")
	write(t, path, manifest("one", "busybox:1"))
	rec, _ := startFileSource(t, path)
	rec.waitFor(t, "one-n1")
	tmp := filepath.Join(dir, "pod.yaml.tmp")
	write(t, tmp, manifest("two", "busybox:1"))
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "two-n1")
}

func TestFileSourceReportsBadFilesOncePerChange(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "good.yaml"), manifest("good", "busybox"))
	write(t, filepath.Join(dir, "bad.yaml"), []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: [{name: c, image: x, bogus: 1}]}\n"))
	write(t, filepath.Join(dir, "zz-dup.yaml"), manifest("good", "busybox:2"))
	write(t, filepath.Join(dir, ".hidden.yaml"), []byte("garbage"))
	if err := os.Mkdir(filepath.Join(dir, "subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	rec, clk := startFileSource(t, dir)
	rec.waitFor(t, "good-n1")
	// A new file that sorts first and reuses a running pod's name does not displace it.
	writeAtomic(t, filepath.Join(dir, "aaa-newcomer.yaml"), manifest("good", "busybox:3"))
	clk.Step(21 * time.Second)
	if pods := rec.waitFor(t, "good-n1"); pods[0].Spec.Containers[0].Image != "busybox" {
		t.Fatalf("the newcomer displaced the running pod: image %s", pods[0].Spec.Containers[0].Image)
	}
	for range 3 { // periodic re-reads must not repeat the reports
		clk.Step(21 * time.Second)
		rec.waitFor(t, "good-n1")
	}
	if r := rec.reportsFor("bad.yaml"); len(r) != 1 || !strings.Contains(r[0], `unknown field "spec.containers[0].bogus"`) {
		t.Fatalf("bad.yaml reports: %q", r)
	}
	if r := rec.reportsFor("zz-dup.yaml"); len(r) != 1 || !strings.Contains(r[0], "already defined in") || !strings.HasPrefix(r[0], "file "+filepath.Join(dir, "zz-dup.yaml")) {
		t.Fatalf("zz-dup.yaml reports: %q", r)
	}
	if r := rec.reportsFor("aaa-newcomer.yaml"); len(r) != 1 || !strings.HasPrefix(r[0], "file "+filepath.Join(dir, "aaa-newcomer.yaml")) || !strings.Contains(r[0], "good.yaml") {
		t.Fatalf("newcomer reports: %q", r)
	}
	if r := rec.reportsFor("subdir"); len(r) != 1 {
		t.Fatalf("subdir reports: %q", r)
	}
	if r := rec.reportsFor("hidden"); len(r) != 0 {
		t.Fatalf("hidden files are ignored, got %q", r)
	}
	// A change to the bad file is reported again; fixing it brings its pod in. The change is
	// saved atomically: a truncate-then-write is two changes, each reported.
	writeAtomic(t, filepath.Join(dir, "bad.yaml"), []byte("not: [valid"))
	rec.waitFor(t, "good-n1")
	// The change is read by the pass fsnotify starts or by a periodic one: each time a pass
	// ends (its snapshot) without the report, the clock is stepped to the next one.
	for passes := 0; len(rec.reportsFor("bad.yaml")) < 2 && passes < 20; {
		select {
		case <-rec.reported:
		case <-rec.snapshots:
			passes++
			clk.Step(21 * time.Second)
		}
	}
	if r := rec.reportsFor("bad.yaml"); len(r) != 2 {
		t.Fatalf("after a change, bad.yaml reports: %q", r)
	}
	write(t, filepath.Join(dir, "bad.yaml"), manifest("fixed", "busybox"))
	rec.waitFor(t, "fixed-n1,good-n1")
}

func TestFileSourceMissingPathIsEmptyThenPickedUp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "later")
	rec, clk := startFileSource(t, dir)
	rec.waitFor(t, "")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "a.yaml"), manifest("a", "busybox"))
	clk.Step(21 * time.Second)
	rec.waitFor(t, "a-n1")
	if r := rec.reportsFor("later"); len(r) != 1 {
		t.Fatalf("missing path reports: %q", r)
	}
}
