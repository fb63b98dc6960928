package podsync

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/podmanager"
	"github.com/nodelet/nodelet/internal/runtime"
	"github.com/nodelet/nodelet/internal/statusmanager"
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
// resize regenerates the status from a fresh view of the runtime.
func TestSyncPodWithAllocations(t *testing.T) {
	pm := podmanager.New()
	p := pod()
	p.Spec.RestartPolicy = v1.RestartPolicyAlways
	pm.AddOrUpdate(p)
	sm := statusmanager.New(pm)
	fresh := running(container.StateRunning, 0)
	fresh.ContainerStatuses[0].Resources = &container.Resources{CPURequest: resource.NewMilliQuantity(1000, resource.DecimalSI)}
	rt := &fakeRuntime{result: runtime.SyncResult{Resized: true}, after: fresh}
	alloc := &fakeAllocations{inProgress: true}
	s := New(Config{}, rt, sm, &fakeProbes{}, clocktesting.NewFakeClock(time.Unix(100, 0))).WithAllocations(alloc)

	if _, err := s.SyncPod(context.Background(), 0, p, running(container.StateRunning, 0)); err != nil {
		t.Fatal(err)
	}
	st, _ := sm.GetPodStatus("u")
	var cond *v1.PodCondition
	for i := range st.Conditions {
		if st.Conditions[i].Type == v1.PodResizeInProgress {
			cond = &st.Conditions[i]
		}
	}
	if cond == nil || cond.ObservedGeneration != 7 {
		t.Errorf("conditions %+v, want PodResizeInProgress with its own generation", st.Conditions)
	}
	cs := st.ContainerStatuses[0]
	if !cs.AllocatedResources.Cpu().Equal(resource.MustParse("1")) || !cs.Resources.Requests.Cpu().Equal(resource.MustParse("1")) {
		t.Errorf("container status %+v %+v: want the allocated and the freshly reported cpu", cs.AllocatedResources, cs.Resources)
	}
	if alloc.inits != 1 || len(alloc.errs) != 2 {
		t.Errorf("InitActuated %d times, SyncInProgress %d times; want once before and after the runtime", alloc.inits, len(alloc.errs))
	}
}
