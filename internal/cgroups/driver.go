package cgroups

import (
	"errors"
	"fmt"

	"github.com/opencontainers/cgroups/systemd"
)

// SystemdRunning reports whether systemd is the host's init (/run/systemd/system exists).
func SystemdRunning() bool { return systemd.IsRunningSystemd() }

// The cgroup drivers, as cgroupDriver and the CRI RuntimeConfig name them.
const (
	DriverCgroupfs = "cgroupfs"
	DriverSystemd  = "systemd"
)

// ErrNoSystemd is Driver's refusal of the systemd driver on a host whose init is not systemd.
var ErrNoSystemd = errors.New("systemd is not running on this host (no /run/systemd/system), so it cannot make the pods' cgroups")

// Driver decides the cgroup driver nodelet uses: the runtime's when it reports one (fromRuntime,
// from the CRI RuntimeConfig; "" when it does not), as upstream does since
// KubeletCgroupDriverFromCRI (a configured driver that differs is overridden, and run logs so),
// else configured (cgroupDriver). systemd where systemd does not run (systemdRunning) is refused
// at start, saying where it came from and what to change, rather than every pod failing in the
// runtime later.
func Driver(configured, fromRuntime string, systemdRunning bool) (string, error) {
	driver, from := configured, "cgroupDriver: "+configured
	if fromRuntime != "" {
		driver, from = fromRuntime, "the container runtime's cgroup driver (its CRI RuntimeConfig)"
	}
	if driver == DriverSystemd && !systemdRunning {
		return "", fmt.Errorf("%s is systemd: %w; use cgroupfs (cgroupDriver: cgroupfs, and containerd's SystemdCgroup = false)", from, ErrNoSystemd)
	}
	return driver, nil
}
