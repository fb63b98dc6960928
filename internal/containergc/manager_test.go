package containergc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	testingclock "k8s.io/utils/clock/testing"
)

// fakeRuntime is the CRI and the runtime manager: removing a container or sandbox drops it
// from the listings.
type fakeRuntime struct {
	mu         sync.Mutex
	containers []*runtimeapi.Container
	sandboxes  []*runtimeapi.PodSandbox
	calls      []string
	fail       map[string]error // by call and ID: "RemoveContainer x"
	listErr    error
	listed     chan struct{}
	events     []string
}

var (
	_ Runtime    = (*fakeRuntime)(nil)
	_ Containers = (*fakeRuntime)(nil)
	_ Recorder   = (*fakeRuntime)(nil)
)

func (f *fakeRuntime) call(name, id string) error {
	f.calls = append(f.calls, name+" "+id)
	return f.fail[name+" "+id]
}

func (f *fakeRuntime) ListContainers(context.Context, *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listed != nil {
		f.listed <- struct{}{}
	}
	return slices.Clone(f.containers), f.listErr
}

func (f *fakeRuntime) ListPodSandbox(context.Context, *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sandboxes), nil
}

func (f *fakeRuntime) StopPodSandbox(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.call("StopPodSandbox", id)
}

func (f *fakeRuntime) RemovePodSandbox(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("RemovePodSandbox", id); err != nil {
		return err
	}
	f.sandboxes = slices.DeleteFunc(f.sandboxes, func(s *runtimeapi.PodSandbox) bool { return s.Id == id })
	return nil
}

func (f *fakeRuntime) KillContainer(_ context.Context, id, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.call("KillContainer", id)
}

func (f *fakeRuntime) RemoveContainer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("RemoveContainer", id); err != nil {
		return err
	}
	f.containers = slices.DeleteFunc(f.containers, func(c *runtimeapi.Container) bool { return c.Id == id })
	return nil
}

func (f *fakeRuntime) NodeEventf(eventType, reason, format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, eventType+" "+reason+" "+fmt.Sprintf(format, args...))
}

func (f *fakeRuntime) removals() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if !strings.HasPrefix(c, "StopPodSandbox") {
			out = append(out, c)
		}
	}
	return out
}

const (
	ready    = runtimeapi.PodSandboxState_SANDBOX_READY
	notReady = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
)

