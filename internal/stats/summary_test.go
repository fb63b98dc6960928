package stats

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/nodelet/nodelet/internal/stats/host"
)

func deref(p *uint64) any {
	if p == nil {
		return nil
	}
	return *p
}

func names[T any](items []T, name func(T) string) []string {
	var out []string
	for _, i := range items {
		out = append(out, name(i))
	}
	return out
}

func TestSummaryNode(t *testing.T) {
	f := newFixture(t)
	p := f.provider(t) // first CPU sample at t0
	f.clock.Step(10 * time.Second)
	f.setCPU(t, 105e9, 11e9, 200) // +5 core-s, +1 core-s, +1 s of ticks in 10 s

	s, err := p.Summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := s.Node
	if n.NodeName != "node-1" || !n.StartTime.Time.Equal(time.Unix(btime, 0)) {
		t.Errorf("nodeName %q startTime %v", n.NodeName, n.StartTime)
	}
	if deref(n.CPU.UsageNanoCores) != uint64(5e8) || deref(n.CPU.UsageCoreNanoSeconds) != uint64(105e9) || !n.CPU.Time.Time.Equal(f.clock.Now()) {
		t.Errorf("cpu: %s", dump(n.CPU))
	}
	if n.CPU.PSI == nil || n.CPU.PSI.Some.Avg10 != 1 || n.CPU.PSI.Some.Total != 400 {
		t.Errorf("cpu psi: %s", dump(n.CPU.PSI))
	}
	m := n.Memory
	if deref(m.UsageBytes) != uint64(3e9) || deref(m.WorkingSetBytes) != uint64(2e9) || deref(m.RSSBytes) != uint64(15e8) ||
		deref(m.AvailableBytes) != uint64(8000000*1024-2e9) || deref(m.PageFaults) != uint64(100) || deref(m.MajorPageFaults) != uint64(1) {
		t.Errorf("memory: %s", dump(m))
	}
	if n.Swap == nil || deref(n.Swap.SwapUsageBytes) != uint64(0) {
		t.Errorf("swap: %s", dump(n.Swap))
	}
	if n.Network == nil || n.Network.Name != "eth0" || deref(n.Network.RxBytes) != uint64(1000) || deref(n.Network.TxErrors) != uint64(2) ||
		len(n.Network.Interfaces) != 1 {
		t.Errorf("network: %s", dump(n.Network))
	}
	if n.Fs == nil || deref(n.Fs.CapacityBytes) == nil || n.Fs.UsedBytes == nil || n.Fs.InodesUsed == nil {
		t.Errorf("fs: %s", dump(n.Fs))
	}
	img := n.Runtime.ImageFs
	if deref(img.UsedBytes) != uint64(1e9) || deref(img.InodesUsed) != uint64(1000) || img.CapacityBytes == nil || n.Runtime.ContainerFs != img {
		t.Errorf("runtime: %s", dump(n.Runtime))
	}
	if n.Rlimit == nil || *n.Rlimit.MaxPID != 32768 || *n.Rlimit.NumOfRunningProcesses != 321 {
		t.Errorf("rlimit: %s", dump(n.Rlimit))
	}
	if got := names(n.SystemContainers, func(c statsapi.ContainerStats) string { return c.Name }); !slices.Equal(got, []string{"kubelet", "pods"}) {
		t.Fatalf("system containers: %v", got)
	}
	kubelet, pods := n.SystemContainers[0], n.SystemContainers[1]
	if !kubelet.StartTime.Time.Equal(t0) || deref(kubelet.CPU.UsageNanoCores) != uint64(1e8) || deref(kubelet.Memory.WorkingSetBytes) != uint64(20480*1024) {
		t.Errorf("kubelet: %s", dump(kubelet))
	}
	if deref(pods.CPU.UsageNanoCores) != uint64(1e8) || deref(pods.Memory.WorkingSetBytes) != uint64(8e8) || deref(pods.Memory.AvailableBytes) != uint64(62e8) ||
		pods.StartTime.IsZero() || pods.Logs != nil || pods.Rootfs != nil {
		t.Errorf("pods: %s", dump(pods))
	}
}

