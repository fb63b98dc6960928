package cgroups

import (
	"errors"
	"fmt"
)

// The cgroup drivers, as cgroupDriver and the CRI RuntimeConfig name them.
const (
	DriverCgroupfs = "cgroupfs"
	DriverSystemd  = "systemd"
)

// ErrSystemdDriver is Driver's refusal of the systemd driver, which nodelet does not drive yet.
var ErrSystemdDriver = errors.New("nodelet drives cgroups with the cgroupfs driver only so far")

// Driver decides the cgroup driver nodelet uses: the runtime's when it reports one (fromRuntime,
// from the CRI RuntimeConfig; "" when it does not), as upstream does since
// KubeletCgroupDriverFromCRI, else configured (cgroupDriver). A driver the pods' cgroups could
// not be made with is refused at start, saying where it came from and what to change, rather
// than every pod failing in the runtime later.
func Driver(configured, fromRuntime string) (string, error) {
	switch {
	case fromRuntime == DriverSystemd:
		return "", fmt.Errorf("the container runtime uses the systemd cgroup driver (its CRI RuntimeConfig says so): %w; "+
			"configure the runtime for cgroupfs (containerd: SystemdCgroup = false in the runc runtime's options)", ErrSystemdDriver)
	case fromRuntime != "":
		return fromRuntime, nil
	case configured == DriverSystemd:
		return "", fmt.Errorf("cgroupDriver: systemd: %w; set cgroupDriver: cgroupfs, with the runtime configured for cgroupfs "+
			"(containerd: SystemdCgroup = false)", ErrSystemdDriver)
	}
	return DriverCgroupfs, nil
}
