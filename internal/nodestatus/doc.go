// Package nodestatus makes nodelet a Node of a cluster, as upstream's kubelet does
// (pkg/kubelet/kubelet_node_status.go, pkg/kubelet/nodestatus, the node lease). A Manager,
// given a client with the node's credentials (system:node:<name>, so the Node authorizer and
// NodeRestriction apply), does in Run:
//
//   - Registration: create the Node with the default labels (kubernetes.io/hostname, os, arch
//     and their beta twins) overridden by --node-labels, the register-with taints and the
//     attach/detach annotation, and its status. If it exists, get it and reconcile the
//     attach/detach annotation, the default labels, missing capacity/allocatable and huge
//     pages, as upstream's tryRegisterWithAPIServer. Failures are retried with back-off
//     (100ms doubling to 7s) until ctx ends.
//   - Status: every UpdateFrequency (10s), or at once after TriggerUpdate, compute the status
//     on a copy of the last known Node and PATCH it (component-helpers' PatchNodeStatus, a
//     two-way strategic merge patch) when it changed other than by heartbeat times, or when
//     ReportFrequency (5m, plus a random delay after a change) has passed since the last
//     report; up to 5 tries a tick, the later ones from a fresh GET. Outages are logged and the
//     next tick catches up.
//   - Lease: kube-node-lease/<node>, held by the node, LeaseDuration long (40s), renewed every
//     quarter of it, owned by the Node, with component-helpers' lease controller.
//   - Node(): the latest Node from the API server (registration, patches and a watch on this
//     node only), so admission sees labels and taints others set.
//
// The status is built by pure setters (setters.go, conditions.go) from an observation of the
// world (machine facts, runtime version, readiness errors, pressure) gathered in one place:
// addresses (InternalIPs from the configured node IPs, then Hostname); capacity (cpu, memory,
// huge pages, ephemeral-storage, pods = MaxPods) and allocatable = capacity − (kube reserved +
// system reserved + hard eviction thresholds: memory.available for memory, nodefs.available
// for ephemeral-storage); nodeInfo; the kubelet endpoint; and the MemoryPressure,
// DiskPressure, PIDPressure and Ready conditions with upstream's reasons, messages, events and
// heartbeat/transition time semantics. HostMachine reads the machine's facts in production.
//
// Reading order: config.go, manager.go, register.go, update.go, lease.go, setters.go,
// conditions.go, node.go, host.go.
package nodestatus
