package allocation

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/container"
)

func rl(kv ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func req(cpu, mem string) v1.ResourceRequirements {
	return v1.ResourceRequirements{Requests: rl("cpu", cpu, "memory", mem), Limits: rl("cpu", cpu, "memory", mem)}
}

func testPod(mods ...func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{Spec: v1.PodSpec{
		InitContainers: []v1.Container{{Name: "init", Resources: req("100m", "10Mi")},
			{Name: "sidecar", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways), Resources: req("100m", "10Mi")}},
		Containers: []v1.Container{{Name: "a", Resources: req("500m", "100Mi")}, {Name: "b", Resources: req("1", "200Mi")}},
	}}
	p.UID, p.Generation = "uid-1", 1
	for _, m := range mods {
		m(p)
	}
	return p
}

func TestApply(t *testing.T) {
	pod := testPod()
	if got, changed := Apply(pod, nil); got != pod || changed {
		t.Error("no allocation: the pod itself, unchanged")
	}
	if got, changed := Apply(pod, ForPod(pod)); got != pod || changed {
		t.Error("the allocation equals the spec: the pod itself, not a copy")
	}
	alloc := ForPod(pod)
	alloc["b"] = req("2", "400Mi")
	alloc["sidecar"] = req("200m", "20Mi")
	got, changed := Apply(pod, alloc)
	if !changed || got == pod {
		t.Fatal("a different allocation must give a copy")
	}
	if !SameCPUMemory(got.Spec.Containers[1].Resources, req("2", "400Mi")) || !SameCPUMemory(got.Spec.InitContainers[1].Resources, req("200m", "20Mi")) {
		t.Errorf("allocation not applied: %+v", got.Spec)
	}
	if !SameCPUMemory(pod.Spec.Containers[1].Resources, req("1", "200Mi")) {
		t.Error("Apply modified its input")
	}
	delete(alloc, "a") // a container without an allocation keeps its spec
	if got, _ := Apply(pod, alloc); !SameCPUMemory(got.Spec.Containers[0].Resources, req("500m", "100Mi")) {
		t.Errorf("a container without allocation: %+v", got.Spec.Containers[0].Resources)
	}
}

func TestDecide(t *testing.T) {
	allocated := ForPod(testPod())
	admitAll := func(*v1.Pod) (bool, string, string) { return true, "", "" }
	for _, tc := range []struct {
		name  string
		pod   *v1.Pod
		admit AdmitFunc
		want  Decision
	}{
		{"no change: nothing waits", testPod(), admitAll, Decision{}},
		{"fits: allocate", testPod(func(p *v1.Pod) { p.Spec.Containers[0].Resources = req("1", "100Mi") }), admitAll, Decision{Allocate: true}},
		{"a sidecar resizes", testPod(func(p *v1.Pod) { p.Spec.InitContainers[1].Resources = req("1", "100Mi") }), admitAll, Decision{Allocate: true}},
		{"does not fit now: Deferred with admission's message",
			testPod(func(p *v1.Pod) { p.Spec.Containers[0].Resources = req("64", "100Mi") }),
			func(*v1.Pod) (bool, string, string) {
				return false, "OutOfcpu", "Node didn't have enough resource: cpu, requested: 65600, used: 0, capacity: 2000"
			},
			Decision{Reason: v1.PodReasonDeferred, Message: "Node didn't have enough resource: cpu, requested: 65600, used: 0, capacity: 2000"}},
		{"admission says Infeasible: Infeasible",
			testPod(func(p *v1.Pod) { p.Spec.Containers[0].Resources = req("1", "100Mi") }),
			func(*v1.Pod) (bool, string, string) { return false, v1.PodReasonInfeasible, "never" },
			Decision{Reason: v1.PodReasonInfeasible, Message: "never"}},
		{"a regular init container: Infeasible without asking admission",
			testPod(func(p *v1.Pod) { p.Spec.InitContainers[0].Resources = req("1", "100Mi") }),
			func(*v1.Pod) (bool, string, string) { panic("admission asked") },
			Decision{Reason: v1.PodReasonInfeasible, Message: "Resize of the non-sidecar init container init is not supported"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.pod, allocated, tc.admit); got != tc.want {
				t.Errorf("Decide = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestInProgress(t *testing.T) {
	pod := testPod()
	running := func(names ...string) *container.PodStatus {
		ps := &container.PodStatus{}
		for _, n := range names {
			ps.ContainerStatuses = append(ps.ContainerStatuses, &container.Status{Name: n, State: container.StateRunning})
		}
		return ps
	}
	same := ForPod(pod)
	for _, tc := range []struct {
		name     string
		ps       *container.PodStatus
		actuated Resources
		want     bool
	}{
		{"actuated equals allocated", running("a", "b", "sidecar"), same, false},
		{"a running container differs", running("a", "b"), func() Resources { r := ForPod(pod); r["b"] = req("1", "100Mi"); return r }(), true},
		{"a running sidecar differs", running("a", "sidecar"), func() Resources { r := ForPod(pod); r["sidecar"] = req("1", "100Mi"); return r }(), true},
		{"a container that does not run is sized when it starts", running("a"), func() Resources { r := ForPod(pod); r["b"] = req("1", "100Mi"); return r }(), false},
		{"a regular init container never resizes", running("init", "a"), func() Resources { r := ForPod(pod); r["init"] = req("1", "100Mi"); return r }(), false},
		{"no record for a running container", running("a"), Resources{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := InProgress(pod, tc.ps, tc.actuated); got != tc.want {
				t.Errorf("InProgress = %v, want %v", got, tc.want)
			}
		})
	}
}