// newNode is a node with a crash-looping pod "app" (three dead instances of web, an older
// sandbox), a deleted pod "gone" and a terminated, not deleted pod "done"; each has a log
// directory, as has a pod long gone.
func newNode(t *testing.T) (*fakeRuntime, fakePods, string) {
	old := t0.Add(-time.Hour).UnixNano()
	withSandbox := func(c *runtimeapi.Container, sb string) *runtimeapi.Container { c.PodSandboxId = sb; return c }
	f := &fakeRuntime{
		containers: []*runtimeapi.Container{
			withSandbox(exited("app", "web", 0, old), "sb-app-1"), withSandbox(exited("app", "web", 1, old+1), "sb-app-1"),
			withSandbox(exited("app", "web", 2, old+2), "sb-app-1"),
			withSandbox(ctr("app", "web", 3, old+3, runtimeapi.ContainerState_CONTAINER_RUNNING), "sb-app-1"),
			withSandbox(exited("gone", "c", 0, old), "sb-gone-0"),
			withSandbox(exited("done", "c", 0, old), "sb-done-0"),
		},
		sandboxes: []*runtimeapi.PodSandbox{sandbox("app", 0, notReady, old), sandbox("app", 1, ready, old+1),
			sandbox("gone", 0, notReady, old), sandbox("done", 0, notReady, old)},
	}
	pods := fakePods{removed: sets.New[types.UID]("uid-gone", "uid-long-gone"), terminated: sets.New[types.UID]("uid-gone", "uid-long-gone", "uid-done")}
	dir := t.TempDir()
	for _, name := range []string{"default_app_uid-app", "default_gone_uid-gone", "default_done_uid-done", "default_old_uid-long-gone"} {
		if err := os.MkdirAll(filepath.Join(dir, name, "c"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f, pods, dir
}

func newManager(t *testing.T, f *fakeRuntime, pods PodState, dir string, ready bool, clk *testingclock.FakeClock) *Manager {
	t.Helper()
	m, err := New(Config{Policy: DefaultPolicy(), PodLogsDir: dir, Period: time.Second},
		Deps{Runtime: f, Containers: f, Pods: pods, SourcesReady: func() bool { return ready }, Recorder: f, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func logDirs(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestGarbageCollect(t *testing.T) {
	f, pods, dir := newNode(t)
	m := newManager(t, f, pods, dir, true, testingclock.NewFakeClock(t0))

	if err := m.GarbageCollect(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	want := []string{"RemoveContainer app-web-0", "RemoveContainer app-web-1", "RemovePodSandbox sb-app-0"}
	if got := f.removals(); !slices.Equal(got, want) {
		t.Errorf("sources not ready: removed %q, want %q (the deleted pod's container and log directory stay)", got, want)
	}
	if got := logDirs(t, dir); len(got) != 4 {
		t.Errorf("sources not ready: log directories %v, want all four", got)
	}

	f.calls = nil
	if err := m.GarbageCollect(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	want = []string{"RemoveContainer gone-c-0", "RemovePodSandbox sb-gone-0"}
	if got := f.removals(); !slices.Equal(got, want) {
		t.Errorf("removed %q, want %q", got, want)
	}
	if got, want := logDirs(t, dir), []string{"default_app_uid-app", "default_done_uid-done"}; !slices.Equal(got, want) {
		t.Errorf("log directories %v, want %v (those of deleted pods go)", got, want)
	}
	if slices.Contains(f.calls, "StopPodSandbox sb-gone-0") == false {
		t.Errorf("the sandbox was not stopped before its removal: %q", f.calls)
	}

	// The eviction manager's reclaim: the terminated pod loses its container and sandbox too.
	f.calls = nil
	if err := m.DeleteAllUnusedContainers(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := f.removals(), []string{"RemoveContainer done-c-0", "RemovePodSandbox sb-done-0"}; !slices.Equal(got, want) {
		t.Errorf("DeleteAllUnusedContainers removed %q, want %q", got, want)
	}
	if got, want := logDirs(t, dir), []string{"default_app_uid-app", "default_done_uid-done"}; !slices.Equal(got, want) {
		t.Errorf("log directories %v, want %v (a terminated pod that is not deleted keeps its logs)", got, want)
	}
}

func TestGarbageCollectFailures(t *testing.T) {
	f, pods, dir := newNode(t)
	f.containers = append(f.containers, ctr("gone", "c", 1, t0.Add(-time.Hour).UnixNano()+1, runtimeapi.ContainerState_CONTAINER_UNKNOWN),
		ctr("gone", "c", 2, t0.Add(-time.Hour).UnixNano()+2, runtimeapi.ContainerState_CONTAINER_UNKNOWN))
	f.fail = map[string]error{
		"KillContainer gone-c-2":     errors.New("runtime timeout"),
		"RemoveContainer app-web-0":  errors.New("device busy"),
		"StopPodSandbox sb-app-0":    errors.New("network plugin down"),
		"RemovePodSandbox sb-gone-0": errors.New("device busy"),
	}
	m := newManager(t, f, pods, dir, true, testingclock.NewFakeClock(t0))
	if err := m.GarbageCollect(context.Background(), true); err != nil {
		t.Fatalf("removal failures are logged, not returned: %v", err)
	}
	want := []string{"RemoveContainer gone-c-0", "KillContainer gone-c-1", "RemoveContainer gone-c-1", "KillContainer gone-c-2",
		"RemoveContainer app-web-0", "RemoveContainer app-web-1", "RemovePodSandbox sb-gone-0"}
	if got := f.removals(); !slices.Equal(got, want) {
		t.Errorf("calls %q, want %q (unknown containers stopped first; one that cannot be stopped stays)", got, want)
	}
	if got, want := logDirs(t, dir), []string{"default_app_uid-app", "default_done_uid-done", "default_gone_uid-gone"}; !slices.Equal(got, want) {
		t.Errorf("log directories %v, want %v (a pod whose sandbox is left keeps its logs)", got, want)
	}

	f.listErr = errors.New("connection refused")
	err := m.GarbageCollect(context.Background(), true)
	if err == nil || !strings.Contains(err.Error(), "list containers: connection refused") {
		t.Errorf("listing failure: %v", err)
	}
}

// TestRun runs in a synctest bubble: synctest.Wait returns once the collector waits for its
// next period on the fake clock.
func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, pods, dir := newNode(t)
		f.listed = make(chan struct{}, 10) // two listings a pass
		f.listErr = errors.New("connection refused")
		clk := testingclock.NewFakeClock(t0)
		m := newManager(t, f, pods, dir, true, clk)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); m.Run(ctx) }()

		<-f.listed // at once
		synctest.Wait()
		if !clk.HasWaiters() {
			t.Fatal("the collector does not wait for its next period")
		}
		f.mu.Lock()
		events := slices.Clone(f.events)
		f.mu.Unlock()
		if len(events) != 1 || !strings.HasPrefix(events[0], "Warning ContainerGCFailed list containers: connection refused") {
			t.Errorf("events %q, want one ContainerGCFailed", events)
		}
		clk.Step(time.Second)
		<-f.listed // after the period
		cancel()
		<-done
	})
}

func TestNewChecks(t *testing.T) {
	f, pods, dir := newNode(t)
	deps := Deps{Runtime: f, Containers: f, Pods: pods, SourcesReady: func() bool { return true }, Recorder: f, Clock: testingclock.NewFakeClock(t0)}
	for _, tc := range []struct {
		name string
		cfg  Config
		deps Deps
		want string
	}{
		{"negative minimum age", Config{Policy: Policy{MinAge: -time.Second}, PodLogsDir: dir}, deps, "invalid minimum garbage collection age: -1s"},
		{"negative period", Config{PodLogsDir: dir, Period: -time.Second}, deps, "period -1s must not be negative"},
		{"no log directory", Config{}, deps, "PodLogsDir is required"},
		{"no clock", Config{PodLogsDir: dir}, Deps{Runtime: f}, "are required"},
	} {
		if _, err := New(tc.cfg, tc.deps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	m, err := New(Config{PodLogsDir: dir}, deps)
	if err != nil || m.cfg.Period != DefaultPeriod {
		t.Errorf("default period: %v, %v", m, err)
	}
}
