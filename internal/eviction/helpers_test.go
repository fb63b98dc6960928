package eviction

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)

func mustParse(s Settings) []Threshold {
	out, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return out
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

// obsOf observes one signal: available of capacity at time at.
func obsOf(s Signal, available, capacity string, at time.Time) Observations {
	return Observations{s: {Available: q(available), Capacity: q(capacity), Time: at}}
}

// pod is an API pod (source "api") with one container of the given requests and limits.
func pod(name string, prio int32, requests, limits v1.ResourceList) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name),
		Annotations: map[string]string{"kubernetes.io/config.source": "api"}},
		Spec: v1.PodSpec{Priority: ptr.To(prio), Containers: []v1.Container{{Name: "c",
			Resources: v1.ResourceRequirements{Requests: requests, Limits: limits}}}}}
	return p
}

func mem(s string) v1.ResourceList { return v1.ResourceList{v1.ResourceMemory: q(s)} }

func storage(s string) v1.ResourceList { return v1.ResourceList{v1.ResourceEphemeralStorage: q(s)} }

func u64(s string) *uint64 {
	v := q(s)
	return ptr.To(uint64(v.Value()))
}

// podStats is a pod's stats: its working set, and per container rootfs and logs usage.
func podStats(p *v1.Pod, workingSet string, rootfs, logs string) statsapi.PodStats {
	s := statsapi.PodStats{PodRef: statsapi.PodReference{Name: p.Name, Namespace: p.Namespace, UID: string(p.UID)}}
	if workingSet != "" {
		s.Memory = &statsapi.MemoryStats{WorkingSetBytes: u64(workingSet)}
	}
	c := statsapi.ContainerStats{Name: "c"}
	if workingSet != "" {
		c.Memory = &statsapi.MemoryStats{WorkingSetBytes: u64(workingSet)}
	}
	if rootfs != "" {
		c.Rootfs = &statsapi.FsStats{UsedBytes: u64(rootfs), InodesUsed: ptr.To[uint64](10)}
	}
	if logs != "" {
		c.Logs = &statsapi.FsStats{UsedBytes: u64(logs), InodesUsed: ptr.To[uint64](1)}
	}
	s.Containers = []statsapi.ContainerStats{c}
	return s
}

func statsOf(ps ...statsapi.PodStats) PodStats {
	return PodStatsOf(&statsapi.Summary{Pods: ps})
}

func names(pods []*v1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}
