// Package podsync is what a pod worker calls: it generates the pod's API status from the
// runtime view, records it, and asks the runtime manager to move the pod toward its spec
// (SyncPod), to stop it within a grace period (SyncTerminatingPod), or to record its final
// status (SyncTerminatedPod). It is upstream's Kubelet.SyncPod and friends without the rest
// of the Kubelet.
package podsync
