package syncloop

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/podmanager"
	"github.com/nodelet/nodelet/internal/podworkers"
	"github.com/nodelet/nodelet/internal/statusmanager"
)

type fakeWorkers struct {
	mu         sync.Mutex
	calls      []string
	terminated map[types.UID]bool
	known      map[types.UID]podworkers.WorkType
}

var _ Workers = (*fakeWorkers)(nil)

func (f *fakeWorkers) UpdatePod(o podworkers.UpdatePodOptions) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("%s %s", o.UpdateType, o.Pod.UID))
	if _, ok := f.known[o.Pod.UID]; !ok {
		f.known[o.Pod.UID] = podworkers.SyncPod
	}
}

// SyncKnownPods forgets nothing and returns a copy of known.
func (f *fakeWorkers) SyncKnownPods([]*v1.Pod) map[types.UID]podworkers.WorkType {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.known)
}
func (f *fakeWorkers) IsPodKnownTerminated(uid types.UID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.terminated[uid]
}

// ShouldPodRuntimeBeRemoved: terminated, or unknown.
func (f *fakeWorkers) ShouldPodRuntimeBeRemoved(uid types.UID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, known := f.known[uid]
	return f.terminated[uid] || !known
}
func (f *fakeWorkers) setTerminated(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.terminated[uid] = true
	f.known[uid] = podworkers.TerminatedPod
}
func (f *fakeWorkers) take() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := strings.Join(f.calls, ", ")
	f.calls = nil
	return s
}

// fakeCleaner lists pods and records removals. With hold set, RemovePodByUID blocks until a
// value is sent on release (or ctx ends); GetPods blocks likewise with holdList.
type fakeCleaner struct {
	release chan struct{}

	mu       sync.Mutex // housekeeping removes pods concurrently
	pods     []*container.Pod
	removed  []types.UID
	running  int // removals in progress
	most     int // the most removals in progress at once
	err      error
	gcs      int
	hold     bool
	holdList bool
	lists    int
}

var _ Cleaner = (*fakeCleaner)(nil)

func (f *fakeCleaner) GCBackOff() { f.mu.Lock(); defer f.mu.Unlock(); f.gcs++ }

func (f *fakeCleaner) GetPods(ctx context.Context) ([]*container.Pod, error) {
	f.mu.Lock()
	f.lists++
	hold := f.holdList
	f.mu.Unlock()
	if hold {
		select {
		case <-f.release:
		case <-ctx.Done():
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.pods), f.err
}

func (f *fakeCleaner) RemovePodByUID(ctx context.Context, uid types.UID) error {
	f.mu.Lock()
	f.running++
	f.most = max(f.most, f.running)
	hold := f.hold
	f.mu.Unlock()
	if hold {
		select {
		case <-f.release:
		case <-ctx.Done():
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running--
	f.removed = append(f.removed, uid)
	slices.Sort(f.removed) // in any order
	f.pods = slices.DeleteFunc(f.pods, func(p *container.Pod) bool { return p.ID == uid })
	return nil
}

func (f *fakeCleaner) snapshot() (removed string, running, most int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fmt.Sprint(f.removed), f.running, f.most
}

type fakeDirs struct {
	mu       sync.Mutex
	dirs     []types.UID
	tornDown []types.UID
}

var _ OrphanDirs = (*fakeDirs)(nil)

func (f *fakeDirs) PodDirs() ([]types.UID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.dirs), nil
}
func (f *fakeDirs) TearDown(uid types.UID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if slices.Contains(f.dirs, uid) {
		f.tornDown = append(f.tornDown, uid)
		slices.Sort(f.tornDown)
		f.dirs = slices.DeleteFunc(f.dirs, func(u types.UID) bool { return u == uid })
	}
	return nil
}

// fakeForget holds statuses by UID and records the ones forgotten.
type fakeForget struct {
	mu        sync.Mutex
	statuses  []types.UID
	forgotten []types.UID
}

var _ Statuses = (*fakeForget)(nil)

func (f *fakeForget) Forget(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgotten = append(f.forgotten, uid)
	slices.Sort(f.forgotten) // housekeeping removes pods concurrently
	f.statuses = slices.DeleteFunc(f.statuses, func(u types.UID) bool { return u == uid })
}

func (f *fakeForget) Versioned() []statusmanager.Versioned {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []statusmanager.Versioned
	for _, uid := range f.statuses {
		out = append(out, statusmanager.Versioned{Pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}}})
	}
	return out
}

