package status

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodelet/nodelet/internal/container"
)

func q(s string) *resource.Quantity { v := resource.MustParse(s); return &v }

// The status shows what the runtime applies for a running container (upstream's
// convertContainerStatusResources), the allocation otherwise.
func TestContainerResources(t *testing.T) {
	alloc := v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1m"), v1.ResourceMemory: resource.MustParse("48Mi")},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("5m"), v1.ResourceMemory: resource.MustParse("96Mi")},
	}
	running := func(r *container.Resources) *container.Status {
		return &container.Status{ID: "c1", State: container.StateRunning, Resources: r}
	}
	oldRunning := &v1.ContainerStatus{ContainerID: "containerd://c1", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
		Resources: &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse("80Mi")}}}
	for _, tc := range []struct {
		name string
		cs   *container.Status
		old  *v1.ContainerStatus
		want v1.ResourceRequirements
	}{
		{"not running: the allocation", &container.Status{State: container.StateExited, Resources: &container.Resources{MemoryLimit: q("1Gi")}}, nil, alloc},
		{"below the smallest effective cpu values: the allocation",
			running(&container.Resources{CPURequest: q("2m"), CPULimit: q("10m"), MemoryRequest: q("48Mi"), MemoryLimit: q("96Mi")}), nil, alloc},
		{"what the runtime applies wins",
			running(&container.Resources{CPURequest: q("150m"), CPULimit: q("300m"), MemoryRequest: q("32Mi"), MemoryLimit: q("64Mi")}), nil,
			v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("150m"), v1.ResourceMemory: resource.MustParse("32Mi")},
				Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("300m"), v1.ResourceMemory: resource.MustParse("64Mi")}}},
		{"unreported: the previous status of the same running container",
			running(nil), oldRunning,
			v1.ResourceRequirements{Requests: alloc.Requests, Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("5m"), v1.ResourceMemory: resource.MustParse("80Mi")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := containerResources(&v1.Container{Resources: alloc}, tc.cs, "containerd://c1", tc.old)
			for _, pair := range [][2]v1.ResourceList{{got.Requests, tc.want.Requests}, {got.Limits, tc.want.Limits}} {
				if len(pair[0]) != len(pair[1]) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
				for k, v := range pair[1] {
					if g := pair[0][k]; !g.Equal(v) {
						t.Errorf("%s: got %v, want %v", k, g.String(), v.String())
					}
				}
			}
		})
	}
}
