package eviction

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func diskUsage(f *statsapi.FsStats) resource.Quantity {
	if f == nil || f.UsedBytes == nil {
		return resource.Quantity{Format: resource.BinarySI}
	}
	return *resource.NewQuantity(int64(*f.UsedBytes), resource.BinarySI)
}

func inodeUsage(f *statsapi.FsStats) resource.Quantity {
	if f == nil || f.InodesUsed == nil {
		return resource.Quantity{Format: resource.DecimalSI}
	}
	return *resource.NewQuantity(int64(*f.InodesUsed), resource.DecimalSI)
}

// isLocalVolume is upstream's localVolumeNames test: hostPath volumes and local ephemeral ones
// (gitRepo, emptyDir on disk, configMap).
func isLocalVolume(v v1.Volume) bool {
	return v.HostPath != nil || v.GitRepo != nil || v.ConfigMap != nil ||
		(v.EmptyDir != nil && v.EmptyDir.Medium == v1.StorageMediumDefault)
}

// podDiskUsage is upstream's: the measured parts of the pod's storage, in bytes
// (ephemeral-storage) and inodes.
func podDiskUsage(s statsapi.PodStats, pod *v1.Pod, measure fsStats) v1.ResourceList {
	disk := resource.Quantity{Format: resource.BinarySI}
	inodes := resource.Quantity{Format: resource.DecimalSI}
	add := func(f *statsapi.FsStats) {
		d, i := diskUsage(f), inodeUsage(f)
		disk.Add(d)
		inodes.Add(i)
	}
	for i := range s.Containers {
		c := &s.Containers[i]
		if measure&fsRoot != 0 {
			add(c.Rootfs)
		}
		if measure&fsLogs != 0 {
			add(c.Logs)
		}
	}
	if measure&fsLocalVolume != 0 {
		for _, v := range pod.Spec.Volumes {
			if !isLocalVolume(v) {
				continue
			}
			for j := range s.VolumeStats {
				if s.VolumeStats[j].Name == v.Name {
					add(&s.VolumeStats[j].FsStats)
					break
				}
			}
		}
	}
	return v1.ResourceList{v1.ResourceEphemeralStorage: disk, resourceInodes: inodes}
}
