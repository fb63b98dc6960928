package container

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// BenchmarkHashContainer measures the spec hash ComputePodActions computes for every running
// container (main and sidecar) of every pod on every sync.
func BenchmarkHashContainer(b *testing.B) {
	c := &v1.Container{Name: "app", Image: "registry.example.com/team/app:1.2.3", Command: []string{"/app", "--serve"}}
	b.ReportAllocs()
	for b.Loop() {
		HashContainer(c)
	}
}

// BenchmarkFindContainerStatusByName measures the lookup run several times per container per
// sync, over a pod status with five containers and the previous instance of each.
func BenchmarkFindContainerStatusByName(b *testing.B) {
	names := []string{"init", "proxy", "app", "log", "metrics"}
	s := &PodStatus{}
	for _, gen := range []string{"new", "old"} {
		for _, n := range names {
			s.ContainerStatuses = append(s.ContainerStatuses, &Status{ID: gen + "-" + n, Name: n, State: StateRunning})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, n := range names {
			if s.FindContainerStatusByName(n) == nil {
				b.Fatal("not found")
			}
		}
	}
}
