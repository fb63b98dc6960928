package stats

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/stats/statstest"
)

// t0 is the fake clock's start; CRI timestamps are on the same time line.
var t0 = time.Unix(10000, 0)

const (
	rootDir    = "/var/lib/nodelet"
	imageMount = "/var/lib/containerd"
	btime      = 1700000000
)

// fixture is a fake host tree (cgroup v1) and a fake runtime with two pods:
//
//	ns/web (sandbox sb-web, ready; an older not-ready sandbox sb-web-old of the same pod):
//	  app (running attempt 1 c-app; exited attempt 0 c-app-0), sidecar (c-side, no CRI rate)
//	  an emptyDir "scratch", an etc-hosts file, logs of app
//	ns/db (sb-db, ready; the runtime gives no pod-level CPU or memory): db (c-db)
type fixture struct {
	root    string
	clock   *clocktesting.FakeClock
	runtime *statstest.Runtime
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{root: t.TempDir(), clock: clocktesting.NewFakeClock(t0), runtime: &statstest.Runtime{}}
	writeTree(t, f.root, map[string]string{
		"proc/meminfo":                "MemTotal: 8000000 kB\nMemFree: 1000000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
		"proc/net/dev":                "h1\nh2\n    lo: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0\n  eth0: 1000 10 1 0 0 0 0 0 2000 20 2 0 0 0 0 0\n",
		"proc/stat":                   fmt.Sprintf("cpu 1 2 3\nbtime %d\n", btime),
		"proc/sys/kernel/pid_max":     "32768\n",
		"proc/sys/kernel/threads-max": "63000\n",
		"proc/loadavg":                "0.1 0.2 0.3 2/321 999\n",
		"proc/pressure/cpu":           "some avg10=1.00 avg60=2.00 avg300=3.00 total=400\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"proc/self/status":            "VmRSS:\t20480 kB\n",
		"sys/fs/cgroup/memory/memory.usage_in_bytes":                                "3000000000\n",
		"sys/fs/cgroup/memory/memory.stat":                                          "total_inactive_file 1000000000\ntotal_rss 1500000000\ntotal_swap 0\npgfault 100\npgmajfault 1\n",
		"sys/fs/cgroup/memory/kubepods/memory.usage_in_bytes":                       "1000000000\n",
		"sys/fs/cgroup/memory/kubepods/memory.stat":                                 "total_inactive_file 200000000\ntotal_rss 700000000\n",
		"sys/fs/cgroup/memory/kubepods/memory.limit_in_bytes":                       "7000000000\n",
		"var/log/pods/ns_web_uid-web/app/0.log":                                     strings.Repeat("log line\n", 1000),
		"var/lib/nodelet/pods/uid-web/etc-hosts":                                    "127.0.0.1 localhost\n",
		"var/lib/nodelet/pods/uid-web/volumes/kubernetes.io~empty-dir/scratch/data": strings.Repeat("x", 20000),
		"var/lib/containerd/.keep":                                                  "",
	})
	f.setCPU(t, 100e9, 10e9, 100)

	ts := t0.UnixNano()
	f.runtime.Sandboxes = []*runtimeapi.PodSandbox{
		sandbox("sb-web", "ns", "web", 1000e9, true), sandbox("sb-web-old", "ns", "web", 500e9, false), sandbox("sb-db", "ns", "db", 1200e9, true),
	}
	for _, s := range f.runtime.Sandboxes {
		s.Metadata.Uid = "uid-" + strings.TrimPrefix(s.Id, "sb-")
	}
	f.runtime.Containers = []*runtimeapi.Container{
		ctr("c-app-0", "sb-web", "app", 0, 1050e9, false), ctr("c-app", "sb-web", "app", 1, 1100e9, true),
		ctr("c-side", "sb-web", "sidecar", 0, 1060e9, true), ctr("c-db", "sb-db", "db", 0, 1210e9, true),
	}
	cs := func(id, name string) *runtimeapi.ContainerStats {
		return &runtimeapi.ContainerStats{Attributes: &runtimeapi.ContainerAttributes{Id: id, Metadata: &runtimeapi.ContainerMetadata{Name: name}}}
	}
	app := cs("c-app", "app")
	app.Cpu = &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: uv(20e9), UsageNanoCores: uv(2e8)}
	app.Memory = &runtimeapi.MemoryUsage{Timestamp: ts, WorkingSetBytes: uv(300e6), UsageBytes: uv(400e6), RssBytes: uv(250e6), PageFaults: uv(10), MajorPageFaults: uv(0)}
	app.WritableLayer = &runtimeapi.FilesystemUsage{Timestamp: ts, FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: imageMount}, UsedBytes: uv(4096), InodesUsed: uv(5)}
	app0 := cs("c-app-0", "app")
	app0.Cpu = &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: uv(999e9)}
	side := cs("c-side", "sidecar")
	side.Cpu = &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: uv(7e9)}
	side.Memory = &runtimeapi.MemoryUsage{Timestamp: ts, WorkingSetBytes: uv(50e6)}
	db := cs("c-db", "db")
	db.Cpu = &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: uv(30e9), UsageNanoCores: uv(1e8)}
	db.Memory = &runtimeapi.MemoryUsage{Timestamp: ts, WorkingSetBytes: uv(500e6), UsageBytes: uv(600e6)}
	f.runtime.ContainerStats = []*runtimeapi.ContainerStats{app, app0, side, db}
	attrs := func(id string) *runtimeapi.PodSandboxAttributes { return &runtimeapi.PodSandboxAttributes{Id: id} }
	f.runtime.SandboxStats = []*runtimeapi.PodSandboxStats{
		{Attributes: attrs("sb-web"), Linux: &runtimeapi.LinuxPodSandboxStats{
			Cpu:    &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: uv(28e9), UsageNanoCores: uv(25e7)},
			Memory: &runtimeapi.MemoryUsage{Timestamp: ts, WorkingSetBytes: uv(360e6), UsageBytes: uv(460e6)},
			Network: &runtimeapi.NetworkUsage{Timestamp: ts,
				DefaultInterface: &runtimeapi.NetworkInterfaceUsage{Name: "eth0", RxBytes: uv(11), TxBytes: uv(22)},
				Interfaces:       []*runtimeapi.NetworkInterfaceUsage{{Name: "eth0", RxBytes: uv(11), TxBytes: uv(22)}}},
			Process:    &runtimeapi.ProcessUsage{Timestamp: ts, ProcessCount: uv(3)},
			Containers: []*runtimeapi.ContainerStats{app, app0, side},
		}},
		{Attributes: attrs("sb-web-old"), Linux: &runtimeapi.LinuxPodSandboxStats{Containers: []*runtimeapi.ContainerStats{app0}}},
		{Attributes: attrs("sb-db"), Linux: &runtimeapi.LinuxPodSandboxStats{Containers: []*runtimeapi.ContainerStats{db}}},
	}
	f.runtime.ImageFs = &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{
		{Timestamp: ts, FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: imageMount}, UsedBytes: uv(1e9), InodesUsed: uv(1000)},
	}}
	return f
}

// setCPU writes the root and kubepods cpuacct.usage and this process's CPU ticks.
func (f *fixture) setCPU(t *testing.T, root, pods uint64, ticks int) {
	t.Helper()
	writeTree(t, f.root, map[string]string{
		"sys/fs/cgroup/cpuacct/cpuacct.usage":          fmt.Sprintf("%d\n", root),
		"sys/fs/cgroup/cpuacct/kubepods/cpuacct.usage": fmt.Sprintf("%d\n", pods),
		"proc/self/stat": fmt.Sprintf("42 (nodelet) S 1 42 42 0 -1 0 500 0 2 0 %d 0 0 0 20 0 9 0 1 0 0\n", ticks),
	})
}

func (f *fixture) provider(t *testing.T) *Provider {
	t.Helper()
	p, err := New(Config{NodeName: "node-1", RootDir: rootDir, Root: f.root},
		Deps{Runtime: f.runtime, Images: f.runtime, Clock: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (f *fixture) path(p string) string { return filepath.Join(f.root, p) }
