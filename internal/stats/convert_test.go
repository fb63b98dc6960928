package stats

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/nodelet/nodelet/internal/stats/host"
)

func uv(v uint64) *runtimeapi.UInt64Value { return &runtimeapi.UInt64Value{Value: v} }

func TestContainerStats(t *testing.T) {
	now := time.Unix(2000, 0)
	nowT := metav1.NewTime(now)
	ts := int64(1500e9)
	tsT := unixNano(ts)
	attrs := &runtimeapi.ContainerAttributes{Id: "c1", Metadata: &runtimeapi.ContainerMetadata{Name: "app"}}
	complete := &runtimeapi.ContainerStats{
		Attributes: attrs,
		Cpu:        &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: uv(9e9)},
		Memory: &runtimeapi.MemoryUsage{Timestamp: ts, WorkingSetBytes: uv(100), UsageBytes: uv(150), RssBytes: uv(80),
			PageFaults: uv(7), MajorPageFaults: uv(1),
			Psi: &runtimeapi.PsiStats{Some: &runtimeapi.PsiData{Total: 5, Avg10: 0.5}}},
		Swap:          &runtimeapi.SwapUsage{Timestamp: ts, SwapUsageBytes: uv(4)},
		WritableLayer: &runtimeapi.FilesystemUsage{Timestamp: ts, UsedBytes: uv(4096), InodesUsed: uv(3)},
	}
	bare := &runtimeapi.ContainerStats{Attributes: attrs}
	rate := u64(123)

	tests := []struct {
		name string
		got  statsapi.ContainerStats
		want statsapi.ContainerStats
	}{
		{
			name: "summary form, complete",
			got:  containerStats(complete, 1000e9, rate, now, true),
			want: statsapi.ContainerStats{
				Name: "app", StartTime: unixNano(1000e9),
				CPU: &statsapi.CPUStats{Time: tsT, UsageNanoCores: rate, UsageCoreNanoSeconds: u64(9e9)},
				Memory: &statsapi.MemoryStats{Time: tsT, WorkingSetBytes: u64(100), UsageBytes: u64(150), RSSBytes: u64(80),
					PageFaults: u64(7), MajorPageFaults: u64(1), PSI: &statsapi.PSIStats{Some: statsapi.PSIData{Total: 5, Avg10: 0.5}}},
				Swap:   &statsapi.SwapStats{Time: tsT, SwapUsageBytes: u64(4)},
				IO:     &statsapi.IOStats{Time: nowT},
				Rootfs: &statsapi.FsStats{Time: tsT, UsedBytes: u64(4096), InodesUsed: u64(3)},
			},
		},
		{
			name: "summary form, nothing reported: stamped now, zero usage",
			got:  containerStats(bare, 1000e9, nil, now, true),
			want: statsapi.ContainerStats{
				Name: "app", StartTime: unixNano(1000e9),
				CPU:    &statsapi.CPUStats{Time: nowT, UsageNanoCores: u64(0), UsageCoreNanoSeconds: u64(0)},
				Memory: &statsapi.MemoryStats{Time: nowT, WorkingSetBytes: u64(0), UsageBytes: u64(0), RSSBytes: u64(0)},
				Swap:   &statsapi.SwapStats{Time: nowT, SwapUsageBytes: u64(0), SwapAvailableBytes: u64(0)},
				IO:     &statsapi.IOStats{Time: nowT},
				Rootfs: &statsapi.FsStats{},
			},
		},
		{
			name: "resource form: missing values are 0, no IO or rootfs",
			got:  containerStats(complete, 1000e9, nil, now, false),
			want: statsapi.ContainerStats{
				Name: "app", StartTime: unixNano(1000e9),
				CPU: &statsapi.CPUStats{Time: tsT, UsageCoreNanoSeconds: u64(9e9)},
				Memory: &statsapi.MemoryStats{Time: tsT, AvailableBytes: u64(0), WorkingSetBytes: u64(100), UsageBytes: u64(150), RSSBytes: u64(80),
					PageFaults: u64(7), MajorPageFaults: u64(1), PSI: &statsapi.PSIStats{Some: statsapi.PSIData{Total: 5, Avg10: 0.5}}},
				Swap: &statsapi.SwapStats{Time: tsT, SwapUsageBytes: u64(4), SwapAvailableBytes: u64(0)},
			},
		},
		{
			name: "resource form, nothing reported",
			got:  containerStats(bare, 1000e9, nil, now, false),
			want: statsapi.ContainerStats{
				Name: "app", StartTime: unixNano(1000e9),
				CPU: &statsapi.CPUStats{Time: nowT, UsageNanoCores: u64(0), UsageCoreNanoSeconds: u64(0)},
				Memory: &statsapi.MemoryStats{Time: nowT, AvailableBytes: u64(0), WorkingSetBytes: u64(0), UsageBytes: u64(0), RSSBytes: u64(0),
					PageFaults: u64(0), MajorPageFaults: u64(0)},
				Swap: &statsapi.SwapStats{Time: nowT, SwapUsageBytes: u64(0), SwapAvailableBytes: u64(0)},
			},
		},
	}
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, dump(tt.got), dump(tt.want))
		}
	}
}

