package statusmanager

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/nodelet/nodelet/internal/status"
)

// sharedByKubelet is upstream's PodConditionSharedByKubelet: DisruptionTarget, which the
// kubelet writes only when it ends a pod itself.
func sharedByKubelet(t v1.PodConditionType) bool { return t == v1.DisruptionTarget }

// equalByKubelet is upstream's isPodStatusByKubeletEqual: the statuses are equal in what the
// kubelet owns (its conditions compared by status, reason and message; resource claim statuses
// ignored, as they belong to the scheduler and the DRA drivers).
func equalByKubelet(old, cur *v1.PodStatus) bool {
	old, cur = normalizedTimes(old), normalizedTimes(cur)
	pick := func(s *v1.PodStatus) map[v1.PodConditionType]v1.PodCondition {
		out := map[v1.PodConditionType]v1.PodCondition{}
		for _, c := range s.Conditions {
			if status.OwnedByKubelet(c.Type) || sharedByKubelet(c.Type) {
				out[c.Type] = c
			}
		}
		return out
	}
	oc, nc := pick(old), pick(cur)
	if len(oc) != len(nc) {
		return false
	}
	for t, n := range nc {
		o, ok := oc[t]
		if !ok || o.Status != n.Status || o.Reason != n.Reason || o.Message != n.Message {
			return false
		}
	}
	c := old.DeepCopy()
	c.Conditions = cur.Conditions
	c.ResourceClaimStatuses = cur.ResourceClaimStatuses
	c.ExtendedResourceClaimStatus = cur.ExtendedResourceClaimStatus
	c.NodeAllocatableResourceClaimStatuses = cur.NodeAllocatableResourceClaimStatuses
	return apiequality.Semantic.DeepEqual(c, cur)
}

// mergeStatus is upstream's mergePodStatus: the status to write, from the API server's (old)
// and the kubelet's (cur). Conditions the kubelet does not own are kept from old; its own come
// from cur; DisruptionTarget from cur only when the pod ends here. Resource claim statuses stay
// as the API has them. While containers could still run, a terminal phase is held back (the
// API must not see a pod as finished before it is). A terminal pod is never ready.
func mergeStatus(pod *v1.Pod, old, cur v1.PodStatus, couldHaveRunningContainers bool, now time.Time) v1.PodStatus {
	cur = *cur.DeepCopy()
	conds := make([]v1.PodCondition, 0, len(old.Conditions)+len(cur.Conditions))
	for _, c := range old.Conditions {
		if !status.OwnedByKubelet(c.Type) {
			conds = append(conds, c)
		}
	}
	toTerminal := !status.IsPhaseTerminal(old.Phase) && status.IsPhaseTerminal(cur.Phase)
	for _, c := range cur.Conditions {
		switch {
		case status.OwnedByKubelet(c.Type):
			conds = append(conds, c)
		case c.Type == v1.DisruptionTarget && toTerminal && !couldHaveRunningContainers:
			c.LastTransitionTime = metav1.NewTime(now)
			if o := findCondition(old.Conditions, c.Type); o != nil && o.Status == c.Status {
				c.LastTransitionTime = o.LastTransitionTime
			}
			conds = replaceOrAppend(conds, c)
		}
	}
	cur.Conditions = conds
	cur.ResourceClaimStatuses = old.ResourceClaimStatuses
	cur.ExtendedResourceClaimStatus = old.ExtendedResourceClaimStatus
	cur.NodeAllocatableResourceClaimStatuses = old.NodeAllocatableResourceClaimStatuses

	if toTerminal && couldHaveRunningContainers {
		cur.Phase, cur.Reason, cur.Message = old.Phase, old.Reason, old.Message
	}
	if status.IsPhaseTerminal(cur.Phase) && (isTrue(cur.Conditions, v1.PodReady) || isTrue(cur.Conditions, v1.ContainersReady)) {
		reason := status.ReasonPodCompleted
		if cur.Phase == v1.PodFailed {
			reason = status.ReasonPodFailed
		}
		for _, t := range []v1.PodConditionType{v1.ContainersReady, v1.PodReady} {
			updateCondition(&cur, v1.PodCondition{Type: t, Status: v1.ConditionFalse, Reason: reason,
				ObservedGeneration: pod.Generation}, now)
		}
	}
	return cur
}

// updateCondition is upstream's podutil.UpdatePodCondition: replace or add c, keeping the
// transition time while the status holds.
func updateCondition(s *v1.PodStatus, c v1.PodCondition, now time.Time) {
	c.LastTransitionTime = metav1.NewTime(now)
	if o := findCondition(s.Conditions, c.Type); o != nil && o.Status == c.Status {
		c.LastTransitionTime = o.LastTransitionTime
	}
	s.Conditions = replaceOrAppend(s.Conditions, c)
}

func replaceOrAppend(conds []v1.PodCondition, c v1.PodCondition) []v1.PodCondition {
	for i := range conds {
		if conds[i].Type == c.Type {
			conds[i] = c
			return conds
		}
	}
	return append(conds, c)
}

func findCondition(conds []v1.PodCondition, t v1.PodConditionType) *v1.PodCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

func isTrue(conds []v1.PodCondition, t v1.PodConditionType) bool {
	c := findCondition(conds, t)
	return c != nil && c.Status == v1.ConditionTrue
}

// statusPatch is upstream's preparePatchBytesForPodStatus: a two-way strategic merge patch from
// {status: old} to {metadata: {uid}, status: cur}, so that the UID is in the patch and the API
// server applies it only to that pod (a pod recreated under the same name is not patched).
// unchanged says the patch carries nothing but the UID.
func statusPatch(uid types.UID, old, cur v1.PodStatus) (patch []byte, unchanged bool, err error) {
	oldData, err := json.Marshal(v1.Pod{Status: old})
	if err != nil {
		return nil, false, fmt.Errorf("encode the API server's status: %w", err)
	}
	newData, err := json.Marshal(v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: cur})
	if err != nil {
		return nil, false, fmt.Errorf("encode the new status: %w", err)
	}
	patch, err = strategicpatch.CreateTwoWayMergePatch(oldData, newData, v1.Pod{})
	if err != nil {
		return nil, false, fmt.Errorf("create the status patch: %w", err)
	}
	return patch, bytes.Equal(patch, fmt.Appendf(nil, `{"metadata":{"uid":%q}}`, uid)), nil
}

// normalizedTimes is a copy of s with every timestamp cut to whole seconds, as upstream's
// normalizeStatus does: the API server stores RFC 3339 seconds, so a status read back from it
// must compare equal to the one written.
func normalizedTimes(s *v1.PodStatus) *v1.PodStatus {
	c := s.DeepCopy()
	cut := func(t *metav1.Time) {
		if t != nil {
			*t = t.Rfc3339Copy()
		}
	}
	cut(c.StartTime)
	for i := range c.Conditions {
		cut(&c.Conditions[i].LastProbeTime)
		cut(&c.Conditions[i].LastTransitionTime)
	}
	state := func(st *v1.ContainerState) {
		if st.Running != nil {
			cut(&st.Running.StartedAt)
		}
		if st.Terminated != nil {
			cut(&st.Terminated.StartedAt)
			cut(&st.Terminated.FinishedAt)
		}
	}
	for _, list := range [][]v1.ContainerStatus{c.InitContainerStatuses, c.ContainerStatuses, c.EphemeralContainerStatuses} {
		for i := range list {
			state(&list[i].State)
			state(&list[i].LastTerminationState)
		}
	}
	return c
}
