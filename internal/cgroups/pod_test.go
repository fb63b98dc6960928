package cgroups

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func show(r Resources) string {
	s := ""
	if r.CPUShares != nil {
		s += fmt.Sprintf("shares=%d ", *r.CPUShares)
	}
	if r.CPUQuota != nil {
		s += fmt.Sprintf("quota=%d/%d ", *r.CPUQuota, *r.CPUPeriod)
	}
	if r.Memory != nil {
		s += fmt.Sprintf("memory=%d", *r.Memory)
	}
	if r.PidsLimit != nil {
		s += fmt.Sprintf(" pids=%d", *r.PidsLimit)
	}
	return s
}

func TestPod(t *testing.T) {
	req := func(cpu, mem string) v1.ResourceRequirements { return v1.ResourceRequirements{Requests: rl(cpu, mem)} }
	both := func(cpu, mem string) v1.ResourceRequirements {
		return v1.ResourceRequirements{Requests: rl(cpu, mem), Limits: rl(cpu, mem)}
	}
	withLimits := func(rcpu, rmem, lcpu, lmem string) v1.ResourceRequirements {
		return v1.ResourceRequirements{Requests: rl(rcpu, rmem), Limits: rl(lcpu, lmem)}
	}
	overhead := pod("o", both("500m", "128Mi"))
	overhead.Spec.Overhead = rl("100m", "32Mi")
	initBig := pod("i", both("500m", "128Mi"))
	initBig.Spec.InitContainers = []v1.Container{{Name: "init", Resources: both("1", "256Mi")}}
	podLevel := pod("p", req("100m", ""))
	podLevel.Spec.Resources = &v1.ResourceRequirements{Requests: rl("1", "64Mi"), Limits: rl("2", "512Mi")}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want string
	}{
		{"BestEffort: the minimum shares, no limits", pod("be", v1.ResourceRequirements{}), "shares=2 "},
		{"Guaranteed: shares, quota and memory from the sums", pod("g", both("500m", "128Mi"), both("250m", "64Mi")),
			"shares=768 quota=75000/100000 memory=201326592"},
		{"Burstable without limits: shares only", pod("b", req("250m", "")), "shares=256 "},
		{"Burstable with every limit declared", pod("b", withLimits("100m", "32Mi", "1", "256Mi"), withLimits("", "", "500m", "64Mi")),
			"shares=102 quota=150000/100000 memory=335544320"},
		{"Burstable, one container without a memory limit: no pod memory limit", pod("b", withLimits("100m", "", "1", "256Mi"), withLimits("", "", "1", "")),
			"shares=102 quota=200000/100000 "},
		{"the overhead counts", overhead, "shares=614 quota=60000/100000 memory=167772160"},
		{"a larger init container counts", initBig, "shares=1024 quota=100000/100000 memory=268435456"},
		{"pod-level resources", podLevel, "shares=1024 quota=200000/100000 memory=536870912"},
		{"a tiny limit gets the 1 ms minimum quota", pod("t", both("5m", "8Mi")), "shares=5 quota=1000/100000 memory=8388608"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := show(Pod(tc.pod)); got != tc.want {
				t.Errorf("Pod = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLarger(t *testing.T) {
	a := Pod(pod("a", v1.ResourceRequirements{Requests: rl("1", "256Mi"), Limits: rl("1", "256Mi")}))
	b := Pod(pod("b", v1.ResourceRequirements{Requests: rl("500m", "512Mi"), Limits: rl("500m", "512Mi")}))
	if got, want := show(Larger(a, b)), "shares=1024 quota=100000/100000 memory=536870912"; got != want {
		t.Errorf("Larger = %q, want %q", got, want)
	}
	if got := show(Larger(a, Resources{})); got != "" {
		t.Errorf("Larger with an unset side = %q, want nothing set", got)
	}
}
