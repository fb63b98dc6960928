package eviction

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// fsStats are the parts of a pod's storage a disk signal measures.
type fsStats int

const (
	fsRoot        fsStats = 1 << iota // containers' writable layers
	fsLogs                            // containers' logs
	fsLocalVolume                     // hostPath and local ephemeral volumes
)

// Ranker orders pods for eviction, first evicted first.
type Ranker func(pods []*v1.Pod, stats PodStats)

// RankerFor is the ranking of a signal (upstream's buildSignalToRankFunc, without a split
// container filesystem, which no CRI runtime nodelet supports reports separately).
func RankerFor(s Signal, dedicatedImageFs bool) (Ranker, bool) {
	switch {
	case isMemorySignal(s):
		return RankMemoryPressure, true
	case s == SignalPIDAvailable:
		return RankPIDPressure, true
	}
	r, ok := resourceOf(s)
	if !ok {
		return nil, false
	}
	measure := fsRoot | fsLogs | fsLocalVolume
	if dedicatedImageFs {
		switch s {
		case SignalNodeFsAvailable, SignalNodeFsInodesFree:
			measure = fsLogs | fsLocalVolume
		default:
			measure = fsRoot
		}
	}
	return RankDiskPressure(measure, r), true
}

// cmpFunc compares two pods: negative when p1 is evicted before p2.
type cmpFunc func(p1, p2 *v1.Pod) int

func orderedBy(pods []*v1.Pod, cmps ...cmpFunc) {
	sort.SliceStable(pods, func(i, j int) bool {
		for _, c := range cmps {
			if r := c(pods[i], pods[j]); r != 0 {
				return r < 0
			}
		}
		return false
	})
}

// RankMemoryPressure is upstream's: pods whose usage exceeds their requests first, then lower
// priority, then larger usage above requests.
func RankMemoryPressure(pods []*v1.Pod, stats PodStats) {
	orderedBy(pods, exceedsRequests(stats, memoryOf, v1.ResourceMemory), priority, usageOverRequests(stats, memoryOf, v1.ResourceMemory))
}

// RankPIDPressure is upstream's: lower priority first, then more processes.
func RankPIDPressure(pods []*v1.Pod, stats PodStats) {
	orderedBy(pods, priority, func(p1, p2 *v1.Pod) int {
		s1, ok1 := stats(string(p1.UID))
		s2, ok2 := stats(string(p2.UID))
		if !ok1 || !ok2 {
			return cmpBool(!ok1, !ok2)
		}
		n1, n2 := processes(s1), processes(s2)
		switch {
		case n1 > n2:
			return -1
		case n1 < n2:
			return 1
		}
		return 0
	})
}

// RankDiskPressure is upstream's rankDiskPressureFunc: pods whose measured disk usage exceeds
// their ephemeral-storage request first, then lower priority, then larger usage above requests.
func RankDiskPressure(measure fsStats, r v1.ResourceName) Ranker {
	usage := func(pod *v1.Pod, s statsapi.PodStats) resource.Quantity {
		return podDiskUsage(s, pod, measure)[r]
	}
	return func(pods []*v1.Pod, stats PodStats) {
		// As upstream, inodes are compared with the pod's (absent) inodes request first and
		// with its ephemeral-storage request after.
		orderedBy(pods, exceedsRequests(stats, usage, r), priority, usageOverRequests(stats, usage, v1.ResourceEphemeralStorage))
	}
}

type usageFunc func(pod *v1.Pod, s statsapi.PodStats) resource.Quantity

func memoryOf(_ *v1.Pod, s statsapi.PodStats) resource.Quantity {
	if s.Memory == nil || s.Memory.WorkingSetBytes == nil {
		return resource.Quantity{Format: resource.BinarySI}
	}
	return *resource.NewQuantity(int64(*s.Memory.WorkingSetBytes), resource.BinarySI)
}

func processes(s statsapi.PodStats) uint64 {
	if s.ProcessStats == nil || s.ProcessStats.ProcessCount == nil {
		return 0
	}
	return *s.ProcessStats.ProcessCount
}

// request is the pod's request of r (upstream's GetResourceRequestQuantity).
func request(pod *v1.Pod, r v1.ResourceName) resource.Quantity {
	if q, ok := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})[r]; ok {
		return q
	}
	return resource.Quantity{}
}

func exceedsRequests(stats PodStats, usage usageFunc, requested v1.ResourceName) cmpFunc {
	return func(p1, p2 *v1.Pod) int {
		s1, ok1 := stats(string(p1.UID))
		s2, ok2 := stats(string(p2.UID))
		if !ok1 || !ok2 {
			return cmpBool(!ok1, !ok2) // no stats first
		}
		u1, u2 := usage(p1, s1), usage(p2, s2)
		return cmpBool(u1.Cmp(request(p1, requested)) > 0, u2.Cmp(request(p2, requested)) > 0)
	}
}

func usageOverRequests(stats PodStats, usage usageFunc, requested v1.ResourceName) cmpFunc {
	return func(p1, p2 *v1.Pod) int {
		s1, ok1 := stats(string(p1.UID))
		s2, ok2 := stats(string(p2.UID))
		if !ok1 || !ok2 {
			return cmpBool(!ok1, !ok2)
		}
		u1, u2 := usage(p1, s1), usage(p2, s2)
		r1, r2 := request(p1, requested), request(p2, requested)
		u1.Sub(r1)
		u2.Sub(r2)
		return u2.Cmp(u1) // larger first
	}
}

// priority puts lower priorities first.
func priority(p1, p2 *v1.Pod) int {
	a, b := corev1helpers.PodPriority(p1), corev1helpers.PodPriority(p2)
	switch {
	case a == b:
		return 0
	case a > b:
		return 1
	}
	return -1
}

// cmpBool puts true first.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}
