package nodeshutdown

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
)

// The priorities of upstream's two default bands (k8s.io/kubernetes/pkg/apis/scheduling).
const (
	DefaultPriority        int32 = 0          // DefaultPriorityWhenNoDefaultClassExists
	SystemCriticalPriority int32 = 2000000000 // SystemCriticalPriority
)

// Period is one priority band: pods of at least Priority (and below the next band's) get
// GracePeriodSeconds to terminate (shutdownGracePeriodByPodPriority).
type Period struct {
	Priority           int32
	GracePeriodSeconds int64
}

// Periods is upstream's newPodManager: byPriority when set, else the two bands upstream's
// migrateConfig makes of shutdownGracePeriod and shutdownGracePeriodCriticalPods (the regular
// pods get the first less the second; critical pods the second); sorted by priority. None
// (graceful shutdown off) when shutdownGracePeriod is zero or smaller than the critical pods'.
func Periods(grace, critical time.Duration, byPriority []Period) []Period {
	var out []Period
	switch {
	case len(byPriority) > 0:
		out = append(out, byPriority...)
	case grace == 0 || grace < critical:
		return nil
	default:
		out = []Period{
			{Priority: DefaultPriority, GracePeriodSeconds: int64((grace - critical) / time.Second)},
			{Priority: SystemCriticalPriority, GracePeriodSeconds: int64(critical / time.Second)},
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Priority < out[j].Priority })
	return out
}

// Budget is how long the shutdown may be delayed: every band's grace period, one after the
// other (upstream's periodRequested). logind's InhibitDelayMaxSec must be at least this.
func Budget(periods []Period) time.Duration {
	var sum int64
	for _, p := range periods {
		sum += p.GracePeriodSeconds
	}
	return time.Duration(sum) * time.Second
}

// Group is a band and the pods it terminates.
type Group struct {
	Period
	Pods []*v1.Pod
}

// Groups is upstream's groupByPriority: each pod goes to the band with the highest priority
// not above its own (a pod without priority has 0), or to the lowest band when its priority is
// below every band's. periods must be sorted (Periods); the groups keep their order, empty
// ones included.
func Groups(periods []Period, pods []*v1.Pod) []Group {
	groups := make([]Group, len(periods))
	for i, p := range periods {
		groups[i].Period = p
	}
	if len(groups) == 0 {
		return groups
	}
	for _, pod := range pods {
		var priority int32
		if pod.Spec.Priority != nil {
			priority = *pod.Spec.Priority
		}
		i := sort.Search(len(groups), func(i int) bool { return groups[i].Priority >= priority })
		switch {
		case i == len(groups):
			i-- // above every band: the highest
		case i > 0 && groups[i].Priority > priority:
			i-- // between two bands: the lower
		}
		groups[i].Pods = append(groups[i].Pods, pod)
	}
	return groups
}

// GracePeriod is the pod's grace period in its band: the band's, or the pod's
// terminationGracePeriodSeconds when that is shorter (upstream's killPods).
func GracePeriod(g Group, pod *v1.Pod) int64 {
	if t := pod.Spec.TerminationGracePeriodSeconds; t != nil && *t <= g.GracePeriodSeconds {
		return *t
	}
	return g.GracePeriodSeconds
}
