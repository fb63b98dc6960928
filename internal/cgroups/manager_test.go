package cgroups

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/testharness"
	"github.com/nodelet/nodelet/internal/testharness/ci"
)

// TestManagerSetsRealCgroups creates a QoS-like cgroup on this host's cgroup file system and
// reads the settings back from the kernel's files.
func TestManagerSetsRealCgroups(t *testing.T) {
	ci.RequireRoot(t, "creates cgroups")
	const root = "/sys/fs/cgroup"
	unified, err := Unified(root)
	if err != nil {
		t.Fatal(err)
	}
	base := "/nodelet-unit-" + testharness.RandomHex(4)
	name := base + "/kubepods/burstable"
	t.Cleanup(func() { removeTree(t, root, base) })
	m := Manager{Root: root, Unified: unified}
	shares, mem, pids := uint64(512), int64(1<<30), int64(512)
	if err := m.Set(name, Resources{CPUShares: &shares, Memory: &mem, PidsLimit: &pids}); err != nil {
		t.Fatal(err)
	}
	read := func(hier, file string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, hier, name, file))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	if unified {
		if got := read("", "cpu.weight"); got != "20" {
			t.Errorf("cpu.weight = %s, want 20 (512 shares)", got)
		}
		if got := read("", "memory.max"); got != "1073741824" {
			t.Errorf("memory.max = %s", got)
		}
		if got := read("", "pids.max"); got != "512" {
			t.Errorf("pids.max = %s, want 512", got)
		}
	} else {
		if got := read("cpu", "cpu.shares"); got != "512" {
			t.Errorf("cpu.shares = %s, want 512", got)
		}
		if got := read("memory", "memory.limit_in_bytes"); got != "1073741824" {
			t.Errorf("memory.limit_in_bytes = %s", got)
		}
		if got := read("pids", "pids.max"); got != "512" {
			t.Errorf("pids.max = %s, want 512", got)
		}
	}
	// Set again: the cgroup exists; only what is given changes.
	shares = 2
	if err := m.Set(name, Resources{CPUShares: &shares}); err != nil {
		t.Fatal(err)
	}
	if !unified {
		if got := read("cpu", "cpu.shares"); got != "2" {
			t.Errorf("cpu.shares = %s after the update, want 2", got)
		}
		if got := read("memory", "memory.limit_in_bytes"); got != "1073741824" {
			t.Errorf("memory.limit_in_bytes = %s after a cpu-only update", got)
		}
	}
}

// removeTree removes the cgroup base and what is below it, in every hierarchy.
func removeTree(t testing.TB, root, base string) {
	ents, _ := os.ReadDir(root)
	dirs := []string{filepath.Join(root, base)}
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(root, e.Name(), base))
		}
	}
	for _, d := range dirs {
		var all []string
		_ = filepath.WalkDir(d, func(p string, de os.DirEntry, err error) error {
			if err == nil && de.IsDir() {
				all = append(all, p)
			}
			return nil
		})
		for i := len(all) - 1; i >= 0; i-- {
			if err := syscall.Rmdir(all[i]); err != nil {
				t.Errorf("remove cgroup %s: %v", all[i], err)
			}
		}
	}
}

// TestSetExistingOnRealCgroups: a reservation goes on an existing cgroup of this host (every
// hierarchy it needs); a missing one is an error naming it, and nothing is created.
func TestSetExistingOnRealCgroups(t *testing.T) {
	ci.RequireRoot(t, "creates cgroups")
	const root = "/sys/fs/cgroup"
	unified, err := Unified(root)
	if err != nil {
		t.Fatal(err)
	}
	name := "/nodelet-unit-" + testharness.RandomHex(4)
	t.Cleanup(func() { removeTree(t, root, name) })
	m := Manager{Root: root, Unified: unified}
	shares, mem, pids := uint64(256), int64(256<<20), int64(100)
	r := Resources{CPUShares: &shares, Memory: &mem, PidsLimit: &pids}
	if err := m.SetExisting(name, r); err == nil || !strings.Contains(err.Error(), name+" does not exist") {
		t.Fatalf("SetExisting on a missing cgroup = %v, want an error naming it", err)
	}
	if _, err := os.Stat(filepath.Join(root, "memory", name)); err == nil {
		t.Error("SetExisting created the missing cgroup")
	}
	if err := m.Set(name, Resources{}); err != nil { // the operator's cgroup, made beforehand
		t.Fatal(err)
	}
	if err := m.SetExisting(name, r); err != nil {
		t.Fatal(err)
	}
	file, want := filepath.Join(root, "memory", name, "memory.limit_in_bytes"), "268435456"
	if unified {
		file = filepath.Join(root, name, "memory.max")
	}
	if b, err := os.ReadFile(file); err != nil || strings.TrimSpace(string(b)) != want {
		t.Errorf("%s = %q, %v; want %s", file, b, err, want)
	}
}

func TestCgroupfsName(t *testing.T) {
	for in, want := range map[string]string{"/system.slice": "/system", "system.slice": "/system",
		"/kubepods.slice/kubepods-burstable.slice": "/kubepods/burstable", "/system_reserved.slice": "/system-reserved"} {
		if got := CgroupfsName(in); got != want {
			t.Errorf("CgroupfsName(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkQoSUpdate is one QoSManager.Update on this host's cgroups (the two QoS cgroups set):
// what each new sandbox waits for.
func BenchmarkQoSUpdate(b *testing.B) {
	ci.RequireRoot(b, "creates cgroups")
	const root = "/sys/fs/cgroup"
	unified, err := Unified(root)
	if err != nil {
		b.Fatal(err)
	}
	base := "/nodelet-bench-" + testharness.RandomHex(4)
	b.Cleanup(func() { removeTree(b, root, base) })
	q, err := NewQoSManager(QoSConfig{PodsCgroup: base + "/kubepods"},
		QoSDeps{Clock: clock.RealClock{}, Cgroups: Manager{Root: root, Unified: unified}, ActivePods: func() []*v1.Pod { return nil }})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := q.Update(); err != nil {
			b.Fatal(err)
		}
	}
}
