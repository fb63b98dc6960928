package host

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the tick counts in /proc/<pid>/stat (USER_HZ, 100 on every Linux ABI).
const userHZ = 100

// parseMemInfo parses /proc/meminfo; values are in bytes (the file's kB times 1024).
func parseMemInfo(b []byte) (MemInfo, error) {
	var mi MemInfo
	fields := map[string]*uint64{
		"MemTotal":       &mi.MemTotal,
		"MemFree":        &mi.MemFree,
		"MemAvailable":   &mi.MemAvailable,
		"SwapTotal":      &mi.SwapTotal,
		"SwapFree":       &mi.SwapFree,
		"Inactive(file)": &mi.InactiveFile,
		"AnonPages":      &mi.AnonPages,
	}
	seenTotal := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		dst, want := fields[key]
		if !want {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return MemInfo{}, fmt.Errorf("meminfo: no value for %s", key)
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return MemInfo{}, fmt.Errorf("meminfo: %s: %w", key, err)
		}
		if len(f) > 1 && f[1] == "kB" {
			v *= 1024
		}
		*dst = v
		if key == "MemTotal" {
			seenTotal = true
		}
	}
	if err := sc.Err(); err != nil {
		return MemInfo{}, err
	}
	if !seenTotal {
		return MemInfo{}, fmt.Errorf("meminfo: no MemTotal")
	}
	return mi, nil
}

// ignoredInterface reports the interfaces cadvisor leaves out of a machine's network stats:
// loopback and the host ends of container veth pairs and bridges.
func ignoredInterface(name string) bool {
	n := strings.ToLower(name)
	for _, p := range []string{"lo", "veth", "docker", "nerdctl"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// parseNetDev parses /proc/net/dev, leaving out the ignored interfaces.
func parseNetDev(b []byte) ([]Interface, error) {
	var out []Interface
	sc := bufio.NewScanner(bytes.NewReader(b))
	for line := 0; sc.Scan(); line++ {
		if line < 2 { // two header lines
			continue
		}
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			return nil, fmt.Errorf("net/dev: malformed line %q", sc.Text())
		}
		name = strings.TrimSpace(name)
		f := strings.Fields(rest)
		if len(f) != 16 {
			return nil, fmt.Errorf("net/dev: interface %s: %d fields, want 16", name, len(f))
		}
		if ignoredInterface(name) {
			continue
		}
		var v [16]uint64
		for i, s := range f {
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("net/dev: interface %s: %w", name, err)
			}
			v[i] = n
		}
		// Receive: bytes packets errs drop fifo frame compressed multicast; transmit: the same 8.
		out = append(out, Interface{Name: name, RxBytes: v[0], RxErrors: v[2], TxBytes: v[8], TxErrors: v[10]})
	}
	return out, sc.Err()
}

// parseBootTime returns the boot time from /proc/stat's btime line.
func parseBootTime(b []byte) (time.Time, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "btime" {
			sec, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("stat: btime %q: %w", f[1], err)
			}
			return time.Unix(sec, 0), nil
		}
	}
	if err := sc.Err(); err != nil {
		return time.Time{}, err
	}
	return time.Time{}, fmt.Errorf("stat: no btime line")
}

// parseLoadAvgTasks returns the number of tasks (threads) from /proc/loadavg, the denominator
// of its fourth field ("1.36 3.49 4.53 2/3518 3715089"), as upstream's pidlimit.
func parseLoadAvgTasks(b []byte) (int64, error) {
	f := strings.Fields(string(b))
	if len(f) < 5 {
		return 0, fmt.Errorf("loadavg: %d fields, want 5", len(f))
	}
	_, total, ok := strings.Cut(f[3], "/")
	if !ok {
		return 0, fmt.Errorf("loadavg: malformed field %q", f[3])
	}
	n, err := strconv.ParseInt(total, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("loadavg: %w", err)
	}
	return n, nil
}

// parseInt parses a file holding one integer (/proc/sys/kernel/pid_max).
func parseInt(b []byte) (int64, error) {
	s := strings.TrimSpace(string(b))
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse %q as an integer: %w", s, err)
	}
	return v, nil
}

// parseProcStat reads CPU time and page faults of a process from /proc/<pid>/stat. The command
// name (field 2) may hold spaces and parentheses, so fields are counted after the last ')'.
func parseProcStat(b []byte) (Process, error) {
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Process{}, fmt.Errorf("stat: no command name")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state): minflt is field 10, majflt 12, utime 14, stime 15.
	if len(f) < 13 {
		return Process{}, fmt.Errorf("stat: %d fields after the command, want at least 13", len(f))
	}
	var v [4]uint64
	for j, idx := range []int{7, 9, 11, 12} {
		n, err := strconv.ParseUint(f[idx], 10, 64)
		if err != nil {
			return Process{}, fmt.Errorf("stat: field %d: %w", idx+3, err)
		}
		v[j] = n
	}
	return Process{
		PageFaults:       v[0],
		MajorPageFaults:  v[1],
		CPUUsageNanosecs: (v[2] + v[3]) * uint64(time.Second/userHZ),
	}, nil
}

// parseStatusRSS returns VmRSS in bytes from /proc/<pid>/status.
func parseStatusRSS(b []byte) (uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || key != "VmRSS" {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			break
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("status: VmRSS: %w", err)
		}
		return v * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("status: no VmRSS line")
}