func TestSumContainers(t *testing.T) {
	t1, t2 := metav1.NewTime(time.Unix(1, 0)), metav1.NewTime(time.Unix(2, 0))
	cs := []statsapi.ContainerStats{
		{Name: "a", CPU: &statsapi.CPUStats{Time: t1, UsageCoreNanoSeconds: u64(10), UsageNanoCores: u64(3)},
			Memory: &statsapi.MemoryStats{Time: t1, WorkingSetBytes: u64(100), UsageBytes: u64(200)},
			Swap:   &statsapi.SwapStats{Time: t1, SwapUsageBytes: u64(1)}},
		{Name: "b", CPU: &statsapi.CPUStats{Time: t2, UsageCoreNanoSeconds: u64(5)},
			Memory: &statsapi.MemoryStats{Time: t2, WorkingSetBytes: u64(50), RSSBytes: u64(7)}},
		{Name: "c"},
	}
	if got, want := sumContainerCPU(cs), (&statsapi.CPUStats{Time: t2, UsageCoreNanoSeconds: u64(15), UsageNanoCores: u64(3)}); !reflect.DeepEqual(got, want) {
		t.Errorf("cpu: got %s, want %s", dump(got), dump(want))
	}
	wantMem := &statsapi.MemoryStats{Time: t2, AvailableBytes: u64(0), WorkingSetBytes: u64(150), UsageBytes: u64(200), RSSBytes: u64(7),
		PageFaults: u64(0), MajorPageFaults: u64(0)}
	if got := sumContainerMemory(cs); !reflect.DeepEqual(got, wantMem) {
		t.Errorf("memory: got %s, want %s", dump(got), dump(wantMem))
	}
	if got, want := sumContainerSwap(cs), (&statsapi.SwapStats{Time: t1, SwapUsageBytes: u64(1), SwapAvailableBytes: u64(0)}); !reflect.DeepEqual(got, want) {
		t.Errorf("swap: got %s, want %s", dump(got), dump(want))
	}
	if sumContainerCPU(nil) != nil || sumContainerMemory(nil) != nil || sumContainerSwap(nil) != nil {
		t.Error("sums of no containers must be nil")
	}
}

