package syncloop

import (
	"context"
	"errors"
	"fmt"
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
}
func (f *fakeWorkers) SyncKnownPods([]*v1.Pod) map[types.UID]podworkers.WorkType { return f.known }
func (f *fakeWorkers) IsPodKnownTerminated(uid types.UID) bool                   { return f.terminated[uid] }
func (f *fakeWorkers) ShouldPodRuntimeBeRemoved(uid types.UID) bool              { return f.terminated[uid] }
func (f *fakeWorkers) take() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := strings.Join(f.calls, ", ")
	f.calls = nil
	return s
}

type fakeCleaner struct {
	mu      sync.Mutex // housekeeping removes pods concurrently
	pods    []*container.Pod
	removed []types.UID
	err     error
	gcs     int
}

func (f *fakeCleaner) GCBackOff() { f.gcs++ }

var _ Cleaner = (*fakeCleaner)(nil)

func (f *fakeCleaner) GetPods(context.Context) ([]*container.Pod, error) { return f.pods, f.err }
func (f *fakeCleaner) RemovePodByUID(_ context.Context, uid types.UID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removed = append(f.removed, uid)
	slices.Sort(f.removed) // in any order
	return nil
}

type fakeDirs struct {
	dirs     []types.UID
	tornDown []types.UID
}

var _ OrphanDirs = (*fakeDirs)(nil)

func (f *fakeDirs) PodDirs() ([]types.UID, error) { return f.dirs, nil }
func (f *fakeDirs) TearDown(uid types.UID) error  { f.tornDown = append(f.tornDown, uid); return nil }

type fakeForget struct {
	mu        sync.Mutex
	forgotten []types.UID
}

type fakeProbes struct{ calls []string }

var _ Probes = (*fakeProbes)(nil)

func (f *fakeProbes) AddPod(p *v1.Pod)    { f.calls = append(f.calls, "add "+string(p.UID)) }
func (f *fakeProbes) RemovePod(p *v1.Pod) { f.calls = append(f.calls, "remove "+string(p.UID)) }

func (f *fakeForget) Forget(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgotten = append(f.forgotten, uid)
	slices.Sort(f.forgotten) // housekeeping removes pods concurrently
}

func tpod(name, uid string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(uid)}}
}

func newTestDispatcher() (*Dispatcher, *podmanager.Manager, *fakeWorkers, *fakeCleaner, *fakeDirs, *fakeForget) {
	pm := podmanager.New()
	w := &fakeWorkers{terminated: map[types.UID]bool{}, known: map[types.UID]podworkers.WorkType{}}
	c, d, f := &fakeCleaner{}, &fakeDirs{}, &fakeForget{}
	return NewDispatcher(pm, w, c, d, f, &fakeProbes{}), pm, w, c, d, f
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
	w.terminated["old"] = true
	d.HandleSyncs(nil)
	if got := w.take(); got != "create new" {
		t.Fatalf("calls %q after the old pod terminated, want the create", got)
	}
}

func TestHousekeeping(t *testing.T) {
	d, pm, w, c, dirs, f := newTestDispatcher()
	pm.AddOrUpdate(tpod("kept", "kept"))
	c.pods = []*container.Pod{{ID: "kept"}, {ID: "stopping"}, {ID: "done"}, {ID: "stranger"}}
	w.known = map[types.UID]podworkers.WorkType{"kept": podworkers.SyncPod, "stopping": podworkers.TerminatingPod, "done": podworkers.TerminatedPod}
	w.terminated["done"] = true
	dirs.dirs = []types.UID{"kept", "stopping", "orphan-dir", "done"}
	d.HandleHousekeeping(context.Background())
	if got := fmt.Sprint(c.removed); got != "[done stranger]" {
		t.Errorf("removed %s, want the terminated pod and the pod no worker knows", got)
	}
	if got := fmt.Sprint(dirs.tornDown); got != "[orphan-dir]" {
		t.Errorf("tore down %s, want only the orphaned directory", got)
	}
	if got := fmt.Sprint(f.forgotten); got != "[done orphan-dir stranger]" {
		t.Errorf("forgot %s", got)
	}
	if c.gcs != 1 {
		t.Errorf("back-off GC ran %d times, want once per housekeeping", c.gcs)
	}
	c.err, c.removed = errors.New("runtime down"), nil
	d.HandleHousekeeping(context.Background())
	if len(c.removed) != 0 {
		t.Error("housekeeping acted without a runtime listing")
	}
}
