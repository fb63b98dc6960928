package criconfig

import (
	"testing"

	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func rl(kv ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func withResources(req, lim v1.ResourceList) v1.Container {
	return v1.Container{Name: "c", Resources: v1.ResourceRequirements{Requests: req, Limits: lim}}
}

// The sandbox's resources and overhead, as upstream's applySandboxResources: the pod's
// resources without the overhead, and the overhead as guaranteed resources.
func TestSandboxResourcesAndOverhead(t *testing.T) {
	const mi = 1 << 20
	for _, tc := range []struct {
		name               string
		containers         []v1.Container
		overhead           v1.ResourceList
		resources, ovrhead *runtimeapi.LinuxContainerResources
	}{
		{name: "best effort: minimum shares, no quota, no overhead",
			containers: []v1.Container{withResources(nil, nil)},
			resources:  &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000},
			ovrhead:    &runtimeapi.LinuxContainerResources{}},
		{name: "requests and limits summed over containers; overhead excluded",
			containers: []v1.Container{withResources(rl("cpu", "250m"), rl("cpu", "500m", "memory", "64Mi")),
				withResources(rl("cpu", "250m"), rl("cpu", "500m", "memory", "64Mi"))},
			overhead:  rl("cpu", "100m", "memory", "32Mi"),
			resources: &runtimeapi.LinuxContainerResources{CpuShares: 512, CpuPeriod: 100000, CpuQuota: 100000, MemoryLimitInBytes: 128 * mi},
			ovrhead:   &runtimeapi.LinuxContainerResources{CpuShares: 102, CpuPeriod: 100000, CpuQuota: 10000, MemoryLimitInBytes: 32 * mi}},
		{name: "limits without a cpu request: shares from the limit",
			containers: []v1.Container{withResources(nil, rl("cpu", "1"))},
			resources:  &runtimeapi.LinuxContainerResources{CpuShares: 1024, CpuPeriod: 100000, CpuQuota: 100000},
			ovrhead:    &runtimeapi.LinuxContainerResources{}},
		{name: "overhead of memory only: minimum shares",
			containers: []v1.Container{withResources(rl("cpu", "100m"), nil)},
			overhead:   rl("memory", "16Mi"),
			resources:  &runtimeapi.LinuxContainerResources{CpuShares: 102, CpuPeriod: 100000},
			ovrhead:    &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000, MemoryLimitInBytes: 16 * mi}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: v1.PodSpec{Containers: tc.containers, Overhead: tc.overhead}}
			if got := SandboxResources(pod); !proto.Equal(got, tc.resources) {
				t.Errorf("SandboxResources = %v, want %v", got, tc.resources)
			}
			if got := OverheadResources(pod); !proto.Equal(got, tc.ovrhead) {
				t.Errorf("OverheadResources = %v, want %v", got, tc.ovrhead)
			}
			cfg, err := Sandbox(pod, SandboxOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(cfg.Linux.Resources, tc.resources) || !proto.Equal(cfg.Linux.Overhead, tc.ovrhead) {
				t.Errorf("the sandbox config carries %v and %v, want %v and %v", cfg.Linux.Resources, cfg.Linux.Overhead, tc.resources, tc.ovrhead)
			}
		})
	}
}
