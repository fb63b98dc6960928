package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"time"
)

// CgroupV2 reports whether the cgroup filesystem is the unified (v2) hierarchy alone. A hybrid
// mount (v1 controllers, v2 only for systemd under /sys/fs/cgroup/unified) is v1.
func (r *Reader) CgroupV2() bool {
	_, err := os.Stat(r.Path(path.Join(cgroupFS, "cgroup.controllers")))
	return err == nil
}

// Cgroup reads the CPU and memory usage of the cgroup name ("/", "/kubepods", …, the cgroupfs
// path below each controller's mount). The root cgroup is the whole node: its memory limit is
// the RAM and its swap the node's swap, from /proc/meminfo, as cadvisor's machine container.
func (r *Reader) Cgroup(name string) (Cgroup, error) {
	name = path.Clean("/" + name)
	if r.CgroupV2() {
		return r.cgroupV2(name)
	}
	return r.cgroupV1(name)
}

func (r *Reader) cgroupV1(name string) (Cgroup, error) {
	// cpuacct is mounted alone or co-mounted with cpu, under either name or a symlink.
	cpuRoot, err := r.v1Hierarchy([]string{"cpuacct", "cpu,cpuacct", "cpuacct,cpu", "cpu"}, "cpuacct.usage")
	if err != nil {
		return Cgroup{}, err
	}
	cpuDir := path.Join(cpuRoot, name)
	memDir := path.Join(cgroupFS, "memory", name)
	var c Cgroup
	b, err := r.read(path.Join(cpuDir, "cpuacct.usage"))
	if err != nil {
		return Cgroup{}, err
	}
	if c.CPU.UsageNanosecs, err = parseUint(b); err != nil {
		return Cgroup{}, fmt.Errorf("%s/cpuacct.usage: %w", cpuDir, err)
	}
	if b, err = r.read(path.Join(memDir, "memory.usage_in_bytes")); err != nil {
		return Cgroup{}, err
	}
	usage, err := parseUint(b)
	if err != nil {
		return Cgroup{}, fmt.Errorf("%s/memory.usage_in_bytes: %w", memDir, err)
	}
	stat, err := r.flatKeyed(path.Join(memDir, "memory.stat"))
	if err != nil {
		return Cgroup{}, err
	}
	c.Memory = memoryV1(usage, stat)
	if name == "/" {
		if err := r.machineLimits(&c.Memory); err != nil {
			return Cgroup{}, err
		}
	} else if c.Memory.Limit, err = r.limit(path.Join(memDir, "memory.limit_in_bytes")); err != nil {
		return Cgroup{}, err
	}
	c.Created = r.created(cpuDir, memDir)
	r.pressure(&c, name, "")
	return c, nil
}

func (r *Reader) cgroupV2(name string) (Cgroup, error) {
	dir := path.Join(cgroupFS, name)
	var c Cgroup
	b, err := r.read(path.Join(dir, "cpu.stat"))
	if err != nil {
		return Cgroup{}, err
	}
	if c.CPU.UsageNanosecs, err = parseCPUStatV2(b); err != nil {
		return Cgroup{}, fmt.Errorf("%s/cpu.stat: %w", dir, err)
	}
	if name == "/" {
		if c.Memory, err = r.rootMemoryV2(); err != nil {
			return Cgroup{}, err
		}
	} else {
		if c.Memory, err = r.memoryV2(dir); err != nil {
			return Cgroup{}, err
		}
	}
	c.Created = r.created(dir)
	r.pressure(&c, name, dir)
	return c, nil
}

func (r *Reader) memoryV2(dir string) (Memory, error) {
	b, err := r.read(path.Join(dir, "memory.current"))
	if err != nil {
		return Memory{}, err
	}
	usage, err := parseUint(b)
	if err != nil {
		return Memory{}, fmt.Errorf("%s/memory.current: %w", dir, err)
	}
	stat, err := r.flatKeyed(path.Join(dir, "memory.stat"))
	if err != nil {
		return Memory{}, err
	}
	m := memoryV2(usage, stat)
	if m.Limit, err = r.limit(path.Join(dir, "memory.max")); err != nil {
		return Memory{}, err
	}
	if b, err := r.read(path.Join(dir, "memory.swap.current")); err == nil { // absent without swap accounting
		if swap, err := parseUint(b); err == nil {
			m.Swap = &swap
			if m.SwapLimit, err = r.limit(path.Join(dir, "memory.swap.max")); err != nil {
				m.SwapLimit = nil
			}
		}
	}
	return m, nil
}

