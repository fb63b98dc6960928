package cgroups

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func resList(kv ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// TestEnforcement: upstream's enforceNodeAllocatableCgroups, value by value.
func TestEnforcement(t *testing.T) {
	base := Reservations{Capacity: resList("cpu", "4", "memory", "8Gi"), KubeReserved: resList("cpu", "500m", "memory", "1Gi"),
		SystemReserved: resList("cpu", "250m", "memory", "512Mi", "pid", "1000"), KubeReservedCgroup: "/kube.slice", SystemReservedCgroup: "/system.slice"}
	for _, tc := range []struct {
		name     string
		enforce  []string
		pods     string
		reserved []string
	}{
		{"pods (the default): the allocatable", []string{"pods"}, "shares=3328 memory=6979321856", nil},
		{"none: the capacity, never the kernel's default", []string{"none"}, "shares=4096 memory=8589934592", nil},
		{"nothing: the capacity", nil, "shares=4096 memory=8589934592", nil},
		{"system-reserved: cpu, memory and pids on its cgroup", []string{"pods", "system-reserved"}, "shares=3328 memory=6979321856",
			[]string{"/system.slice system reserved: shares=256 memory=536870912 pids=1000"}},
		{"kube-reserved-compressible: cpu only", []string{"pods", "kube-reserved-compressible"}, "shares=3328 memory=6979321856",
			[]string{"/kube.slice kube reserved compressible: shares=512 "}},
		{"both reservations without pods", []string{"kube-reserved", "system-reserved-compressible"}, "shares=4096 memory=8589934592",
			[]string{"/kube.slice kube reserved: shares=512 memory=1073741824", "/system.slice system reserved compressible: shares=256 "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			r.Enforce = tc.enforce
			pods, reserved := Enforcement(r)
			if got := show(pods); got != tc.pods {
				t.Errorf("pods' cgroup: %q, want %q", got, tc.pods)
			}
			var got []string
			for _, c := range reserved {
				got = append(got, c.Name+" "+c.What+": "+show(c.Resources))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.reserved) {
				t.Errorf("reserved cgroups %q, want %q", got, tc.reserved)
			}
		})
	}
}
