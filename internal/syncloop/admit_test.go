package syncloop

import (
	"context"
	"testing"
	"testing/synctest"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodelet/nodelet/internal/podconfig"
)

// fakeAdmission admits at most max active pods and records rejections.
type fakeAdmission struct {
	max      int
	seen     [][]types.UID // active pods passed to each Admit
	rejected []string
}

var _ Admission = (*fakeAdmission)(nil)

func (f *fakeAdmission) Admit(pod *v1.Pod, active []*v1.Pod) (bool, string, string) {
	var uids []types.UID
	for _, p := range active {
		uids = append(uids, p.UID)
	}
	f.seen = append(f.seen, uids)
	if len(active) >= f.max {
		return false, "OutOfpods", "Node didn't have enough resource: pods"
	}
	return true, "", ""
}

func (f *fakeAdmission) Reject(pod *v1.Pod, reason, _ string) {
	f.rejected = append(f.rejected, string(pod.UID)+" "+reason)
}

type fakeHousekeeper struct{ desired []int }

func (f *fakeHousekeeper) Housekeep(_ context.Context, desired func() []*v1.Pod) {
	f.desired = append(f.desired, len(desired()))
}

func TestAdmissionRejectsAndNeverStarts(t *testing.T) {
	synctest.Test(t, testAdmissionRejectsAndNeverStarts)
}

func testAdmissionRejectsAndNeverStarts(t *testing.T) {
	d, pm, w, _, _, f := newTestDispatcher()
	adm := &fakeAdmission{max: 1}
	hk := &fakeHousekeeper{}
	d.admission, d.housekeepers = adm, append(d.housekeepers, hk)
	a, b := tpod("a", "1"), tpod("b", "2")
	d.HandlePodUpdate(podconfig.PodUpdate{Op: podconfig.ADD, Pods: []*v1.Pod{a, b}})
	if got := w.take(); got != "create 1" {
		t.Fatalf("worker calls %q, want only the admitted pod created", got)
	}
	if len(adm.rejected) != 1 || adm.rejected[0] != "2 OutOfpods" {
		t.Fatalf("rejections %v", adm.rejected)
	}
	if len(adm.seen) != 2 || len(adm.seen[0]) != 0 || len(adm.seen[1]) != 1 || adm.seen[1][0] != "1" {
		t.Errorf("active pods given to admission: %v", adm.seen)
	}
	if len(pm.Pods()) != 2 {
		t.Errorf("a rejected pod stays desired so its status is reported; got %d desired", len(pm.Pods()))
	}
	// Updates and syncs of the rejected pod never reach a worker.
	d.HandlePodUpdate(podconfig.PodUpdate{Op: podconfig.UPDATE, Pods: []*v1.Pod{b}})
	d.HandleSyncs([]types.UID{"2"})
	if got := w.take(); got != "" {
		t.Errorf("rejected pod reached a worker: %q", got)
	}
	// Removing it forgets it without a kill.
	d.HandlePodUpdate(podconfig.PodUpdate{Op: podconfig.REMOVE, Pods: []*v1.Pod{b}})
	if got := w.take(); got != "" {
		t.Errorf("removing a rejected pod: worker calls %q, want none", got)
	}
	if len(f.forgotten) != 1 || f.forgotten[0] != "2" {
		t.Errorf("forgotten %v, want the rejected pod's status dropped", f.forgotten)
	}
	if d.isRejected("2") {
		t.Error("a removed pod is still marked rejected")
	}
	housekeep(t, d)
	if len(hk.desired) != 1 || hk.desired[0] != 1 {
		t.Errorf("housekeeper calls %v, want one call with the 1 desired pod", hk.desired)
	}
}

// A pod that already finished (a completed Job pod re-listed after a restart) is not admitted
// again, so it cannot be turned from Succeeded into Failed.
func TestAdmissionSkipsFinishedPods(t *testing.T) {
	d, _, w, _, _, _ := newTestDispatcher()
	adm := &fakeAdmission{max: 0}
	d.admission = adm
	done := tpod("done", "1")
	done.Status.Phase = v1.PodSucceeded
	d.HandlePodUpdate(podconfig.PodUpdate{Op: podconfig.ADD, Pods: []*v1.Pod{done}})
	if len(adm.seen) != 0 || len(adm.rejected) != 0 {
		t.Errorf("a finished pod went through admission: seen %v rejected %v", adm.seen, adm.rejected)
	}
	if got := w.take(); got != "create 1" {
		t.Errorf("worker calls %q, want the finished pod handed to its worker (which records its end)", got)
	}
}
