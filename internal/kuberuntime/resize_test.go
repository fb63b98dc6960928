package kuberuntime

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodelet/nodelet/internal/cgroups"
)

// fakeActuations is the allocation manager's actuated record in memory.
type fakeActuations struct {
	mu  sync.Mutex
	got map[types.UID]map[string]v1.ResourceRequirements
}

var _ Actuations = (*fakeActuations)(nil)

func (f *fakeActuations) Actuated(uid types.UID) map[string]v1.ResourceRequirements {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]v1.ResourceRequirements{}
	for k, v := range f.got[uid] {
		out[k] = v
	}
	return out
}

func (f *fakeActuations) SetActuated(uid types.UID, name string, r v1.ResourceRequirements) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.got == nil {
		f.got = map[types.UID]map[string]v1.ResourceRequirements{}
	}
	if f.got[uid] == nil {
		f.got[uid] = map[string]v1.ResourceRequirements{}
	}
	f.got[uid][name] = r
	return nil
}

func limits(cpu, mem string) v1.ResourceRequirements {
	l := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)}
	return v1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
}

// A resize reaches the running container through UpdateContainerResources, its status reports
// the new values and the actuated record follows; a failure is the sync's ResizeErr, and the
// container keeps running.
func TestSyncPodResizesInPlace(t *testing.T) {
	h := newHarness(t)
	act := &fakeActuations{}
	h.m.deps.Actuations = act
	pod := newPod(mod(func(p *v1.Pod) { p.Spec.Containers[0].Resources = limits("500m", "64Mi") }))
	h.mustSync(pod)
	id := containerID(pod, "app", 0)
	if got := act.Actuated(pod.UID)["app"]; !got.Limits.Cpu().Equal(resource.MustParse("500m")) {
		t.Fatalf("the started container's resources were not recorded: %+v", got)
	}

	grown := pod.DeepCopy()
	grown.Spec.Containers[0].Resources = limits("1", "128Mi")
	h.rt.ResetCalls()
	h.mustSync(grown)
	if n := h.rt.CallCount("UpdateContainerResources"); n != 2 { // memory, then cpu
		t.Errorf("%d UpdateContainerResources calls, want 2: %v", n, h.rt.GetCalls())
	}
	if n := h.rt.CallCount("CreateContainer") + h.rt.CallCount("StopContainer"); n != 0 {
		t.Errorf("a NotRequired resize restarted the container: %v", h.rt.GetCalls())
	}
	cs := h.status(grown).FindContainerStatusByName("app")
	if cs.ID != id || cs.Resources == nil || cs.Resources.CPULimit.MilliValue() != 1000 || cs.Resources.MemoryLimit.Value() != 128<<20 ||
		cs.Resources.CPURequest.MilliValue() != 1000 || cs.Resources.MemoryRequest.Value() != 128<<20 {
		t.Errorf("status after the resize: %+v %+v", cs, cs.Resources)
	}
	if got := act.Actuated(pod.UID)["app"]; !got.Limits.Memory().Equal(resource.MustParse("128Mi")) || !got.Limits.Cpu().Equal(resource.MustParse("1")) {
		t.Errorf("actuated record after the resize: %+v", got)
	}
	h.rt.ResetCalls()
	h.mustSync(grown)
	if n := h.rt.CallCount("UpdateContainerResources"); n != 0 {
		t.Errorf("an applied resize was applied again: %v", h.rt.GetCalls())
	}

	// The runtime refuses: the sync fails with the reason, the container keeps running.
	shrunk := pod.DeepCopy()
	shrunk.Spec.Containers[0].Resources = limits("1", "4Ki")
	h.rt.InjectError("UpdateContainerResources", errors.New("memory.limit_in_bytes: device or resource busy"))
	res := h.sync(shrunk)
	if res.Err == nil || !strings.Contains(res.ResizeErr, `failed to update memory of container "app": `) ||
		!strings.Contains(res.ResizeErr, "device or resource busy") {
		t.Errorf("failed resize: err %v, ResizeErr %q", res.Err, res.ResizeErr)
	}
	if st := h.state(id); st.String() != "CONTAINER_RUNNING" {
		t.Errorf("the container is %v after a failed resize", st)
	}
	if got := act.Actuated(pod.UID)["app"]; !got.Limits.Memory().Equal(resource.MustParse("128Mi")) {
		t.Errorf("a failed resize was recorded as applied: %+v", got)
	}
}