func TestCgroupConversions(t *testing.T) {
	now := time.Unix(3000, 0)
	nowT := metav1.NewTime(now)
	c := host.Cgroup{
		CPU:         host.CPU{UsageNanosecs: 42},
		Memory:      host.Memory{Usage: 1000, WorkingSet: 800, RSS: 500, PageFaults: 9, MajorPageFaults: 2, Limit: u64(700), Swap: u64(10), SwapLimit: u64(100)},
		CPUPressure: &host.PSI{Some: host.PSIData{Avg10: 1.5, Total: 77}},
	}
	if got, want := cgroupCPU(now, c, nil), (&statsapi.CPUStats{Time: nowT, UsageNanoCores: u64(0), UsageCoreNanoSeconds: u64(42),
		PSI: &statsapi.PSIStats{Some: statsapi.PSIData{Avg10: 1.5, Total: 77}}}); !reflect.DeepEqual(got, want) {
		t.Errorf("cpu: got %s, want %s", dump(got), dump(want))
	}
	// The working set above the limit floors availableBytes at 0.
	wantMem := &statsapi.MemoryStats{Time: nowT, AvailableBytes: u64(0), UsageBytes: u64(1000), WorkingSetBytes: u64(800), RSSBytes: u64(500),
		PageFaults: u64(9), MajorPageFaults: u64(2)}
	if got := cgroupMemory(now, c); !reflect.DeepEqual(got, wantMem) {
		t.Errorf("memory: got %s, want %s", dump(got), dump(wantMem))
	}
	c.Memory.Limit = nil
	if got := cgroupMemory(now, c); got.AvailableBytes != nil {
		t.Errorf("no limit: availableBytes = %d, want none", *got.AvailableBytes)
	}
	if got, want := cgroupSwap(now, c), (&statsapi.SwapStats{Time: nowT, SwapUsageBytes: u64(10), SwapAvailableBytes: u64(90)}); !reflect.DeepEqual(got, want) {
		t.Errorf("swap: got %s, want %s", dump(got), dump(want))
	}
	c.Memory.Swap = nil
	if cgroupSwap(now, c) != nil || cgroupIO(now, c) != nil {
		t.Error("no swap accounting / no io pressure must give nil")
	}
}

func TestNodeNetwork(t *testing.T) {
	now := time.Unix(1, 0)
	got := nodeNetwork(now, []host.Interface{{Name: "cni0", RxBytes: 1}, {Name: "eth0", RxBytes: 2, TxErrors: 3}})
	eth0 := statsapi.InterfaceStats{Name: "eth0", RxBytes: u64(2), RxErrors: u64(0), TxBytes: u64(0), TxErrors: u64(3)}
	if !reflect.DeepEqual(got.InterfaceStats, eth0) || len(got.Interfaces) != 2 || got.Interfaces[0].Name != "cni0" {
		t.Errorf("got %s", dump(got))
	}
	if got := nodeNetwork(now, []host.Interface{{Name: "ens5"}}); got.Name != "" || len(got.Interfaces) != 1 {
		t.Errorf("without eth0 the default stays empty, as upstream: %s", dump(got))
	}
}

func TestEphemeralStorage(t *testing.T) {
	now := time.Unix(100, 0)
	later := metav1.NewTime(time.Unix(200, 0))
	rootFs := host.FsInfo{Capacity: 1000, Available: 600, Inodes: 50, InodesFree: 20}
	fs := func(used, inodes uint64, tm metav1.Time) *statsapi.FsStats {
		return &statsapi.FsStats{Time: tm, UsedBytes: u64(used), InodesUsed: u64(inodes)}
	}
	containers := []statsapi.ContainerStats{
		{Name: "a", Rootfs: fs(10, 1, metav1.NewTime(now)), Logs: fs(5, 2, later)},
		{Name: "b", Rootfs: &statsapi.FsStats{}},               // nothing reported
		{Name: "c", Logs: fs(1000, 1000, metav1.NewTime(now))}, // logs without a rootfs are not counted
	}
	volumes := []statsapi.VolumeStats{{Name: "scratch", FsStats: *fs(100, 4, metav1.NewTime(now))}}
	got := ephemeralStorage(now, rootFs, containers, volumes, fs(1, 1, metav1.NewTime(now)), fs(4096, 1, metav1.NewTime(now)))
	want := &statsapi.FsStats{Time: later, AvailableBytes: u64(600), CapacityBytes: u64(1000), InodesFree: u64(20), Inodes: u64(50),
		UsedBytes: u64(10 + 5 + 100 + 1 + 4096), InodesUsed: u64(1 + 2 + 4 + 1 + 1)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %s\nwant %s", dump(got), dump(want))
	}
	if got := ephemeralStorage(now, rootFs, nil, nil, nil, nil); got.UsedBytes != nil {
		t.Errorf("nothing measured: usedBytes = %d, want none", *got.UsedBytes)
	}
}
