package cgroups

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs"
	"github.com/opencontainers/cgroups/fs2"
	"github.com/opencontainers/cgroups/systemd"
)

// Manager creates and removes cgroups and sets their Resources, as upstream's cgroup manager does
// through opencontainers/cgroups, with the driver Names says: cgroupfs on cgroup v1 (every
// hierarchy, found in mountinfo, as runc does) or v2 (the unified hierarchy under Root), or
// systemd (each cgroup a slice unit made over D-Bus, on v1 or v2). Apply(-1) creates a cgroup,
// Set writes its settings; device rules and freezing are left alone.
type Manager struct {
	// Root is the cgroup v2 mount (/sys/fs/cgroup); cgroup v1's hierarchies are found from the
	// mount table.
	Root    string
	Unified bool
	// Names turns nodelet's cgroup names into the driver's; nil is the cgroupfs driver.
	Names *Layout
}

func (m Manager) systemd() bool { return m.Names != nil && m.Names.Systemd() }

// manager is opencontainers/cgroups' manager of the cgroup name (cgroupfs form) with r.
func (m Manager) manager(name string, r *cgroups.Resources) (cgroups.Manager, error) {
	cg := &cgroups.Cgroup{Resources: r}
	if !m.systemd() {
		cg.Path = name
		if m.Unified {
			return fs2.NewManager(cg, filepath.Join(m.Root, name))
		}
		return fs.NewManager(cg, nil)
	}
	// As upstream's libctCgroupConfig: the unit is the last part of the systemd name, its parent
	// the slice above ("-.slice" for the root).
	literal, err := SystemdName(name)
	if err != nil {
		return nil, err
	}
	dir, base := path.Split(literal)
	if dir == "/" {
		dir = "-.slice"
	} else {
		dir = path.Base(dir)
	}
	cg.Systemd, cg.Parent, cg.Name = true, dir, base
	if m.Unified {
		return systemd.NewUnifiedManager(cg, "")
	}
	return systemd.NewLegacyManager(cg, nil)
}

// Set creates the cgroup name (an absolute cgroup path in cgroupfs form, e.g.
// /kubepods/burstable) where it is missing and sets r on it.
func (m Manager) Set(name string, r Resources) error {
	res := &cgroups.Resources{SkipDevices: true, SkipFreezeOnSet: true}
	if r.CPUShares != nil {
		if m.Unified {
			res.CpuWeight = SharesToWeight(*r.CPUShares)
		} else {
			res.CpuShares = *r.CPUShares
		}
	}
	if r.CPUQuota != nil {
		res.CpuQuota = *r.CPUQuota
	}
	if r.CPUPeriod != nil {
		res.CpuPeriod = *r.CPUPeriod
	}
	if r.Memory != nil {
		res.Memory = *r.Memory
	}
	res.PidsLimit = r.PidsLimit
	mgr, err := m.manager(name, res)
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", name, err)
	}
	if err := mgr.Apply(-1); err != nil {
		return fmt.Errorf("create cgroup %s: %w", name, err)
	}
	if err := mgr.Set(res); err != nil {
		return fmt.Errorf("set the resources of cgroup %s: %w", name, err)
	}
	return nil
}

// Destroy removes the cgroup name (cgroupfs form) with the systemd driver: its slice unit is
// stopped, then what systemd left of its directories removed. It holds no process by then (the
// caller killed what the runtime left). With cgroupfs it does nothing: the caller removes the
// directories itself.
func (m Manager) Destroy(name string) error {
	if !m.systemd() {
		return nil
	}
	mgr, err := m.manager(name, &cgroups.Resources{})
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", name, err)
	}
	if err := mgr.Destroy(); err != nil {
		return fmt.Errorf("remove cgroup %s: %w", name, err)
	}
	return nil
}

// SetExisting sets r on an existing cgroup the operator named as the driver names it
// (kubeReservedCgroup, systemReservedCgroup: "/system.slice" with systemd), as upstream's
// enforceExistingCgroup: a cgroup that does not exist is an error, never created.
func (m Manager) SetExisting(literal string, r Resources) error {
	dirs := []string{filepath.Join(m.Root, literal)}
	if !m.Unified {
		dirs = []string{filepath.Join(m.Root, "cpu", literal), filepath.Join(m.Root, "memory", literal)}
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			return fmt.Errorf("cgroup %s does not exist (%s): create it, or leave it out of enforceNodeAllocatable", literal, d)
		}
	}
	name := literal
	if m.systemd() {
		name = CgroupfsName(literal)
	}
	return m.Set(name, r)
}

// CgroupfsName is upstream's ParseSystemdToCgroupName: a systemd slice ("/system.slice",
// "kubepods-burstable.slice") in nodelet's cgroupfs form ("/system", "/kubepods/burstable"),
// the parts' "_" back to "-".
func CgroupfsName(systemdName string) string {
	base := strings.TrimSuffix(path.Base(systemdName), ".slice")
	parts := strings.Split(base, "-")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(p, "_", "-")
	}
	return "/" + strings.Join(parts, "/")
}