// rootMemoryV2 emulates the memory files the v2 root cgroup lacks, as runc does: usage is
// anon + file of the root memory.stat; without one (old kernels), /proc/meminfo's used memory.
func (r *Reader) rootMemoryV2() (Memory, error) {
	var m Memory
	if stat, err := r.flatKeyed(path.Join(cgroupFS, "memory.stat")); err == nil {
		m = memoryV2(stat["anon"]+stat["file"], stat)
	} else {
		mi, err := r.MemInfo()
		if err != nil {
			return Memory{}, err
		}
		usage := mi.MemTotal - mi.MemFree
		m = Memory{Usage: usage, WorkingSet: workingSet(usage, mi.InactiveFile), RSS: mi.AnonPages}
	}
	return m, r.machineLimits(&m)
}

// machineLimits sets the root cgroup's limits and swap from /proc/meminfo.
func (r *Reader) machineLimits(m *Memory) error {
	mi, err := r.MemInfo()
	if err != nil {
		return err
	}
	total, swapTotal := mi.MemTotal, mi.SwapTotal
	used := uint64(0)
	if mi.SwapTotal > mi.SwapFree {
		used = mi.SwapTotal - mi.SwapFree
	}
	m.Limit, m.SwapLimit, m.Swap = &total, &swapTotal, &used
	return nil
}

// pressure reads the cgroup's PSI: the root's is the system-wide /proc/pressure (v1 and v2
// alike), a v2 cgroup's is in its <resource>.pressure files (v2Dir), a v1 cgroup has none.
// Unreadable files leave the field nil.
func (r *Reader) pressure(c *Cgroup, name, v2Dir string) {
	for res, dst := range map[string]**PSI{"cpu": &c.CPUPressure, "memory": &c.MemoryPressure, "io": &c.IOPressure} {
		var p string
		switch {
		case name == "/":
			p = path.Join("/proc/pressure", res)
		case v2Dir != "":
			p = path.Join(v2Dir, res+".pressure")
		default:
			continue
		}
		b, err := r.read(p)
		if err != nil {
			continue
		}
		if psi, err := parsePressure(b); err == nil {
			*dst = &psi
		}
	}
}

// v1Hierarchy returns the mount of the first candidate hierarchy that has marker at its root.
func (r *Reader) v1Hierarchy(candidates []string, marker string) (string, error) {
	for _, c := range candidates {
		dir := path.Join(cgroupFS, c)
		if _, err := os.Stat(r.Path(path.Join(dir, marker))); err == nil {
			return dir, nil
		}
	}
	return "", fmt.Errorf("no cgroup v1 hierarchy with %s under %s (tried %v): %w", marker, cgroupFS, candidates, fs.ErrNotExist)
}

func (r *Reader) flatKeyed(p string) (map[string]uint64, error) {
	b, err := r.read(p)
	if err != nil {
		return nil, err
	}
	m, err := parseFlatKeyed(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return m, nil
}

func (r *Reader) limit(p string) (*uint64, error) {
	b, err := r.read(p)
	if err != nil {
		return nil, err
	}
	l, err := parseLimit(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return l, nil
}

// created is the earliest modification time of the directories (cadvisor's creation time of a
// raw cgroup); zero when none can be read.
func (r *Reader) created(dirs ...string) time.Time {
	var t time.Time
	for _, d := range dirs {
		fi, err := os.Stat(r.Path(d))
		if err != nil {
			continue
		}
		if t.IsZero() || fi.ModTime().Before(t) {
			t = fi.ModTime()
		}
	}
	return t
}

// IsNotExist reports whether err means the cgroup (or file) does not exist.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
