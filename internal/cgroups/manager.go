package cgroups

import (
	"fmt"
	"path/filepath"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs"
	"github.com/opencontainers/cgroups/fs2"
)

// Manager creates cgroups with the cgroupfs driver and sets their Resources, on cgroup v1 (every
// hierarchy, found in mountinfo, as runc does) or v2 (the unified hierarchy under Root), as
// upstream's cgroup manager does through opencontainers/cgroups: Apply(-1) creates the
// directories, Set writes the settings; device rules and freezing are left alone.
type Manager struct {
	// Root is the cgroup v2 mount (/sys/fs/cgroup); cgroup v1's hierarchies are found from the
	// mount table.
	Root    string
	Unified bool
}

// Set creates the cgroup name (an absolute cgroup path, e.g. /kubepods/burstable) where it is
// missing and sets r on it.
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
	cg := &cgroups.Cgroup{Path: name, Resources: res}
	var mgr cgroups.Manager
	var err error
	if m.Unified {
		mgr, err = fs2.NewManager(cg, filepath.Join(m.Root, name))
	} else {
		mgr, err = fs.NewManager(cg, nil)
	}
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
