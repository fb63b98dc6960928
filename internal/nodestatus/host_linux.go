package nodestatus

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// kernelRelease is uname -r.
func kernelRelease() (string, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", fmt.Errorf("uname: %w", err)
	}
	return unix.ByteSliceToString(u.Release[:]), nil
}

// fsCapacity is the size in bytes of the filesystem holding path, as cAdvisor reports it.
func fsCapacity(path string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", path, err)
	}
	return int64(st.Blocks) * st.Bsize, nil
}
