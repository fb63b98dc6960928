package eviction

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

func TestRankMemoryPressure(t *testing.T) {
	bestEffort := pod("besteffort", 0, nil, nil)
	burstableOver := pod("burstable-over", 0, mem("100Mi"), nil)
	guaranteed := pod("guaranteed", 0, mem("1Gi"), mem("1Gi"))
	highPrioOver := pod("high-prio-over", 1000, mem("10Mi"), nil)
	lowPrioWithin := pod("low-prio-within", -10, mem("1Gi"), nil)
	noStats := pod("no-stats", 1000, mem("1Gi"), mem("1Gi"))
	stats := statsOf(podStats(bestEffort, "200Mi", "", ""), podStats(burstableOver, "500Mi", "", ""),
		podStats(guaranteed, "900Mi", "", ""), podStats(highPrioOver, "50Mi", "", ""), podStats(lowPrioWithin, "100Mi", "", ""))
	tests := []struct {
		name string
		pods []*v1.Pod
		want string
	}{
		{"exceeding requests first, then by usage above requests", []*v1.Pod{guaranteed, bestEffort, burstableOver}, "[burstable-over besteffort guaranteed]"},
		{"within the exceeding pods, lower priority first", []*v1.Pod{highPrioOver, bestEffort}, "[besteffort high-prio-over]"},
		{"pods within requests: lower priority first", []*v1.Pod{guaranteed, lowPrioWithin}, "[low-prio-within guaranteed]"},
		{"a pod without stats first", []*v1.Pod{bestEffort, noStats}, "[no-stats besteffort]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods := append([]*v1.Pod(nil), tt.pods...)
			RankMemoryPressure(pods, stats)
			if got := fmt.Sprint(names(pods)); got != tt.want {
				t.Errorf("rank = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestRankDiskPressure(t *testing.T) {
	small := pod("small", 0, nil, nil)
	big := pod("big", 0, nil, nil)
	requested := pod("requested", 0, storage("1Gi"), nil)
	volume := pod("volume", 0, nil, nil)
	volume.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{Name: "tmpfs", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}}}
	vs := podStats(volume, "", "1Mi", "1Mi")
	vs.VolumeStats = []statsapi.VolumeStats{{Name: "data", FsStats: statsapi.FsStats{UsedBytes: u64("300Mi"), InodesUsed: ptr.To[uint64](5000)}},
		{Name: "tmpfs", FsStats: statsapi.FsStats{UsedBytes: u64("3Gi")}}}
	stats := statsOf(podStats(small, "", "10Mi", "1Mi"), podStats(big, "", "200Mi", "1Mi"), podStats(requested, "", "500Mi", "1Mi"), vs)
	pods := []*v1.Pod{small, requested, volume, big}
	tests := []struct {
		signal    Signal
		dedicated bool
		want      string
	}{
		{SignalNodeFsAvailable, false, "[volume big small requested]"},
		{SignalNodeFsAvailable, true, "[volume small big requested]"},   // logs and volumes only: requested's 1Mi of logs is within its request
		{SignalImageFsAvailable, true, "[big small volume requested]"},  // writable layers only
		{SignalNodeFsInodesFree, false, "[volume small big requested]"}, // no pod requests inodes: all exceed
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s dedicated=%v", tt.signal, tt.dedicated), func(t *testing.T) {
			rank, ok := RankerFor(tt.signal, tt.dedicated)
			if !ok {
				t.Fatal("no ranker")
			}
			got := append([]*v1.Pod(nil), pods...)
			rank(got, stats)
			if s := fmt.Sprint(names(got)); s != tt.want {
				t.Errorf("rank = %s, want %s", s, tt.want)
			}
		})
	}
}

func TestRankPIDPressure(t *testing.T) {
	a, b, c := pod("a", 0, nil, nil), pod("b", 0, nil, nil), pod("c", -5, nil, nil)
	sa, sb, sc := podStats(a, "", "", ""), podStats(b, "", "", ""), podStats(c, "", "", "")
	sa.ProcessStats = &statsapi.ProcessStats{ProcessCount: ptr.To[uint64](10)}
	sb.ProcessStats = &statsapi.ProcessStats{ProcessCount: ptr.To[uint64](500)}
	sc.ProcessStats = &statsapi.ProcessStats{ProcessCount: ptr.To[uint64](1)}
	pods := []*v1.Pod{a, b, c}
	RankPIDPressure(pods, statsOf(sa, sb, sc))
	if got := fmt.Sprint(names(pods)); got != "[c b a]" {
		t.Errorf("rank = %s, want lower priority, then more processes: [c b a]", got)
	}
}
