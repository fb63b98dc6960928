// Package podsync is what a pod worker calls: upstream's Kubelet.SyncPod, SyncTerminatingPod
// and SyncTerminatedPod without the rest of the Kubelet, split as etcd raft splits Step and
// Ready into a pure decision and a host that applies it.
//
// Step (step.go) is the decision, a pure function: from the pod's spec, the runtime's view of
// it (the pod cache's *container.PodStatus), the prober's probeview.View, the pod's previous
// State, the time and the node's facts, it returns the API status to store, whether the pod
// has finished, what to give the runtime, whether to sync a static pod's mirror pod, the
// start-duration observation, and the next State. AfterRuntime completes a SyncPod's decision
// with what the runtime reported (waiting reasons, a fresh view after an in-place resize); it
// reuses the status decided before the runtime when the report changes nothing in it.
//
// The Syncer (syncer.go) applies: it gathers the inputs (prober, allocations, clock), calls
// the runtime, syncs the mirror pod, stores each decided status once in the status manager
// (which the API status sync, the local API and the prober read; the syncer never reads it
// back), records the metric, and keeps each pod's State, keyed by UID, from one sync to the
// next until SyncTerminatedPod has succeeded.
//
// One SyncPod: Step (the status with the last sync's waiting reasons; Finished when it is
// terminal: stored, and the runtime is not called), the mirror pod, the runtime's SyncPod with
// the prober's view, then AfterRuntime, and one store. One SyncTerminatingPod: with a failure
// (an eviction) the Failed status is stored before the kill so that it shows while the pod
// stops; after the kill, the stopped pod's status. One SyncTerminatedPod: the final status
// (status.Terminate), the volumes released, the State forgotten.
//
// Where nodelet differs from upstream, on purpose: the waiting reasons the runtime reports
// (ErrImagePull, CrashLoopBackOff...) show in the status of the sync that hit them, not the
// next one; and the previous status is the syncer's own State, not the status manager's copy.
package podsync
