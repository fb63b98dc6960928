//go:build !linux

package host

import (
	"errors"
	"fmt"
)

// errUnsupported is returned by the filesystem calls on platforms without statfs.
var errUnsupported = errors.New("not supported on this platform")

// Statfs is Linux-only.
func (r *Reader) Statfs(p string) (FsInfo, error) {
	return FsInfo{}, fmt.Errorf("statfs %s: %w", p, errUnsupported)
}

// FilesUsage is Linux-only.
func (r *Reader) FilesUsage(dir string) (DiskUsage, error) {
	return DiskUsage{}, fmt.Errorf("usage of %s: %w", dir, errUnsupported)
}

// TreeUsage is Linux-only.
func (r *Reader) TreeUsage(dir string) (DiskUsage, error) {
	return DiskUsage{}, fmt.Errorf("usage of %s: %w", dir, errUnsupported)
}

// DifferentDevices is Linux-only.
func DifferentDevices(a, b string) (bool, error) {
	return false, fmt.Errorf("devices of %s and %s: %w", a, b, errUnsupported)
}
