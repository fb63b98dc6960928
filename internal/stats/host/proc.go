package host

import (
	"fmt"
	"time"
)

// MemInfo reads /proc/meminfo.
func (r *Reader) MemInfo() (MemInfo, error) {
	b, err := r.read("/proc/meminfo")
	if err != nil {
		return MemInfo{}, err
	}
	return parseMemInfo(b)
}

// NetDev reads the interfaces of the reader's network namespace from /proc/net/dev, without
// loopback and container veth ends.
func (r *Reader) NetDev() ([]Interface, error) {
	b, err := r.read("/proc/net/dev")
	if err != nil {
		return nil, err
	}
	return parseNetDev(b)
}

// BootTime reads the boot time from /proc/stat.
func (r *Reader) BootTime() (time.Time, error) {
	b, err := r.read("/proc/stat")
	if err != nil {
		return time.Time{}, err
	}
	return parseBootTime(b)
}

// Rlimit reads the task limit, the smaller of kernel.pid_max and kernel.threads-max, and the
// number of tasks from /proc/loadavg, as upstream's pidlimit. Fields it cannot read stay nil.
func (r *Reader) Rlimit() Rlimit {
	var out Rlimit
	for _, f := range []string{"/proc/sys/kernel/pid_max", "/proc/sys/kernel/threads-max"} {
		b, err := r.read(f)
		if err != nil {
			continue
		}
		if v, err := parseInt(b); err == nil && (out.MaxPID == nil || v < *out.MaxPID) {
			out.MaxPID = &v
		}
	}
	if b, err := r.read("/proc/loadavg"); err == nil {
		if n, err := parseLoadAvgTasks(b); err == nil {
			out.Tasks = &n
		}
	}
	return out
}

// Self reads the calling process (/proc/self): CPU time of all its threads, RSS and faults.
func (r *Reader) Self() (Process, error) {
	stat, err := r.read("/proc/self/stat")
	if err != nil {
		return Process{}, err
	}
	p, err := parseProcStat(stat)
	if err != nil {
		return Process{}, fmt.Errorf("/proc/self/stat: %w", err)
	}
	status, err := r.read("/proc/self/status")
	if err != nil {
		return Process{}, err
	}
	if p.RSS, err = parseStatusRSS(status); err != nil {
		return Process{}, fmt.Errorf("/proc/self/status: %w", err)
	}
	return p, nil
}
