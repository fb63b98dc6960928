//go:build !linux

package nodestatus

import "errors"

func kernelRelease() (string, error) { return "", errors.New("uname: only supported on Linux") }

func fsCapacity(path string) (int64, error) {
	return 0, errors.New("statfs " + path + ": only supported on Linux")
}
