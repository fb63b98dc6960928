package eviction

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
)

// State is what the eviction decision remembers between observations.
type State struct {
	// FirstObservedAt is when each met threshold was first seen met (for grace periods).
	FirstObservedAt map[key]time.Time
	// ConditionsLastObservedAt is when each pressure condition was last seen (for the
	// transition period).
	ConditionsLastObservedAt map[v1.NodeConditionType]time.Time
	// Met are the thresholds met past their grace periods: they stay met until minimum
	// reclaim is satisfied.
	Met []Threshold
	// Last are the previous observations: a threshold acts again only on newer stats.
	Last Observations
}

// Decision is what one observation means.
type Decision struct {
	// Conditions are the node's pressure conditions, each true within the transition period
	// after it was last observed. Sorted.
	Conditions []v1.NodeConditionType
	// Act are the thresholds past their grace period on stats newer than the previous
	// observation's, memory first: the first one with a resource drives reclaim and eviction.
	Act []Threshold
}

// Step is upstream's synchronize up to the choice of what to reclaim (pure): the thresholds met
// now (and those met before whose minimum reclaim is not yet satisfied), the grace periods, the
// pressure conditions with the transition period.
func Step(thresholds []Threshold, transition time.Duration, prev State, obs Observations, now time.Time) (State, Decision) {
	met := thresholdsMet(thresholds, obs, false)
	if len(prev.Met) > 0 {
		met = merge(met, thresholdsMet(prev.Met, obs, true))
	}
	first := map[key]time.Time{}
	for _, t := range met {
		at, ok := prev.FirstObservedAt[t.key()]
		if !ok {
			at = now
		}
		first[t.key()] = at
	}
	lastSeen := map[v1.NodeConditionType]time.Time{}
	for c, at := range prev.ConditionsLastObservedAt {
		lastSeen[c] = at
	}
	for _, t := range met {
		if c, ok := conditionOf(t.Signal); ok {
			lastSeen[c] = now
		}
	}
	var d Decision
	for c, at := range lastSeen {
		if now.Sub(at) < transition {
			d.Conditions = append(d.Conditions, c)
		} else {
			delete(lastSeen, c)
		}
	}
	sort.Slice(d.Conditions, func(i, j int) bool { return d.Conditions[i] < d.Conditions[j] })

	var graced []Threshold
	for _, t := range met {
		if now.Sub(first[t.key()]) >= t.GracePeriod {
			graced = append(graced, t)
		}
	}
	next := State{FirstObservedAt: first, ConditionsLastObservedAt: lastSeen, Met: graced, Last: obs}
	for _, t := range graced {
		o, ok := obs[t.Signal]
		if !ok {
			continue
		}
		last, seen := prev.Last[t.Signal]
		if !seen || o.Time.IsZero() || o.Time.After(last.Time) {
			d.Act = append(d.Act, t)
		}
	}
	sort.SliceStable(d.Act, func(i, j int) bool {
		return isMemorySignal(d.Act[i].Signal) && !isMemorySignal(d.Act[j].Signal)
	})
	return next, d
}

// thresholdsMet are the thresholds whose signal's available amount is below the threshold (plus
// its minimum reclaim when enforceMinReclaim), as upstream's thresholdsMet.
func thresholdsMet(thresholds []Threshold, obs Observations, enforceMinReclaim bool) []Threshold {
	var out []Threshold
	for _, t := range thresholds {
		o, ok := obs[t.Signal]
		if !ok {
			continue
		}
		q := t.Value.Of(o.Capacity)
		if enforceMinReclaim && t.MinReclaim != nil {
			q.Add(t.MinReclaim.Of(o.Capacity))
		}
		if q.Cmp(o.Available) > 0 {
			out = append(out, t)
		}
	}
	return out
}

func merge(a, b []Threshold) []Threshold {
	seen := map[key]bool{}
	for _, t := range a {
		seen[t.key()] = true
	}
	for _, t := range b {
		if !seen[t.key()] {
			a = append(a, t)
			seen[t.key()] = true
		}
	}
	return a
}

// Resolved says no threshold is met any more once minimum reclaim is counted: what reclaiming
// node-level resources must achieve to spare the pods (upstream's reclaimNodeLevelResources).
func Resolved(thresholds []Threshold, obs Observations) bool {
	return len(thresholdsMet(thresholds, obs, true)) == 0
}

// Reclaim is the first threshold of d.Act with a resource to reclaim, and that resource.
func (d Decision) Reclaim() (Threshold, v1.ResourceName, bool) {
	for _, t := range d.Act {
		if r, ok := resourceOf(t.Signal); ok {
			return t, r, true
		}
	}
	return Threshold{}, "", false
}
