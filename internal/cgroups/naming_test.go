package cgroups

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestSystemdName: upstream's ToSystemd examples (cgroup_manager_linux_test.go) and the pods'
// own cgroups.
func TestSystemdName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/", "/"},
		{"", "/"},
		{"/kubepods", "/kubepods.slice"},
		{"/kubepods/burstable", "/kubepods.slice/kubepods-burstable.slice"},
		{"/kubepods/besteffort", "/kubepods.slice/kubepods-besteffort.slice"},
		{"/kubepods/burstable/pod1234-abcd-5678-efgh", "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_abcd_5678_efgh.slice"},
		{"/kubepods/pod0a1b2c3d-0000-4000-8000-00000000000f", "/kubepods.slice/kubepods-pod0a1b2c3d_0000_4000_8000_00000000000f.slice"},
		{"/nodelet/kubepods/besteffort", "/nodelet.slice/nodelet-kubepods.slice/nodelet-kubepods-besteffort.slice"},
		{"/system-reserved", "/system_reserved.slice"},
	} {
		got, err := SystemdName(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("SystemdName(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestPodUIDFromDir(t *testing.T) {
	for _, tc := range []struct {
		dir     string
		systemd bool
		want    types.UID
		ok      bool
	}{
		{"pod1234-abcd", false, "1234-abcd", true},
		{"pod", false, "", false},
		{"burstable", false, "", false},
		{"kubepods-burstable-pod1234_abcd_5678.slice", true, "1234-abcd-5678", true},
		{"kubepods-pod1234_abcd.slice", true, "1234-abcd", true},
		{"nodelet-kubepods-besteffort-podffff.slice", true, "ffff", true},
		{"kubepods-burstable.slice", true, "", false},
		{"cri-containerd-0123.scope", true, "", false},
		{"kubepods-burstable-pod.slice", true, "", false},
		{"pod1234", true, "", false},
	} {
		got, ok := PodUIDFromDir(tc.dir, tc.systemd)
		if got != tc.want || ok != tc.ok {
			t.Errorf("PodUIDFromDir(%q, systemd=%v) = %q, %v; want %q, %v", tc.dir, tc.systemd, got, ok, tc.want, tc.ok)
		}
	}
}

// TestLayout: the names the runtime and the host see follow the driver, which the runtime may
// change at start; nodelet's own names do not.
func TestLayout(t *testing.T) {
	guaranteed := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "a-b"}, Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c",
		Resources: v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")},
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
	l := NewLayout("/kubepods", DriverCgroupfs)
	if got := l.Literal(l.Pod(guaranteed)); got != "/kubepods/poda-b" {
		t.Errorf("cgroupfs: %q", got)
	}
	if uid, ok := l.PodUID("poda-b"); !ok || uid != "a-b" {
		t.Errorf("cgroupfs PodUID = %q, %v", uid, ok)
	}
	l.UseDriver(DriverSystemd)
	if got := l.Literal(l.Pod(guaranteed)); got != "/kubepods.slice/kubepods-poda_b.slice" {
		t.Errorf("systemd: %q", got)
	}
	if got := l.Pod(guaranteed); got != "/kubepods/poda-b" {
		t.Errorf("nodelet's own name changed with the driver: %q", got)
	}
	if uid, ok := l.PodUID("kubepods-poda_b.slice"); !ok || uid != "a-b" {
		t.Errorf("systemd PodUID = %q, %v", uid, ok)
	}
	want := []string{"/kubepods/poda-b", "/kubepods/burstable/poda-b", "/kubepods/besteffort/poda-b"}
	if got := l.PodCgroupsOf("a-b"); len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("PodCgroupsOf = %q, want %q", got, want)
	}
}
