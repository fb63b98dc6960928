//go:build !linux

package volumes

import (
	"errors"
	"os"
)

// unsupportedMounter is the Mounter off Linux: nodelet runs pods on Linux only.
type unsupportedMounter struct{}

// NewSystemMounter returns a Mounter whose every call fails with errors.ErrUnsupported.
func NewSystemMounter() Mounter { return unsupportedMounter{} }

func (unsupportedMounter) MountTmpfs(string, int64) error    { return errors.ErrUnsupported }
func (unsupportedMounter) Unmount(string) error              { return errors.ErrUnsupported }
func (unsupportedMounter) IsMountPoint(string) (bool, error) { return false, errors.ErrUnsupported }

// MountPointsUnder fails with errors.ErrUnsupported off Linux.
func MountPointsUnder(string) ([]string, error) { return nil, errors.ErrUnsupported }

// MakeRShared fails with errors.ErrUnsupported off Linux.
func MakeRShared(string) error { return errors.ErrUnsupported }

// removeTree is os.RemoveAll off Linux (no mount-crossing guard).
func removeTree(path string) error { return os.RemoveAll(path) }