func TestSummaryPods(t *testing.T) {
	f := newFixture(t)
	p := f.provider(t)
	s, err := p.Summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := names(s.Pods, func(p statsapi.PodStats) string { return p.PodRef.Namespace + "/" + p.PodRef.Name }); !slices.Equal(got, []string{"ns/db", "ns/web"}) {
		t.Fatalf("pods: %v", got)
	}
	db, web := s.Pods[0], s.Pods[1]

	if web.PodRef.UID != "uid-web" || !web.StartTime.Time.Equal(time.Unix(1000, 0)) {
		t.Errorf("web ref %+v start %v", web.PodRef, web.StartTime)
	}
	if got := names(web.Containers, func(c statsapi.ContainerStats) string { return c.Name }); !slices.Equal(got, []string{"app", "sidecar"}) {
		t.Fatalf("web containers: %v (the exited attempt must be gone)", got)
	}
	app, side := web.Containers[0], web.Containers[1]
	if !app.StartTime.Time.Equal(time.Unix(1100, 0)) || deref(app.CPU.UsageCoreNanoSeconds) != uint64(20e9) || deref(app.CPU.UsageNanoCores) != uint64(2e8) ||
		deref(app.Memory.WorkingSetBytes) != uint64(300e6) {
		t.Errorf("app: %s", dump(app))
	}
	if deref(app.Rootfs.UsedBytes) != uint64(4096) || deref(app.Rootfs.InodesUsed) != uint64(5) || app.Rootfs.CapacityBytes == nil {
		t.Errorf("app rootfs: %s", dump(app.Rootfs))
	}
	if app.Logs == nil || deref(app.Logs.InodesUsed) != uint64(1) || *app.Logs.UsedBytes < 9000 || app.Logs.CapacityBytes == nil {
		t.Errorf("app logs: %s", dump(app.Logs))
	}
	if side.CPU.UsageNanoCores != nil || side.Logs != nil {
		t.Errorf("sidecar: no rate before a second reading, no logs dir: %s", dump(side))
	}
	if deref(web.CPU.UsageNanoCores) != uint64(25e7) || deref(web.Memory.WorkingSetBytes) != uint64(360e6) {
		t.Errorf("web cpu/memory come from the sandbox stats: %s %s", dump(web.CPU), dump(web.Memory))
	}
	if web.Network == nil || web.Network.Name != "eth0" || deref(web.Network.RxBytes) != uint64(11) || deref(web.ProcessStats.ProcessCount) != uint64(3) {
		t.Errorf("web network/process: %s %s", dump(web.Network), dump(web.ProcessStats))
	}
	if len(web.VolumeStats) != 1 || web.VolumeStats[0].Name != "scratch" || *web.VolumeStats[0].UsedBytes < 20000 {
		t.Fatalf("web volumes: %s", dump(web.VolumeStats))
	}
	etcHosts, err := host.NewReader(f.root).TreeUsage(rootDir + "/pods/uid-web/etc-hosts")
	if err != nil {
		t.Fatal(err)
	}
	want := *app.Rootfs.UsedBytes + *app.Logs.UsedBytes + *web.VolumeStats[0].UsedBytes + etcHosts.Bytes
	wantInodes := uint64(5+1) + *web.VolumeStats[0].InodesUsed + 1
	if es := web.EphemeralStorage; es == nil || *es.UsedBytes != want || *es.InodesUsed != wantInodes || es.CapacityBytes == nil {
		t.Errorf("web ephemeral-storage: %s, want used %d inodes %d", dump(web.EphemeralStorage), want, wantInodes)
	}

	// No pod-level CPU and memory from the runtime: the containers' sums.
	if deref(db.CPU.UsageCoreNanoSeconds) != uint64(30e9) || deref(db.CPU.UsageNanoCores) != uint64(1e8) || deref(db.Memory.WorkingSetBytes) != uint64(500e6) {
		t.Errorf("db: %s %s", dump(db.CPU), dump(db.Memory))
	}

	// Ten seconds on, the sidecar's rate is computed from its two readings.
	f.clock.Step(10 * time.Second)
	side0 := f.runtime.ContainerStats[2]
	side0.Cpu = &runtimeapi.CpuUsage{Timestamp: f.clock.Now().UnixNano(), UsageCoreNanoSeconds: uv(10e9)}
	s, err = p.Summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Pods[1].Containers[1].CPU.UsageNanoCores; deref(got) != uint64(3e8) {
		t.Errorf("sidecar rate = %v, want 3e8", deref(got))
	}
}

