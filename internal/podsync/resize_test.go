package podsync

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/kuberuntime"
	"github.com/nodelet/nodelet/internal/podworkers"
)

// fakeAllocations allocates 1 cpu to container c and reports a resize in progress until told.
type fakeAllocations struct {
	inProgress bool
	errs       []string
	inits      int
}

var _ Allocations = (*fakeAllocations)(nil)

func (f *fakeAllocations) Apply(p *v1.Pod) *v1.Pod {
	out := p.DeepCopy()
	out.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}
	return out
}
func (f *fakeAllocations) InitActuated(*v1.Pod) { f.inits++ }
func (f *fakeAllocations) SyncInProgress(_ *v1.Pod, _ *container.PodStatus, resizeErr string) bool {
	f.errs = append(f.errs, resizeErr)
	return false
}
func (f *fakeAllocations) ResizeConditions(types.UID) []v1.PodCondition {
	if !f.inProgress {
		return nil
	}
	return []v1.PodCondition{{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue, ObservedGeneration: 7}}
}

// The syncer runs and reports the allocated pod, shows the resize conditions, and after a
// resize stores, once, the status of a fresh view of the runtime.
func TestSyncPodWithAllocations(t *testing.T) {
	f := newFixture(kuberuntime.SyncResult{Resized: true, ResizeErr: "no"})
	fresh := running(container.StateRunning, 0)
	fresh.ContainerStatuses[0].Resources = &container.Resources{CPURequest: resource.NewMilliQuantity(1000, resource.DecimalSI)}
	f.rt.after = fresh
	alloc := &fakeAllocations{inProgress: true}
	f.s.deps.Allocations = alloc

	if _, err := f.s.SyncPod(context.Background(), podworkers.SyncPodSync, podOf(v1.RestartPolicyAlways), running(container.StateRunning, 0)); err != nil {
		t.Fatal(err)
	}
	if len(f.statuses.stored) != 1 {
		t.Fatalf("stored %d statuses, want one", len(f.statuses.stored))
	}
	st := f.statuses.last(t)
	if cond := condition(st, v1.PodResizeInProgress); cond == nil || cond.ObservedGeneration != 7 {
		t.Errorf("conditions %+v, want PodResizeInProgress with its own generation", st.Conditions)
	}
	cs := cstatus(t, st)
	if !cs.AllocatedResources.Cpu().Equal(resource.MustParse("1")) || !cs.Resources.Requests.Cpu().Equal(resource.MustParse("1")) {
		t.Errorf("container status %+v %+v: want the allocated and the freshly reported cpu", cs.AllocatedResources, cs.Resources)
	}
	if alloc.inits != 1 || len(alloc.errs) != 2 || alloc.errs[1] != "no" {
		t.Errorf("InitActuated %d times, SyncInProgress with %q; want once before and after the runtime, with the resize's error", alloc.inits, alloc.errs)
	}
}
