package cgroups

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func pod(name string, containers ...v1.ResourceRequirements) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-" + "name"}}
	for i, r := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: string(rune('a' + i)), Resources: r})
	}
	return p
}

func rl(cpu, mem string) v1.ResourceList {
	l := v1.ResourceList{}
	if cpu != "" {
		l[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		l[v1.ResourceMemory] = resource.MustParse(mem)
	}
	return l
}

func TestQoS(t *testing.T) {
	bestEffort := pod("be", v1.ResourceRequirements{})
	burstable := pod("b", v1.ResourceRequirements{Requests: rl("250m", "")}, v1.ResourceRequirements{Requests: rl("", "64Mi")})
	burstable2 := pod("b2", v1.ResourceRequirements{Requests: rl("500m", "64Mi"), Limits: rl("1", "")})
	guaranteed := pod("g", v1.ResourceRequirements{Requests: rl("2", "1Gi"), Limits: rl("2", "1Gi")})
	withInit := pod("i", v1.ResourceRequirements{Requests: rl("100m", "")})
	withInit.Spec.InitContainers = []v1.Container{{Name: "init", Resources: v1.ResourceRequirements{Requests: rl("1", "")}}}
	for _, tc := range []struct {
		name string
		pods []*v1.Pod
		want uint64 // the Burstable cgroup's cpu.shares
	}{
		{"no pods: the minimum", nil, 2},
		{"BestEffort and Guaranteed pods count for nothing", []*v1.Pod{bestEffort, guaranteed}, 2},
		{"one Burstable pod: its requests", []*v1.Pod{burstable}, 256},
		{"two Burstable pods: the sum", []*v1.Pod{burstable, burstable2, guaranteed}, 768},
		{"an init container's larger request counts, as the pod's effective request", []*v1.Pod{withInit}, 1024},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, be := QoS(tc.pods)
			if *b.CPUShares != tc.want || b.Memory != nil {
				t.Errorf("burstable = %d shares, memory %v; want %d, none", *b.CPUShares, b.Memory, tc.want)
			}
			if *be.CPUShares != 2 || be.Memory != nil {
				t.Errorf("besteffort = %d shares, memory %v; want 2, none", *be.CPUShares, be.Memory)
			}
		})
	}
}

func TestNode(t *testing.T) {
	r := Node(v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m"), v1.ResourceMemory: resource.MustParse("3Gi"),
		v1.ResourcePods: resource.MustParse("110")})
	if r.CPUShares == nil || *r.CPUShares != 1536 || r.Memory == nil || *r.Memory != 3<<30 {
		t.Errorf("Node = %v shares, %v bytes; want 1536, %d", r.CPUShares, r.Memory, int64(3<<30))
	}
	if r := Node(v1.ResourceList{}); r.CPUShares != nil || r.Memory != nil {
		t.Errorf("Node(nothing) sets %+v", r)
	}
}

func TestAllocatable(t *testing.T) {
	got := Allocatable(rl("4", "8Gi"), rl("500m", "1Gi"), rl("", "10Gi"), nil)
	if got.Cpu().MilliValue() != 3500 || got.Memory().Value() != 0 {
		t.Errorf("Allocatable = cpu %v, memory %v; want 3500m, 0 (never below zero)", got.Cpu(), got.Memory())
	}
}

func TestSharesToWeight(t *testing.T) {
	for shares, want := range map[uint64]uint64{0: 1, 2: 1, 1024: 39, 2048: 79, 262144: 10000} {
		if got := SharesToWeight(shares); got != want {
			t.Errorf("SharesToWeight(%d) = %d, want %d", shares, got, want)
		}
	}
}