func TestSummaryJSONShape(t *testing.T) {
	f := newFixture(t)
	s, err := f.provider(t).Summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"node":{"nodeName":"node-1","systemContainers":[{"name":"kubelet"`, `"usageNanoCores":`,
		`"workingSetBytes":`, `"runtime":{"imageFs":`, `"rlimit":{"time":`, `"maxpid":32768`, `"curproc":321`,
		`"pods":[{"podRef":{"name":"db","namespace":"ns","uid":"uid-db"}`, `"ephemeral-storage":`, `"volume":[{"time":`,
		`"process_stats":{"process_count":3}`, `"logs":{"time":`, `"rootfs":{"time":`, `"interfaces":[{"name":"eth0"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("summary JSON lacks %s:\n%s", key, b)
		}
	}
}

func TestSummaryWithoutSandboxStats(t *testing.T) {
	f := newFixture(t)
	f.runtime.Errors = map[string][]error{"ListPodSandboxStats": {status.Error(codes.Unimplemented, "not here")}}
	p := f.provider(t)
	for range 2 {
		s, err := p.Summary(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Pods) != 2 {
			t.Fatalf("pods: %s", dump(s.Pods))
		}
		web := s.Pods[1]
		// app 20e9 + sidecar 7e9; app's rate 2e8 + none.
		if deref(web.CPU.UsageCoreNanoSeconds) != uint64(27e9) || deref(web.CPU.UsageNanoCores) != uint64(2e8) ||
			deref(web.Memory.WorkingSetBytes) != uint64(350e6) || web.Network != nil || web.EphemeralStorage == nil {
			t.Errorf("web from container stats: %s", dump(web))
		}
	}
	calls := strings.Join(f.runtime.Calls(), " ")
	if strings.Count(calls, "ListPodSandboxStats") != 1 || strings.Count(calls, "ListContainerStats") != 2 {
		t.Errorf("Unimplemented is remembered: calls %s", calls)
	}

	// Another error falls back for that summary only.
	f = newFixture(t)
	f.runtime.Errors = map[string][]error{"ListPodSandboxStats": {errors.New("transient")}}
	p = f.provider(t)
	for range 2 {
		if _, err := p.Summary(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	calls = strings.Join(f.runtime.Calls(), " ")
	if strings.Count(calls, "ListPodSandboxStats") != 2 || strings.Count(calls, "ListContainerStats") != 1 {
		t.Errorf("a transient error is not remembered: calls %s", calls)
	}
}

func TestVolumeStatsAreReused(t *testing.T) {
	f := newFixture(t)
	p := f.provider(t)
	used := func() uint64 {
		t.Helper()
		s, err := p.Summary(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return *s.Pods[1].VolumeStats[0].UsedBytes
	}
	before := used()
	writeTree(t, f.root, map[string]string{rootDir + "/pods/uid-web/volumes/kubernetes.io~empty-dir/scratch/more": strings.Repeat("y", 100000)})
	f.clock.Step(30 * time.Second)
	if got := used(); got != before {
		t.Errorf("within the aggregation period: used %d, want the cached %d", got, before)
	}
	f.clock.Step(31 * time.Second)
	if got := used(); got < before+100000 {
		t.Errorf("after the aggregation period: used %d, want at least %d", got, before+100000)
	}
}

func TestCPUAndMemorySummary(t *testing.T) {
	f := newFixture(t)
	s, err := f.provider(t).CPUAndMemorySummary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := s.Node
	if n.CPU == nil || n.Memory == nil || n.Fs != nil || n.Network != nil || n.Runtime != nil || n.Rlimit != nil {
		t.Errorf("node: %s", dump(n))
	}
	for _, c := range n.SystemContainers {
		if c.IO != nil {
			t.Errorf("system container %s has IO", c.Name)
		}
	}
	side := s.Pods[1].Containers[1]
	if deref(side.Memory.UsageBytes) != uint64(0) || deref(side.Swap.SwapUsageBytes) != uint64(0) || side.Rootfs != nil || side.Logs != nil {
		t.Errorf("sidecar: missing values are 0 and there is no storage: %s", dump(side))
	}
	if web := s.Pods[1]; web.EphemeralStorage != nil || web.VolumeStats != nil || web.Network != nil || deref(web.CPU.UsageCoreNanoSeconds) != uint64(28e9) {
		t.Errorf("web: %s", dump(web))
	}
}

func TestSummaryErrors(t *testing.T) {
	f := newFixture(t)
	f.runtime.ImageFs = &runtimeapi.ImageFsInfoResponse{}
	if _, err := f.provider(t).Summary(context.Background()); err == nil || !strings.Contains(err.Error(), "no image filesystem") {
		t.Errorf("no image filesystem: err = %v", err)
	}
	f = newFixture(t)
	f.runtime.Errors = map[string][]error{"ListContainers": {errors.New("boom")}}
	if _, err := f.provider(t).Summary(context.Background()); err == nil || !strings.Contains(err.Error(), "list containers: boom") {
		t.Errorf("runtime error: err = %v", err)
	}
	f = newFixture(t)
	if err := os.RemoveAll(f.path("sys/fs/cgroup/cpuacct")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.provider(t).CPUAndMemorySummary(context.Background()); err == nil || !strings.Contains(err.Error(), "root cgroup") {
		t.Errorf("no cgroups: err = %v", err)
	}
	if _, err := New(Config{NodeName: "n"}, Deps{Runtime: f.runtime, Images: f.runtime}); err == nil {
		t.Error("New without RootDir: want an error")
	}
	if _, err := New(Config{NodeName: "n", RootDir: "/r"}, Deps{}); err == nil {
		t.Error("New without a runtime: want an error")
	}
}

// TestConcurrentSummaries runs both summaries from several goroutines (for the race detector).
func TestConcurrentSummaries(t *testing.T) {
	f := newFixture(t)
	p := f.provider(t)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			var err error
			if i%2 == 0 {
				_, err = p.Summary(context.Background())
			} else {
				_, err = p.CPUAndMemorySummary(context.Background())
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
