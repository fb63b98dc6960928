package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// stopOrphanShims stops the containerd shims an aborted run left behind and removes their
// sockets; it returns how many it stopped. containerd v2.4.2 leaves a shim running, with no
// task, no sandbox and no container, when the RunPodSandbox or StartContainer that started it
// is cancelled mid-way — as when a run is aborted while pods start (nodelet stopped, or the
// raw run's context cancelled). A shim is taken for such an orphan only when it belongs to the
// test environment's containerd, started at or after since (the aborted run's start), has no
// child process (a live sandbox's shim has its pause process) and has an ID the runtime does
// not know, twice settleTime apart; the runtime's other shims are never touched.
func (b *bench) stopOrphanShims(since time.Time) int {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	first := b.orphanShims(ctx, since)
	if len(first) == 0 {
		return 0
	}
	time.Sleep(settleTime)
	stopped := 0
	for _, s := range b.orphanShims(ctx, since) {
		if first[s.pid].id != s.id {
			continue
		}
		if stopProcess(s.pid) {
			stopped++
			logf("stopped containerd shim %d (sandbox %s): containerd left it running after a cancelled call", s.pid, s.id)
		}
		// containerd names a shim's socket after its address, namespace and ID.
		name := fmt.Sprintf("%x", sha256.Sum256([]byte(filepath.Join(b.socket(), s.namespace, s.id))))
		_ = os.Remove(filepath.Join(filepath.Dir(b.socket()), "s", name))
	}
	return stopped
}

type shim struct {
	pid           int
	id, namespace string
}

func (b *bench) socket() string { return filepath.Clean(strings.TrimPrefix(b.endpoint, "unix://")) }

// orphanShims lists the shims matching stopOrphanShims's conditions, by PID.
func (b *bench) orphanShims(ctx context.Context, since time.Time) map[int]shim {
	known := map[string]bool{}
	sbs, err := b.cri.ListPodSandbox(ctx, nil)
	if err != nil {
		return nil // without the runtime's view nothing can be called an orphan
	}
	for _, s := range sbs {
		known[s.Id] = true
	}
	ctrs, err := b.cri.ListContainers(ctx, &runtimeapi.ContainerFilter{})
	if err != nil {
		return nil
	}
	for _, c := range ctrs {
		known[c.Id] = true
	}
	procs := readProcs()
	parents := map[int]bool{}
	for _, p := range procs {
		parents[p.ppid] = true
	}
	out := map[int]shim{}
	for _, p := range procs {
		if !strings.HasPrefix(filepath.Base(p.args[0]), "containerd-shim") || parents[p.pid] || p.started.Before(since.Add(-time.Second)) {
			continue
		}
		id, _ := p.flagSingleDash("id")
		ns, _ := p.flagSingleDash("namespace")
		addr, _ := p.flagSingleDash("address")
		if id == "" || known[id] || filepath.Clean(addr) != b.socket() {
			continue
		}
		out[p.pid] = shim{pid: p.pid, id: id, namespace: ns}
	}
	return out
}

// procInfo is a process's command line, parent and start time.
type procInfo struct {
	process
	ppid    int
	started time.Time
}

// readProcs lists the machine's processes (kernel threads and processes gone meanwhile left out).
func readProcs() []procInfo {
	boot := bootTime()
	hz := clockTicks()
	dirs, _ := filepath.Glob("/proc/[0-9]*") // the pattern is valid
	var out []procInfo
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		cmdline, err1 := os.ReadFile(filepath.Join(d, "cmdline"))
		stat, err2 := os.ReadFile(filepath.Join(d, "stat"))
		if err1 != nil || err2 != nil || len(cmdline) == 0 {
			continue
		}
		f, ok := statFields(string(stat)) // state is field 3: ppid (4) is f[1], starttime (22) f[19]
		if !ok || len(f) < 20 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		ticks, _ := strconv.ParseFloat(f[19], 64)
		out = append(out, procInfo{
			process: process{pid: pid, args: strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")},
			ppid:    ppid,
			started: boot.Add(time.Duration(ticks / hz * float64(time.Second))),
		})
	}
	return out
}

// bootTime is the btime line of /proc/stat: when the machine booted, to the second.
func bootTime() time.Time {
	if v, ok := fieldOf("/proc/stat", "btime "); ok {
		if sec, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return time.Unix(sec, 0)
		}
	}
	return time.Time{}
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
	f, ok := statFields(string(b))
	return !ok || len(f) == 0 || f[0] == "Z"
}
