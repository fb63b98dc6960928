// Package container holds the runtime's view of a pod, shared by the runtime manager, PLEG, the
// pod cache and status generation: PodStatus (what CRI said about a pod's sandboxes and
// containers, and when), the container spec hash, and the CRI label and annotation keys by which
// everything nodelet runs can be recovered from the runtime after a restart.
//
// It mirrors upstream's pkg/kubelet/container types, trimmed to what nodelet uses, and computes
// the container hash exactly as upstream does, so that io.kubernetes.container.hash labels match.
package container
