package eviction

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

func TestObserve(t *testing.T) {
	at := metav1.NewTime(t0)
	s := &statsapi.Summary{Node: statsapi.NodeStats{
		Memory: &statsapi.MemoryStats{Time: at, AvailableBytes: u64("1Gi"), WorkingSetBytes: u64("3Gi")},
		SystemContainers: []statsapi.ContainerStats{{Name: "kubelet"},
			{Name: statsapi.SystemContainerPods, Memory: &statsapi.MemoryStats{Time: at, AvailableBytes: u64("2Gi"), WorkingSetBytes: u64("1Gi")}}},
		Fs: &statsapi.FsStats{Time: at, AvailableBytes: u64("10Gi"), CapacityBytes: u64("100Gi"), InodesFree: ptr.To[uint64](500), Inodes: ptr.To[uint64](1000)},
		Runtime: &statsapi.RuntimeStats{ImageFs: &statsapi.FsStats{Time: at, AvailableBytes: u64("5Gi"), CapacityBytes: u64("50Gi")},
			ContainerFs: &statsapi.FsStats{Time: at, InodesFree: ptr.To[uint64](7), Inodes: ptr.To[uint64](9)}},
		Rlimit: &statsapi.RlimitStats{Time: at, MaxPID: ptr.To[int64](4194304), NumOfRunningProcesses: ptr.To[int64](300)},
	}}
	got := Observe(s)
	want := map[Signal][2]string{
		SignalMemoryAvailable:            {"1Gi", "4Gi"},
		SignalAllocatableMemoryAvailable: {"2Gi", "3Gi"},
		SignalNodeFsAvailable:            {"10Gi", "100Gi"},
		SignalNodeFsInodesFree:           {"500", "1k"},
		SignalImageFsAvailable:           {"5Gi", "50Gi"},
		SignalContainerFsInodesFree:      {"7", "9"},
		SignalPIDAvailable:               {"4194004", "4194304"},
	}
	if len(got) != len(want) {
		t.Errorf("observed %d signals, want %d: %v", len(got), len(want), got)
	}
	for sig, w := range want {
		o, ok := got[sig]
		if !ok {
			t.Errorf("%s not observed", sig)
			continue
		}
		if o.Available.Cmp(q(w[0])) != 0 || o.Capacity.Cmp(q(w[1])) != 0 || !o.Time.Equal(t0) {
			t.Errorf("%s = %s of %s at %v, want %s of %s", sig, o.Available.String(), o.Capacity.String(), o.Time, w[0], w[1])
		}
	}
	if _, ok := got[SignalImageFsInodesFree]; ok {
		t.Error("imagefs.inodesFree observed without inode stats")
	}
	if len(Observe(&statsapi.Summary{})) != 0 {
		t.Error("an empty summary has no observations")
	}
}

func TestMessage(t *testing.T) {
	p := pod("hog", 0, mem("100Mi"), nil)
	p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0])
	p.Spec.Containers[1].Name = "quiet"
	ps := podStats(p, "300Mi", "", "")
	ps.Containers = append(ps.Containers, ps.Containers[0])
	ps.Containers[1].Name, ps.Containers[1].Memory = "quiet", &statsapi.MemoryStats{WorkingSetBytes: u64("10Mi")}
	act := mustParse(Settings{Hard: map[string]string{"memory.available": "500Mi"}})
	msg, ann := Message("memory", p, statsOf(ps), act, obsOf(SignalMemoryAvailable, "400Mi", "4Gi", t0))
	want := "The node was low on resource: memory. Threshold quantity: 500Mi, available: 400Mi. Container c was using 300Mi, request is 100Mi, has larger consumption of memory. "
	if msg != want {
		t.Errorf("message\n %q\nwant\n %q", msg, want)
	}
	if ann[OffendingContainersKey] != "c" || ann[OffendingContainersUsageKey] != "300Mi" || ann[StarvedResourceKey] != "memory" {
		t.Errorf("annotations %v", ann)
	}
	// Without stats: the node part only.
	if msg, _ := Message("memory", p, statsOf(), act, obsOf(SignalMemoryAvailable, "400Mi", "4Gi", t0)); msg != "The node was low on resource: memory. Threshold quantity: 500Mi, available: 400Mi. " {
		t.Errorf("message without stats %q", msg)
	}
}
