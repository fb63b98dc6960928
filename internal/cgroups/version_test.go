package cgroups

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nodelet/nodelet/internal/testharness/ci"
)

func TestCheckVersion(t *testing.T) {
	for _, tc := range []struct {
		fail, unified bool
		want          error
	}{
		{fail: true, unified: false, want: ErrCgroupV1},
		{fail: true, unified: true},
		{fail: false, unified: false},
		{fail: false, unified: true},
	} {
		if err := CheckVersion(tc.fail, tc.unified); !errors.Is(err, tc.want) {
			t.Errorf("CheckVersion(failCgroupV1=%v, unified=%v) = %v, want %v", tc.fail, tc.unified, err, tc.want)
		}
	}
	// The refusal names the field and how to set it, and keeps upstream's words.
	for _, s := range []string{"failCgroupV1", "--fail-cgroupv1=false", "cgroup v1 support is unsupported"} {
		if !strings.Contains(ErrCgroupV1.Error(), s) {
			t.Errorf("the refusal %q does not say %q", ErrCgroupV1, s)
		}
	}
}

// TestUnified: a cgroup2 mount is unified, any other file system is not, and a missing root is
// an error that names it.
func TestUnified(t *testing.T) {
	if got, err := Unified(t.TempDir()); err != nil || got {
		t.Errorf("Unified(a plain directory) = %v, %v; want false", got, err)
	}
	if _, err := Unified("/nonexistent/cgroup"); err == nil || !strings.Contains(err.Error(), "/nonexistent/cgroup") {
		t.Errorf("Unified(a missing root) = %v; want an error naming it", err)
	}
	v2 := cgroup2Mount(t)
	if got, err := Unified(v2); err != nil || !got {
		t.Errorf("Unified(%s, a cgroup2 mount) = %v, %v; want true", v2, got, err)
	}
}

// cgroup2Mount is a cgroup2 mount: the host's (unified or hybrid), else one mounted here.
func cgroup2Mount(t *testing.T) string {
	for _, p := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		var st unix.Statfs_t
		if unix.Statfs(p, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
			return p
		}
	}
	ci.RequireRoot(t, "mounts a cgroup2 file system (the host has none)")
	dir := t.TempDir()
	if err := unix.Mount("none", dir, "cgroup2", 0, ""); err != nil {
		t.Fatalf("mount cgroup2 on %s: %v", dir, err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// TestOOMGroup: upstream's singleProcessOOMKill table (kubelet.go, validation_linux.go).
func TestOOMGroup(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name    string
		single  *bool
		unified bool
		want    bool
		wantErr bool
	}{
		{name: "v2, unset: the group kill, upstream's default", unified: true, want: true},
		{name: "v2, singleProcessOOMKill true: one process", single: &yes, unified: true, want: false},
		{name: "v2, singleProcessOOMKill false: the group", single: &no, unified: true, want: true},
		{name: "v1, unset: one process (v1 has no memory.oom.group)", unified: false, want: false},
		{name: "v1, singleProcessOOMKill true", single: &yes, unified: false, want: false},
		{name: "v1, singleProcessOOMKill false: refused", single: &no, unified: false, wantErr: true},
	} {
		got, err := OOMGroup(tc.single, tc.unified)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%s: OOMGroup = %v, %v; want %v (error: %v)", tc.name, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "singleProcessOOMKill") {
			t.Errorf("%s: the error %q does not name singleProcessOOMKill", tc.name, err)
		}
	}
}
