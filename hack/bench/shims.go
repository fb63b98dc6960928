package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stopLeakedShims stops the containerd shims still running for sandboxes the bench has
// removed, and removes their sockets; it returns how many it stopped. containerd v2.4.2 leaves
// a sandbox's shim running, with no task and no entry in its metadata, when a StartContainer
// in that sandbox is cancelled mid-way: this happens when a run is aborted (nodelet stopped
// while it starts containers, or the raw run's context cancelled). Only shims of the
// environment's containerd (endpoint) whose -id is one of sandboxIDs are touched.
func stopLeakedShims(endpoint string, sandboxIDs map[string]bool) int {
	if len(sandboxIDs) == 0 {
		return 0
	}
	sock := filepath.Clean(strings.TrimPrefix(endpoint, "unix://"))
	dirs, _ := filepath.Glob("/proc/[0-9]*") // the pattern is valid
	stopped := 0
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !strings.HasPrefix(filepath.Base(strings.SplitN(string(b), "\x00", 2)[0]), "containerd-shim") {
			continue
		}
		p := process{pid: pid, args: strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")}
		id, _ := p.flagSingleDash("id")
		ns, _ := p.flagSingleDash("namespace")
		addr, _ := p.flagSingleDash("address")
		if !sandboxIDs[id] || filepath.Clean(addr) != sock {
			continue
		}
		if stopProcess(pid) {
			stopped++
			logf("stopped containerd shim %d of removed sandbox %s, left running by containerd", pid, id)
		}
		// The shim's socket is named by containerd after its address, namespace and ID.
		name := fmt.Sprintf("%x", sha256.Sum256([]byte(filepath.Join(sock, ns, id))))
		_ = os.Remove(filepath.Join(filepath.Dir(sock), "s", name))
	}
	return stopped
}

// stopProcess sends SIGTERM, then SIGKILL after 2 s; it reports whether the process was there.
func stopProcess(pid int) bool {
	if syscall.Kill(pid, syscall.SIGTERM) != nil {
		return false
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if exited(pid) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	return true
}

// exited reports whether pid is gone or a zombie (exited, not yet reaped by its parent).
func exited(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}
