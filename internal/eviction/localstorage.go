package eviction

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The signals of local storage evictions in kubelet_evictions, as upstream's.
const (
	SignalEmptyDirFsLimit           = "emptydirfs.limit"
	SignalEphemeralPodFsLimit       = "ephemeralpodfs.limit"
	SignalEphemeralContainerFsLimit = "ephemeralcontainerfs.limit"
)

// LocalStorageViolation is upstream's localStorageEviction for one pod (pure): the signal and the
// eviction message when an emptyDir uses more than its sizeLimit (memory-backed ones excepted, as their
// size is the tmpfs's), when the pod's ephemeral storage exceeds the sum of its limits, or when a
// container's logs (and writable layer, without a dedicated image filesystem) exceed its
// ephemeral-storage limit; in that order.
func LocalStorageViolation(pod *v1.Pod, s statsapi.PodStats, dedicatedImageFs bool) (signal, message string, over bool) {
	used := map[string]resource.Quantity{}
	for _, v := range s.VolumeStats {
		if v.UsedBytes != nil {
			used[v.Name] = *resource.NewQuantity(int64(*v.UsedBytes), resource.BinarySI)
		}
	}
	for _, v := range pod.Spec.Volumes {
		ed := v.EmptyDir
		if ed == nil || ed.Medium == v1.StorageMediumMemory || ed.SizeLimit == nil || ed.SizeLimit.Sign() != 1 {
			continue
		}
		if u, ok := used[v.Name]; ok && u.Cmp(*ed.SizeLimit) > 0 {
			return SignalEmptyDirFsLimit, fmt.Sprintf(emptyDirMessageFmt, v.Name, ed.SizeLimit.String()), true
		}
	}

	if limit, ok := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})[v1.ResourceEphemeralStorage]; ok {
		total := diskUsage(s.EphemeralStorage)
		if total.Cmp(limit) > 0 {
			return SignalEphemeralPodFsLimit, fmt.Sprintf(podEphemeralStorageMessageFmt, limit.String()), true
		}
	}

	limits := map[string]resource.Quantity{}
	for _, c := range pod.Spec.Containers {
		if l := c.Resources.Limits.StorageEphemeral(); l != nil && l.Value() != 0 {
			limits[c.Name] = *l
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways {
			continue
		}
		if l := c.Resources.Limits.StorageEphemeral(); l != nil && l.Value() != 0 {
			limits[c.Name] = *l
		}
	}
	for _, cs := range s.Containers {
		limit, ok := limits[cs.Name]
		if !ok {
			continue
		}
		u := diskUsage(cs.Logs)
		if !dedicatedImageFs {
			root := diskUsage(cs.Rootfs)
			u.Add(root)
		}
		if limit.Cmp(u) < 0 {
			return SignalEphemeralContainerFsLimit, fmt.Sprintf(containerEphemeralStorageMessageFmt, cs.Name, limit.String()), true
		}
	}
	return "", "", false
}
