package cgroups

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodCgroup(t *testing.T) {
	withUID := func(p *v1.Pod) *v1.Pod { p.UID = "uid-1"; return p }
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want string
	}{
		{"best effort", withUID(pod("be", v1.ResourceRequirements{})), "/kubepods/besteffort/poduid-1"},
		{"burstable", withUID(pod("b", v1.ResourceRequirements{Requests: rl("100m", "64Mi")})), "/kubepods/burstable/poduid-1"},
		{"guaranteed", withUID(pod("g", v1.ResourceRequirements{Requests: rl("1", "1Gi"), Limits: rl("1", "1Gi")})), "/kubepods/poduid-1"},
		{"class from the status", &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "uid-1"}, Status: v1.PodStatus{QOSClass: v1.PodQOSBurstable}},
			"/kubepods/burstable/poduid-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PodCgroup("/kubepods", tc.pod); got != tc.want {
				t.Errorf("PodCgroup = %q, want %q", got, tc.want)
			}
		})
	}
	if got, want := PodParents("/nodelet/kubepods"), []string{"/nodelet/kubepods", "/nodelet/kubepods/burstable", "/nodelet/kubepods/besteffort"}; !slices.Equal(got, want) {
		t.Errorf("PodParents = %q, want %q", got, want)
	}
}
