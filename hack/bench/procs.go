package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is the kernel's USER_HZ (getconf CLK_TCK), the unit of utime and stime in
// /proc/<pid>/stat; 100 when getconf is not available (its value on every Linux platform Go
// supports).
func clockTicks() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		return 100
	}
	hz, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil || hz <= 0 {
		return 100
	}
	return hz
}

// statFields returns the fields of a /proc/<pid>/stat line after the command name (field 2),
// which is in parentheses and may contain spaces: the fields are counted from its last ')', so
// the process state (field 3 of proc(5)) is the first.
func statFields(stat string) ([]string, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(stat[i+1:]), true
}

// parseStatTicks returns utime+stime from the content of /proc/<pid>/stat.
func parseStatTicks(stat string) (uint64, error) {
	f, ok := statFields(stat)
	if !ok {
		return 0, fmt.Errorf("no ')' after the command name in %q", stat)
	}
	// utime (14) and stime (15) are at 11 and 12.
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	utime, err := strconv.ParseUint(f[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("utime %q: %w", f[11], err)
	}
	stime, err := strconv.ParseUint(f[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stime %q: %w", f[12], err)
	}
	return utime + stime, nil
}

// cpuSeconds is the CPU time (user + system, all threads) process pid has used so far.
func cpuSeconds(pid int, hz float64) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read CPU time of pid %d: %w", pid, err)
	}
	ticks, err := parseStatTicks(string(b))
	if err != nil {
		return 0, fmt.Errorf("parse /proc/%d/stat: %w", pid, err)
	}
	return float64(ticks) / hz, nil
}

// parseStatusKiB returns the value of a "Key:   1234 kB" line of /proc/<pid>/status.
func parseStatusKiB(status, key string) (uint64, error) {
	for _, line := range strings.Split(status, "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || name != key {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("%s: unexpected value %q", key, strings.TrimSpace(rest))
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", key, err)
		}
		return v, nil
	}
	return 0, fmt.Errorf("no %s line", key)
}

// memory is a process's resident set size: its peak (VmHWM) and current (VmRSS) values, and of
// the current one the anonymous part (RssAnon: heap, stacks; the rest is mostly the pages of
// its binary it has touched, clean and shared with the page cache), KiB.
type memory struct{ peakKiB, rssKiB, anonKiB uint64 }

func readMemory(pid int) (memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, fmt.Errorf("read memory of pid %d: %w", pid, err)
	}
	var m memory
	if m.peakKiB, err = parseStatusKiB(string(b), "VmHWM"); err != nil {
		return memory{}, fmt.Errorf("parse /proc/%d/status: %w", pid, err)
	}
	if m.rssKiB, err = parseStatusKiB(string(b), "VmRSS"); err != nil {
		return memory{}, fmt.Errorf("parse /proc/%d/status: %w", pid, err)
	}
	if m.anonKiB, err = parseStatusKiB(string(b), "RssAnon"); err != nil {
		return memory{}, fmt.Errorf("parse /proc/%d/status: %w", pid, err)
	}
	return m, nil
}

// process is a running process as /proc shows it.
type process struct {
	pid  int
	args []string
}

func (p process) String() string { return fmt.Sprintf("pid %d (%s)", p.pid, strings.Join(p.args, " ")) }

// flag returns the value of a --name value or --name=value argument.
func (p process) flag(name string) (string, bool) {
	for i, a := range p.args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
		if a == "--"+name && i+1 < len(p.args) {
			return p.args[i+1], true
		}
	}
	return "", false
}

// flagSingleDash returns the value of a -name value argument (Go's flag package style).
func (p process) flagSingleDash(name string) (string, bool) {
	for i, a := range p.args {
		if a == "-"+name && i+1 < len(p.args) {
			return p.args[i+1], true
		}
	}
	return "", false
}

// short names an agent process by its PID and node name, for the report.
func (p process) short() string {
	if node, ok := p.flag("hostname-override"); ok {
		return fmt.Sprintf("pid %d, node %s", p.pid, node)
	}
	return fmt.Sprintf("pid %d", p.pid)
}

// sameSocket reports whether two CRI endpoints ("unix:///path" or "/path") are one socket.
func sameSocket(a, b string) bool {
	clean := func(e string) string { return filepath.Clean(strings.TrimPrefix(e, "unix://")) }
	return clean(a) == clean(b)
}

// isAgentCmdline reports whether a NUL-separated /proc/<pid>/cmdline is a node agent's: argv[0]
// named nodelet or kubelet (the upstream one, which also kills the runtime's pods it does not
// know), whatever its directory, as `pgrep -f 'nodelet --'` would find it, but without matching
// a shell or `go build -o .../nodelet` that merely mentions the name. The e2e test binary
// (e2e.test) counts too: it starts nodelets one after the other, with gaps of several seconds
// (building, make run) in which no nodelet runs.
func isAgentCmdline(cmdline []byte) bool {
	argv0, _, _ := bytes.Cut(cmdline, []byte{0})
	base := filepath.Base(string(argv0))
	return base == "nodelet" || base == "kubelet" || base == "e2e.test"
}

// otherAgents lists the agent processes (isAgentCmdline) that may use the runtime at endpoint
// but the bench's own, its children. An agent whose --container-runtime-endpoint flag names
// another socket is left out; one without the flag counts (its config file may name the
// endpoint).
func otherAgents(endpoint string) ([]process, error) {
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return nil, fmt.Errorf("list /proc: %w", err)
	}
	self := os.Getpid()
	var out []process
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !isAgentCmdline(b) {
			continue // gone meanwhile, a kernel thread, a zombie or not an agent
		}
		if stat, err := os.ReadFile(filepath.Join(d, "stat")); err == nil {
			if f, ok := statFields(string(stat)); ok && len(f) > 1 && f[1] == strconv.Itoa(self) {
				continue // the bench's own nodelet or kubelet
			}
		}
		p := process{pid: pid, args: strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")}
		if e, ok := p.flag("container-runtime-endpoint"); ok && !sameSocket(e, endpoint) {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}
