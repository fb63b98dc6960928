// Package eviction is the node's eviction manager, as upstream's pkg/kubelet/eviction (v1.37).
//
// Every monitoring period (10 s by default, evictionMonitoringPeriod), and at once when the
// kernel says memory usage crossed a threshold (cgroup v1 memory.usage_in_bytes eventfd, with
// kernelMemcgNotification), the Manager:
//
//  1. observes the eviction signals from the stats summary (Observe, pure): memory.available
//     (capacity minus the root cgroup's working set), allocatableMemory.available,
//     nodefs.available/inodesFree, imagefs.*, containerfs.* and pid.available;
//  2. decides (Step, pure) which thresholds (evictionHard, evictionSoft with
//     evictionSoftGracePeriod, evictionMinimumReclaim) are met, which node conditions
//     (MemoryPressure, DiskPressure, PIDPressure) hold within evictionPressureTransitionPeriod,
//     and which thresholds must drive eviction now;
//  3. evicts pods over their local storage limits (emptyDir sizeLimit, a container's or the
//     pod's ephemeral-storage limit: LocalStorageViolation, pure);
//  4. otherwise reclaims node-level resources first (dead containers, unused images) and, if
//     the threshold still holds, ranks the active pods (Rank*, pure) and evicts one per period.
//
// An evicted pod ends Failed with reason Evicted, upstream's message (the signal, the
// threshold, the usage of each container over its request) and a DisruptionTarget condition;
// static, mirror and system-critical pods are never evicted. Admit refuses new pods under
// pressure as upstream: BestEffort pods under memory pressure alone (unless they tolerate the
// memory-pressure taint), every pod under any other pressure, critical pods never.
package eviction
