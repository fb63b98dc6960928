package host

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// writeTree writes files (path relative to root → content) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const meminfo = "MemTotal: 8000 kB\nMemFree: 1000 kB\nMemAvailable: 5000 kB\nInactive(file): 2000 kB\nAnonPages: 1500 kB\nSwapTotal: 3000 kB\nSwapFree: 2000 kB\n"

func TestCgroupV1(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"proc/meminfo": meminfo,
		"sys/fs/cgroup/cpu,cpuacct/cpuacct.usage":             "5000000000\n",
		"sys/fs/cgroup/cpu,cpuacct/kubepods/cpuacct.usage":    "2000000000\n",
		"sys/fs/cgroup/memory/memory.usage_in_bytes":          "6000000\n",
		"sys/fs/cgroup/memory/memory.stat":                    "total_inactive_file 1000000\ntotal_rss 3000000\npgfault 10\npgmajfault 1\n",
		"sys/fs/cgroup/memory/memory.limit_in_bytes":          "9223372036854771712\n",
		"sys/fs/cgroup/memory/kubepods/memory.usage_in_bytes": "4000000\n",
		"sys/fs/cgroup/memory/kubepods/memory.stat":           "total_inactive_file 500000\ntotal_rss 2000000\npgfault 5\npgmajfault 0\n",
		"sys/fs/cgroup/memory/kubepods/memory.limit_in_bytes": "7000000\n",
		"sys/fs/cgroup/unified/cgroup.controllers":            "", // hybrid: still v1
		"proc/pressure/memory":                                "some avg10=2.50 avg60=0.00 avg300=0.00 total=9\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=3\n",
	})
	r := NewReader(root)
	if r.CgroupV2() {
		t.Fatal("CgroupV2() = true for a v1 tree")
	}
	node, err := r.Cgroup("/")
	if err != nil {
		t.Fatal(err)
	}
	wantNode := Memory{Usage: 6000000, WorkingSet: 5000000, RSS: 3000000, PageFaults: 10, MajorPageFaults: 1,
		Limit: u64(8000 * 1024), Swap: u64(1000 * 1024), SwapLimit: u64(3000 * 1024)}
	if node.CPU.UsageNanosecs != 5000000000 || !reflect.DeepEqual(node.Memory, wantNode) {
		t.Errorf("root: got %+v %+v\nwant memory %+v", node.CPU, node.Memory, wantNode)
	}
	if node.Created.IsZero() {
		t.Error("root: Created is zero")
	}
	// The root's pressure is the system's; the file for cpu is missing, a v1 child has none.
	if node.MemoryPressure == nil || node.MemoryPressure.Some.Avg10 != 2.5 || node.MemoryPressure.Full.Total != 3 || node.CPUPressure != nil {
		t.Errorf("root pressure: memory %+v cpu %+v", node.MemoryPressure, node.CPUPressure)
	}
	pods, err := r.Cgroup("/kubepods")
	if err != nil {
		t.Fatal(err)
	}
	wantPods := Memory{Usage: 4000000, WorkingSet: 3500000, RSS: 2000000, PageFaults: 5, Limit: u64(7000000)}
	if pods.CPU.UsageNanosecs != 2000000000 || !reflect.DeepEqual(pods.Memory, wantPods) {
		t.Errorf("kubepods: got %+v %+v\nwant memory %+v", pods.CPU, pods.Memory, wantPods)
	}
	if pods.MemoryPressure != nil || pods.IOPressure != nil {
		t.Error("a v1 cgroup below the root has no pressure")
	}
	if _, err := r.Cgroup("/nope"); !IsNotExist(err) {
		t.Errorf("missing cgroup: err = %v, want a not-exist error", err)
	}
}

func TestCgroupV2(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"proc/meminfo":                               meminfo,
		"sys/fs/cgroup/cgroup.controllers":           "cpu memory pids\n",
		"sys/fs/cgroup/cpu.stat":                     "usage_usec 7000000\nuser_usec 1\n",
		"sys/fs/cgroup/memory.stat":                  "anon 3000000\nfile 2000000\ninactive_file 500000\npgfault 9\npgmajfault 2\n",
		"sys/fs/cgroup/kubepods/cpu.stat":            "usage_usec 3000000\n",
		"sys/fs/cgroup/kubepods/memory.current":      "4000000\n",
		"sys/fs/cgroup/kubepods/memory.stat":         "anon 2500000\nfile 1500000\ninactive_file 1000000\npgfault 4\npgmajfault 0\n",
		"sys/fs/cgroup/kubepods/memory.max":          "max\n",
		"sys/fs/cgroup/kubepods/memory.swap.current": "4096\n",
		"sys/fs/cgroup/kubepods/memory.swap.max":     "1048576\n",
		"sys/fs/cgroup/kubepods/io.pressure":         "some avg10=0.00 avg60=0.00 avg300=0.00 total=11\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=5\n",
	})
	r := NewReader(root)
	if !r.CgroupV2() {
		t.Fatal("CgroupV2() = false for a v2 tree")
	}
	node, err := r.Cgroup("/")
	if err != nil {
		t.Fatal(err)
	}
	// The v2 root has no memory.current: usage is anon + file.
	wantNode := Memory{Usage: 5000000, WorkingSet: 4500000, RSS: 3000000, PageFaults: 9, MajorPageFaults: 2,
		Limit: u64(8000 * 1024), Swap: u64(1000 * 1024), SwapLimit: u64(3000 * 1024)}
	if node.CPU.UsageNanosecs != 7000000000 || !reflect.DeepEqual(node.Memory, wantNode) {
		t.Errorf("root: got %+v %+v\nwant memory %+v", node.CPU, node.Memory, wantNode)
	}
	pods, err := r.Cgroup("kubepods")
	if err != nil {
		t.Fatal(err)
	}
	wantPods := Memory{Usage: 4000000, WorkingSet: 3000000, RSS: 2500000, PageFaults: 4, Swap: u64(4096), SwapLimit: u64(1048576)}
	if pods.CPU.UsageNanosecs != 3000000000 || !reflect.DeepEqual(pods.Memory, wantPods) {
		t.Errorf("kubepods: got %+v %+v\nwant memory %+v", pods.CPU, pods.Memory, wantPods)
	}
	if pods.IOPressure == nil || pods.IOPressure.Some.Total != 11 || pods.IOPressure.Full.Total != 5 || pods.CPUPressure != nil {
		t.Errorf("kubepods pressure: io %+v cpu %+v", pods.IOPressure, pods.CPUPressure)
	}
}

