package cgroups

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Unified reports whether root (normally /sys/fs/cgroup) is cgroup v2's unified hierarchy, as
// opencontainers/cgroups' IsCgroup2UnifiedMode decides: a hybrid host (cgroup v1 controllers with
// a v2 hierarchy at root/unified) is cgroup v1. The statfs is written here: the library's root
// package would link logrus and mountinfo for this one call, and caches its answer for
// /sys/fs/cgroup in a package variable.
func Unified(root string) (bool, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err != nil {
		return false, fmt.Errorf("find the cgroup version of %s: %w", root, err)
	}
	return st.Type == unix.CGROUP2_SUPER_MAGIC, nil
}

// ErrCgroupV1 is CheckVersion's refusal.
var ErrCgroupV1 = errors.New("failCgroupV1: nodelet is configured to not run on a host using cgroup v1 " +
	"(set failCgroupV1: false in the config file, or --fail-cgroupv1=false, to run on it). " +
	"cgroup v1 support is unsupported and will be removed in a future release")

// CheckVersion is upstream's failCgroupV1 check, done at start: with failCgroupV1 (the default)
// a host on cgroup v1 is refused.
func CheckVersion(failCgroupV1, unified bool) error {
	if failCgroupV1 && !unified {
		return ErrCgroupV1
	}
	return nil
}

// OOMGroup is upstream's singleProcessOOMKill decision: whether a container's cgroup gets
// memory.oom.group=1 (the kernel's OOM killer then kills every process of the container, not
// one). cgroup v1 has no such file: singleProcessOOMKill may not be set false there. On cgroup
// v2 the group kill is the default; singleProcessOOMKill: true turns it off.
func OOMGroup(singleProcessOOMKill *bool, unified bool) (bool, error) {
	if !unified {
		if singleProcessOOMKill != nil && !*singleProcessOOMKill {
			return false, errors.New("invalid configuration: singleProcessOOMKill must not be explicitly set to false when using cgroup v1")
		}
		return false, nil
	}
	return singleProcessOOMKill == nil || !*singleProcessOOMKill, nil
}