// podCgroupLog records the pod cgroup settings and, interleaved, the runtime's resize calls.
type podCgroupLog struct {
	rt   interface{ CallCount(string) int }
	sets []string // "<cgroup> shares=.. quota=.. memory=.. after <n> updates"
	fail error
}

var _ PodCgroups = (*podCgroupLog)(nil)

func (p *podCgroupLog) Destroy(name string) error {
	p.sets = append(p.sets, "destroy "+name)
	return p.fail
}

func (p *podCgroupLog) Set(name string, r cgroups.Resources) error {
	s := name
	if r.CPUQuota != nil {
		s += fmt.Sprintf(" quota=%d", *r.CPUQuota)
	}
	if r.Memory != nil {
		s += fmt.Sprintf(" memory=%d", *r.Memory)
	}
	if r.PidsLimit != nil {
		s += fmt.Sprintf(" pids=%d", *r.PidsLimit)
	}
	p.sets = append(p.sets, fmt.Sprintf("%s after %d updates, %d sandboxes", s, p.rt.CallCount("UpdateContainerResources"), p.rt.CallCount("RunPodSandbox")))
	return p.fail
}

// TestPodCgroupAroundSandboxAndResize: the pod's cgroup gets the pod's limits (and
// podPidsLimit, once, as upstream) before its sandbox runs; a resize grows it to the larger of the old and new limits before the
// containers change and sets the new ones after; a cgroup that cannot be made keeps the pod
// from starting, with upstream's event.
func TestPodCgroupAroundSandboxAndResize(t *testing.T) {
	h := newHarness(t)
	h.m.deps.Actuations = &fakeActuations{}
	log := &podCgroupLog{rt: h.rt}
	h.m.deps.PodCgroups = log
	h.m.cfg.PodPidsLimit = 512
	pod := newPod(mod(func(p *v1.Pod) { p.Spec.Containers[0].Resources = limits("500m", "64Mi") }))
	h.mustSync(pod)
	parent := cgroups.PodCgroup(h.m.cfg.CgroupRoot, pod)
	if want := []string{parent + " quota=50000 memory=67108864 pids=512 after 0 updates, 0 sandboxes"}; !slices.Equal(log.sets, want) {
		t.Errorf("pod cgroup set %q, want %q", log.sets, want)
	}

	// cpu up, memory down: first the larger of both, then the new values.
	resized := pod.DeepCopy()
	resized.Spec.Containers[0].Resources = limits("1", "32Mi")
	log.sets = nil
	h.mustSync(resized)
	want := []string{parent + " quota=100000 memory=67108864 after 0 updates, 1 sandboxes",
		parent + " quota=100000 memory=33554432 after 2 updates, 1 sandboxes"}
	if !slices.Equal(log.sets, want) {
		t.Errorf("resize set %q, want %q", log.sets, want)
	}

	t.Run("a pod whose cgroup cannot be made does not start", func(t *testing.T) {
		h := newHarness(t)
		h.m.deps.PodCgroups = &podCgroupLog{rt: h.rt, fail: errors.New("no space left on device")}
		pod := newPod(mains("app"))
		if res := h.sync(pod); res.Err == nil {
			t.Fatal("the sync succeeded without the pod's cgroup")
		}
		if ids := h.rt.SandboxIDs(); len(ids) != 0 {
			t.Errorf("sandboxes %v run without the pod's cgroup", ids)
		}
		if !h.rec.has("FailedToCreatePodContainer") {
			t.Errorf("events %v, want FailedToCreatePodContainer", h.rec.all())
		}
	})
}
