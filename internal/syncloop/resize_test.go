package syncloop

import (
	"strings"
	"testing"
	"testing/synctest"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodelet/nodelet/internal/podconfig"
)

// fakeResizer records what the dispatcher asks; pending holds the UIDs whose resize waits.
type fakeResizer struct {
	calls   []string
	pending map[types.UID]bool
	kept    []types.UID
}

var _ Resizer = (*fakeResizer)(nil)

func (f *fakeResizer) HandleResize(pod *v1.Pod, active []*v1.Pod) bool {
	var others []string
	for _, p := range active {
		others = append(others, string(p.UID))
	}
	f.calls = append(f.calls, "resize "+string(pod.UID)+" with ["+strings.Join(others, " ")+"]")
	return true
}

func (f *fakeResizer) HasPending() bool { return len(f.pending) > 0 }

func (f *fakeResizer) RetryPending(pods func(types.UID) (*v1.Pod, []*v1.Pod, bool)) []types.UID {
	var out []types.UID
	for uid := range f.pending {
		if _, _, ok := pods(uid); ok {
			f.calls = append(f.calls, "retry "+string(uid))
			delete(f.pending, uid)
			out = append(out, uid)
		}
	}
	return out
}

func (f *fakeResizer) RemoveOrphans(keep func(types.UID) bool) {
	for _, uid := range []types.UID{"1", "2", "gone"} {
		if keep(uid) {
			f.kept = append(f.kept, uid)
		}
	}
}

// Pod updates go to the resizer (with the other active pods) before the worker; deferred
// resizes are retried on syncs and the retried pods synced; housekeeping keeps the records of
// pods that are wanted or still run.
func TestDispatcherResizes(t *testing.T) {
	synctest.Test(t, testDispatcherResizes)
}

func testDispatcherResizes(t *testing.T) {
	d, _, w, _, _, _ := newTestDispatcher()
	r := &fakeResizer{pending: map[types.UID]bool{}}
	d.resizer = r
	a, b := tpod("a", "1"), tpod("b", "2")
	d.HandlePodUpdate(podconfig.PodUpdate{Op: podconfig.ADD, Pods: []*v1.Pod{a, b}})
	d.HandlePodUpdate(podconfig.PodUpdate{Op: podconfig.UPDATE, Pods: []*v1.Pod{a}})
	if got, want := strings.Join(r.calls, ", "), "resize 1 with [], resize 2 with [1], resize 1 with [2]"; got != want {
		t.Errorf("resizer calls %q, want %q", got, want)
	}
	w.take()

	r.calls, r.pending["2"] = nil, true
	d.HandleSyncs(nil)
	if got := strings.Join(r.calls, ", "); got != "retry 2" {
		t.Errorf("retries %q, want the pending pod's", got)
	}
	if got := w.take(); got != "sync 2" {
		t.Errorf("worker calls after a retry %q, want sync 2", got)
	}

	d.HandlePodUpdate(podconfig.PodUpdate{Op: podconfig.REMOVE, Pods: []*v1.Pod{b}})
	delete(w.known, "2") // its worker finished and was forgotten
	housekeep(t, d)
	if got := r.kept; len(got) != 1 || got[0] != "1" {
		t.Errorf("housekeeping kept %v, want only the wanted pod", got)
	}
}
