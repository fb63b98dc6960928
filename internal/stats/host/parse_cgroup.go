package host

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// unlimitedMemory is where a memory limit counts as none: the kernel rounds "no limit" down to a
// page multiple of MaxInt64 (cgroup v1) and cadvisor uses the same threshold.
const unlimitedMemory = uint64(1) << 62

// parseUint parses a file holding one unsigned number, as cpuacct.usage or memory.current.
func parseUint(b []byte) (uint64, error) {
	s := strings.TrimSpace(string(b))
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse %q as an unsigned integer: %w", s, err)
	}
	return v, nil
}

// parseLimit parses a memory limit file (memory.limit_in_bytes, memory.max, memory.swap.max):
// nil means no limit ("max", or a v1 value near MaxInt64).
func parseLimit(b []byte) (*uint64, error) {
	if strings.TrimSpace(string(b)) == "max" {
		return nil, nil
	}
	v, err := parseUint(b)
	if err != nil {
		return nil, err
	}
	if v >= unlimitedMemory {
		return nil, nil
	}
	return &v, nil
}

// parseFlatKeyed parses "key value" lines (memory.stat, cpu.stat, cpuacct.stat).
func parseFlatKeyed(b []byte) (map[string]uint64, error) {
	m := make(map[string]uint64)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("malformed line %q: want \"key value\"", sc.Text())
		}
		v, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("malformed value in line %q: %w", sc.Text(), err)
		}
		m[fields[0]] = v
	}
	return m, sc.Err()
}

// parseCPUStatV2 returns the cumulative CPU time in nanoseconds from a cgroup v2 cpu.stat.
func parseCPUStatV2(b []byte) (uint64, error) {
	m, err := parseFlatKeyed(b)
	if err != nil {
		return 0, err
	}
	usec, ok := m["usage_usec"]
	if !ok {
		return 0, fmt.Errorf("cpu.stat has no usage_usec")
	}
	return usec * 1000, nil
}

// workingSet is usage minus the inactive file cache, floored at zero (cadvisor's definition,
// the one eviction and metrics-server rely on).
func workingSet(usage, inactiveFile uint64) uint64 {
	if inactiveFile > usage {
		return 0
	}
	return usage - inactiveFile
}

// firstOf returns the value of the first key present in m.
func firstOf(m map[string]uint64, keys ...string) (uint64, bool) {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v, true
		}
	}
	return 0, false
}

// memoryV1 builds the memory reading of a cgroup v1 memory controller from memory.usage_in_bytes
// and memory.stat, as cadvisor does: the hierarchical total_* counters when present (they are
// with use_hierarchy=1, the only mode of recent kernels), the cgroup's own pgfault and
// pgmajfault (cadvisor's ContainerData, which the summary reports).
func memoryV1(usage uint64, stat map[string]uint64) Memory {
	inactive, _ := firstOf(stat, "total_inactive_file", "inactive_file")
	rss, _ := firstOf(stat, "total_rss", "rss")
	m := Memory{
		Usage:           usage,
		WorkingSet:      workingSet(usage, inactive),
		RSS:             rss,
		PageFaults:      stat["pgfault"],
		MajorPageFaults: stat["pgmajfault"],
	}
	if swap, ok := firstOf(stat, "total_swap", "swap"); ok { // only with swap accounting
		m.Swap = &swap
	}
	return m
}

// memoryV2 builds the memory reading of a cgroup v2 cgroup from memory.current and memory.stat.
func memoryV2(usage uint64, stat map[string]uint64) Memory {
	return Memory{
		Usage:           usage,
		WorkingSet:      workingSet(usage, stat["inactive_file"]),
		RSS:             stat["anon"],
		PageFaults:      stat["pgfault"],
		MajorPageFaults: stat["pgmajfault"],
	}
}

// parsePressure parses a PSI file (/proc/pressure/<res>, <cgroup>/<res>.pressure):
//
//	some avg10=0.00 avg60=0.00 avg300=0.00 total=0
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=0
//
// Total is the kernel's, in microseconds (what runc and cadvisor pass on).
func parsePressure(b []byte) (PSI, error) {
	var p PSI
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		var d *PSIData
		switch f[0] {
		case "some":
			d = &p.Some
		case "full":
			d = &p.Full
		default:
			continue
		}
		for _, kv := range f[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return PSI{}, fmt.Errorf("malformed pressure field %q", kv)
			}
			var err error
			switch k {
			case "avg10":
				d.Avg10, err = strconv.ParseFloat(v, 64)
			case "avg60":
				d.Avg60, err = strconv.ParseFloat(v, 64)
			case "avg300":
				d.Avg300, err = strconv.ParseFloat(v, 64)
			case "total":
				d.Total, err = strconv.ParseUint(v, 10, 64)
			}
			if err != nil {
				return PSI{}, fmt.Errorf("pressure field %q: %w", kv, err)
			}
		}
	}
	return p, sc.Err()
}
