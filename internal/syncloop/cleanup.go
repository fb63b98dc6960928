package syncloop

import (
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/nodelet/nodelet/internal/podworkers"
)

// cleanupInput is what one housekeeping pass decides on: the desired pods and the pod workers'
// states, taken together on the loop, and the listings taken off the loop after them.
type cleanupInput struct {
	Desired sets.Set[types.UID]
	// Workers is the work type of every pod the pod workers know (SyncKnownPods).
	Workers map[types.UID]podworkers.WorkType
	// Runtime are the pods with sandboxes or containers; Dirs those with a directory under the
	// root directory; Statuses those with a status recorded.
	Runtime, Dirs, Statuses []types.UID
	// InFlight are the pods whose removal is queued or running.
	InFlight sets.Set[types.UID]
}

// cleanupPlan is what a housekeeping pass hands to the remover. Each removal still asks, when
// its turn comes, whether the pod may go (Dispatcher.claim): a pod may have been added since.
type cleanupPlan struct {
	// RemovePods are runtime pods to stop and remove, with their directories and statuses.
	RemovePods []types.UID
	// TearDownDirs are directories of pods gone from the runtime, removed with their statuses.
	TearDownDirs []types.UID
	// ForgetStatuses are statuses of pods gone from everywhere.
	ForgetStatuses []types.UID
	// KeepAllocations are the pods whose resource allocations stay checkpointed.
	KeepAllocations sets.Set[types.UID]
}

// decideCleanup is the decision of housekeeping (upstream's HandlePodCleanups): a pod is gone
// when no source wants it and its worker, if it has one, has terminated it; what a gone pod
// left behind is removed, the runtime pod first, else its directory, else its status. A pod
// whose removal is in flight is left to it. The lists are sorted.
func decideCleanup(in cleanupInput) cleanupPlan {
	gone := func(uid types.UID) bool {
		if in.Desired.Has(uid) || in.InFlight.Has(uid) {
			return false
		}
		wt, known := in.Workers[uid]
		return !known || wt == podworkers.TerminatedPod
	}
	inRuntime, hasDir := sets.New(in.Runtime...), sets.New(in.Dirs...)
	var plan cleanupPlan
	for _, uid := range sets.List(inRuntime) {
		if gone(uid) {
			plan.RemovePods = append(plan.RemovePods, uid)
		}
	}
	for _, uid := range sets.List(hasDir) {
		if !inRuntime.Has(uid) && gone(uid) {
			plan.TearDownDirs = append(plan.TearDownDirs, uid)
		}
	}
	for _, uid := range sets.List(sets.New(in.Statuses...)) {
		if !inRuntime.Has(uid) && !hasDir.Has(uid) && gone(uid) {
			plan.ForgetStatuses = append(plan.ForgetStatuses, uid)
		}
	}
	keep := in.Desired.Union(inRuntime).Union(in.InFlight)
	for uid := range in.Workers {
		keep.Insert(uid)
	}
	plan.KeepAllocations = keep
	return plan
}
