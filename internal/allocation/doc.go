// Package allocation is the node's record of the resources each pod was admitted with, and of
// the resources its containers actually run with, for in-place pod resize (upstream's
// pkg/kubelet/allocation, v1.37).
//
// A pod's spec says what the user wants; its allocation says what the node agreed to; its
// actuated resources say what the runtime was told. The three differ while a resize goes
// through:
//
//  1. A resize changes the spec (the pods/resize subresource). HandleResize decides, as
//     upstream's handlePodResourcesResize, whether the node can give the pod the new
//     resources next to the other pods' allocations (the node's admission checks): if so the
//     allocation becomes the new resources and PodResizeInProgress is set; if not the pod
//     keeps its allocation and PodResizePending says why (Deferred, retried as other pods
//     change and every few seconds, or Infeasible, never retried).
//  2. Everything downstream (the runtime, the status) sees the pod through Apply: its spec
//     with the allocated resources, never the wish.
//  3. The runtime compares each running container's allocated resources with its actuated
//     ones and updates the container (CRI UpdateContainerResources) or restarts it (its
//     resizePolicy), recording the actuated resources as it goes.
//  4. Once no running container differs, PodResizeInProgress is cleared.
//
// Both records are checkpointed under the root directory (allocated_pods_state,
// actuated_pods_state, upstream's names), so a restart of nodelet neither re-applies nor
// forgets a resize. Decisions (Apply, Decide, InProgress) are pure functions; Manager holds
// the records and the resize conditions.
package allocation
