package containergc

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

func TestOrphanShims(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	p := ShimPolicy{Address: "/run/containerd/containerd.sock", Namespace: "k8s.io", MinAge: 5 * time.Minute}
	shim := func(pid int, id string, age time.Duration) Shim {
		return Shim{PID: pid, ID: id, Namespace: "k8s.io", Address: p.Address, Started: t0.Add(-age)}
	}
	other := shim(9, "x", time.Hour)
	other.Address = "/run/other.sock"
	moby := shim(10, "y", time.Hour)
	moby.Namespace = "moby"
	known := func(id string) bool { return id == "sandbox-a" }
	tests := []struct {
		name        string
		shims       []Shim
		policy      ShimPolicy
		suspects    map[int]string
		wantOrphans []int
		wantNext    map[int]string
	}{
		{"a known sandbox's shim", []Shim{shim(1, "sandbox-a", time.Hour)}, p, map[int]string{1: "sandbox-a"}, nil, map[int]string{}},
		{"unknown once: a suspect only", []Shim{shim(2, "lost", time.Hour)}, p, nil, nil, map[int]string{2: "lost"}},
		{"unknown twice and old enough: an orphan", []Shim{shim(2, "lost", time.Hour)}, p, map[int]string{2: "lost"}, []int{2}, map[int]string{}},
		{"unknown twice but young: being created", []Shim{shim(2, "new", time.Minute)}, p, map[int]string{2: "new"}, nil, map[int]string{2: "new"}},
		{"the pid now runs another shim", []Shim{shim(2, "other", time.Hour)}, p, map[int]string{2: "lost"}, nil, map[int]string{2: "other"}},
		{"another containerd or namespace is not ours", []Shim{other, moby}, p, map[int]string{9: "x", 10: "y"}, nil, map[int]string{}},
		{"disabled without an address", []Shim{shim(2, "lost", time.Hour)}, ShimPolicy{}, map[int]string{2: "lost"}, nil, map[int]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orphans, next := OrphanShims(tt.shims, tt.policy, known, tt.suspects, t0)
			var pids []int
			for _, o := range orphans {
				pids = append(pids, o.PID)
			}
			if !slices.Equal(pids, tt.wantOrphans) || fmt.Sprint(next) != fmt.Sprint(tt.wantNext) {
				t.Errorf("orphans %v next %v, want %v %v", pids, next, tt.wantOrphans, tt.wantNext)
			}
		})
	}
}

// listShims and children read a /proc tree: here a fake one.
func TestListShimsAndChildren(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("shims are found on Linux only")
	}
	root := t.TempDir()
	proc := func(pid int, cmdline, stat string) {
		dir := filepath.Join(root, fmt.Sprint(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cmdline"), []byte(cmdline), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	proc(100, "/usr/bin/containerd-shim-runc-v2\x00-namespace\x00k8s.io\x00-id\x00abc\x00-address\x00/run/c.sock\x00", "100 (containerd-shim) S 1 100 100")
	proc(101, "/pause\x00", "101 (pause) S 100 101 101")
	proc(102, "sleep\x00infinity\x00", "102 (sl ee) p) S 100 102 102")
	proc(103, "/usr/bin/containerd\x00", "103 (containerd) S 1 103 103")
	proc(104, "", "104 (kthreadd) S 2 0 0")
	shims, err := listShims(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(shims) != 1 || shims[0].PID != 100 || shims[0].ID != "abc" || shims[0].Namespace != "k8s.io" || shims[0].Address != "/run/c.sock" {
		t.Fatalf("shims %+v", shims)
	}
	if got := children(root, 100); !slices.Equal(got, []int{101, 102}) {
		t.Errorf("children %v, want [101 102]", got)
	}
}
