package stats

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/nodelet/nodelet/internal/stats/host"
)

// Pure storage arithmetic, upstream's (helper.go calcEphemeralStorage, addContainerUsage,
// host_stats_provider.go metricsByPathToFsStats).

// addUsage adds two optional counts: nil only when both are.
func addUsage(a, b *uint64) *uint64 {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return u64(*a + *b)
}

func maxTime(a, b metav1.Time) metav1.Time {
	if a.Before(&b) {
		return b
	}
	return a
}

// usageOn is a measured usage (files, a volume) on the filesystem holding it.
func usageOn(t time.Time, fs host.FsInfo, u host.DiskUsage) *statsapi.FsStats {
	out := fsCapacity(t, fs)
	out.UsedBytes = u64(u.Bytes)
	out.InodesUsed = u64(u.Inodes)
	return out
}

// ephemeralStorage is a pod's ephemeral-storage: on the nodefs (rootFs, stamped t), the sum of
// its containers' writable layers and logs, its local ephemeral volumes, its pod-level log
// files and its etc-hosts file, stamped with the latest of their times.
func ephemeralStorage(t time.Time, rootFs host.FsInfo, containers []statsapi.ContainerStats, volumes []statsapi.VolumeStats, podLogs, etcHosts *statsapi.FsStats) *statsapi.FsStats {
	out := fsCapacity(t, rootFs)
	add := func(s *statsapi.FsStats) {
		out.UsedBytes = addUsage(out.UsedBytes, s.UsedBytes)
		out.InodesUsed = addUsage(out.InodesUsed, s.InodesUsed)
		out.Time = maxTime(out.Time, s.Time)
	}
	for _, c := range containers {
		if c.Rootfs == nil { // upstream counts the logs only with a rootfs
			continue
		}
		add(c.Rootfs)
		if c.Logs != nil {
			add(c.Logs)
		}
	}
	for i := range volumes {
		add(&volumes[i].FsStats)
	}
	if podLogs != nil {
		add(podLogs)
	}
	if etcHosts != nil {
		add(etcHosts)
	}
	return out
}