func (f *fakeForget) forgottenString() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fmt.Sprint(f.forgotten)
}

type fakeProbes struct{ calls []string }

var _ Probes = (*fakeProbes)(nil)

func (f *fakeProbes) AddPod(p *v1.Pod)    { f.calls = append(f.calls, "add "+string(p.UID)) }
func (f *fakeProbes) RemovePod(p *v1.Pod) { f.calls = append(f.calls, "remove "+string(p.UID)) }

func tpod(name, uid string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(uid)}}
}

func newTestDispatcher() (*Dispatcher, *podmanager.Manager, *fakeWorkers, *fakeCleaner, *fakeDirs, *fakeForget) {
	pm := podmanager.New()
	w := &fakeWorkers{terminated: map[types.UID]bool{}, known: map[types.UID]podworkers.WorkType{}}
	c, d, f := &fakeCleaner{release: make(chan struct{})}, &fakeDirs{}, &fakeForget{}
	return mustDispatcher(DispatcherDeps{Desired: pm, Workers: w, Cleaner: c, Dirs: d, Statuses: f, Probes: &fakeProbes{}}), pm, w, c, d, f
}

func TestDispatchOps(t *testing.T) {
	d, pm, w, _, _, _ := newTestDispatcher()
	a, b := tpod("a", "1"), tpod("b", "2")
	steps := []struct {
		update  podconfig.PodUpdate
		want    string
		desired int
	}{
		{podconfig.PodUpdate{Op: podconfig.ADD, Pods: []*v1.Pod{a, b}}, "create 1, create 2", 2},
		{podconfig.PodUpdate{Op: podconfig.UPDATE, Pods: []*v1.Pod{a}}, "update 1", 2},
		{podconfig.PodUpdate{Op: podconfig.DELETE, Pods: []*v1.Pod{a}}, "update 1", 2},
		{podconfig.PodUpdate{Op: podconfig.RECONCILE, Pods: []*v1.Pod{b}}, "", 2},
		{podconfig.PodUpdate{Op: podconfig.REMOVE, Pods: []*v1.Pod{a}}, "kill 1", 1},
		{podconfig.PodUpdate{Op: podconfig.ADD, Pods: nil}, "", 1},
	}
	for i, s := range steps {
		d.HandlePodUpdate(s.update)
		if got := w.take(); got != s.want {
			t.Errorf("step %d (%v): worker calls %q, want %q", i, s.update.Op, got, s.want)
		}
		if n := len(pm.Pods()); n != s.desired {
			t.Errorf("step %d: %d desired pods, want %d", i, n, s.desired)
		}
	}
	if got := strings.Join(d.probes.(*fakeProbes).calls, ", "); got != "add 1, add 2, add 1, add 1, remove 1" {
		t.Errorf("probe registrations: %q", got)
	}
	d.HandleSyncs([]types.UID{"1", "2", "unknown"})
	if got := w.take(); got != "sync 2" {
		t.Errorf("syncs: %q, want only the desired pod", got)
	}
}

// An edited static pod (same name, new UID) starts only once the old one has terminated.
func TestReplacementWaitsForPredecessor(t *testing.T) {
	d, _, w, _, _, _ := newTestDispatcher()
	old, cur := tpod("web", "old"), tpod("web", "new")
	d.HandlePodUpdate(podconfig.PodUpdate{Op: podconfig.ADD, Pods: []*v1.Pod{old}})
	w.take()
	d.HandlePodUpdate(podconfig.PodUpdate{Op: podconfig.REMOVE, Pods: []*v1.Pod{old}})
	d.HandlePodUpdate(podconfig.PodUpdate{Op: podconfig.ADD, Pods: []*v1.Pod{cur}})
	if got := w.take(); got != "kill old" {
		t.Fatalf("calls %q: the new pod must wait", got)
	}
	d.HandleSyncs([]types.UID{"new"})
	d.HandlePodUpdate(podconfig.PodUpdate{Op: podconfig.UPDATE, Pods: []*v1.Pod{cur}})
	if got := w.take(); got != "" {
		t.Fatalf("calls %q while the old pod terminates", got)
	}
	w.setTerminated("old")
	d.HandleSyncs(nil)
	if got := w.take(); got != "create new" {
		t.Fatalf("calls %q after the old pod terminated, want the create", got)
	}
}

// mustDispatcher is NewDispatcher with dependencies known to be complete.
func mustDispatcher(deps DispatcherDeps) *Dispatcher {
	d, err := NewDispatcher(deps)
	if err != nil {
		panic(err)
	}
	return d
}