func TestRootMemoryV2WithoutMemoryStat(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"proc/meminfo":                     meminfo,
		"sys/fs/cgroup/cgroup.controllers": "cpu memory\n",
		"sys/fs/cgroup/cpu.stat":           "usage_usec 1\n",
	})
	node, err := NewReader(root).Cgroup("/")
	if err != nil {
		t.Fatal(err)
	}
	// MemTotal - MemFree, minus Inactive(file).
	if node.Memory.Usage != 7000*1024 || node.Memory.WorkingSet != 5000*1024 || node.Memory.RSS != 1500*1024 {
		t.Errorf("got %+v", node.Memory)
	}
}

func TestProcFiles(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"proc/net/dev":                netDev,
		"proc/stat":                   "cpu 1 2 3\nbtime 1600000000\n",
		"proc/sys/kernel/pid_max":     "4194304\n",
		"proc/sys/kernel/threads-max": "126000\n",
		"proc/loadavg":                "0.1 0.2 0.3 1/345 999\n",
		"proc/self/stat":              "7 (nodelet) S 1 7 7 0 -1 0 100 0 2 0 30 20 0 0 20 0 9 0 1 0 0\n",
		"proc/self/status":            "VmRSS:\t1000 kB\n",
	})
	r := NewReader(root)
	ifs, err := r.NetDev()
	if err != nil || len(ifs) != 2 || ifs[0].Name != "eth0" {
		t.Errorf("NetDev = %+v, %v", ifs, err)
	}
	bt, err := r.BootTime()
	if err != nil || !bt.Equal(time.Unix(1600000000, 0)) {
		t.Errorf("BootTime = %v, %v", bt, err)
	}
	rl := r.Rlimit()
	if rl.MaxPID == nil || *rl.MaxPID != 126000 || rl.Tasks == nil || *rl.Tasks != 345 {
		t.Errorf("Rlimit = %+v", rl)
	}
	p, err := r.Self()
	want := Process{CPUUsageNanosecs: 50 * uint64(10*time.Millisecond), RSS: 1000 * 1024, PageFaults: 100, MajorPageFaults: 2}
	if err != nil || p != want {
		t.Errorf("Self = %+v, %v; want %+v", p, err, want)
	}
	if rl := NewReader(t.TempDir()).Rlimit(); rl.MaxPID != nil || rl.Tasks != nil {
		t.Errorf("Rlimit of an empty tree = %+v, want nil fields", rl)
	}
}

func TestDiskUsage(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"logs/c/0.log":       string(make([]byte, 10000)),
		"logs/c/1.log":       "x",
		"logs/c/sub/ignored": "not a direct file",
	})
	r := NewReader(root)
	u, err := r.FilesUsage("/logs/c")
	if err != nil {
		t.Fatal(err)
	}
	if u.Inodes != 2 || u.Bytes < 10000 {
		t.Errorf("FilesUsage = %+v, want 2 inodes and at least 10000 bytes", u)
	}
	if err := os.Link(filepath.Join(root, "logs/c/0.log"), filepath.Join(root, "logs/c/sub/hard")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(root, "logs/c/sub/link")); err != nil {
		t.Fatal(err)
	}
	tree, err := r.TreeUsage("/logs")
	if err != nil {
		t.Fatal(err)
	}
	// logs, logs/c, logs/c/sub: 3 dirs; 0.log (and its hard link once), 1.log, ignored, link.
	if tree.Inodes != 7 || tree.Bytes < 10000 {
		t.Errorf("TreeUsage = %+v, want 7 inodes and at least 10000 bytes", tree)
	}
	fs, err := r.Statfs("/logs")
	if err != nil || fs.Capacity == 0 || fs.Inodes == 0 || fs.Available > fs.Capacity {
		t.Errorf("Statfs = %+v, %v", fs, err)
	}
	if _, err := r.FilesUsage("/nope"); !IsNotExist(err) {
		t.Errorf("FilesUsage of a missing dir: %v", err)
	}
}
