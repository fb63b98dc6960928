// Package containergc removes dead containers, unused sandboxes and the log directories of pods
// that are gone, as upstream's container garbage collector (pkg/kubelet/container/container_gc.go
// and pkg/kubelet/kuberuntime/kuberuntime_gc.go, v1.37), with the kubelet's flags:
//
//   - --minimum-container-ttl-duration (MinAge, default 0): a dead container created less long
//     ago stays.
//   - --maximum-dead-containers-per-container (MaxPerPodContainer, default 1): each container of a
//     pod keeps its newest dead instances (for `logs --previous` and lastState); negative: all.
//   - --maximum-dead-containers (MaxContainers, default -1: no limit): over it, each container
//     keeps an even share (at least one) and the oldest of the rest go.
//
// Once every pod source has been read, the dead containers of pods that are gone (upstream's
// ShouldPodContentBeRemoved: evicted, or deleted and terminated, or unknown to the pod workers)
// all go, whatever the policy. A sandbox goes when it is not ready and holds no container, except
// the newest one of a pod that still exists; a pod's log directory (<podLogsDir>/<ns>_<name>_<uid>)
// goes when its pod is gone and, unlike upstream, no sandbox of it is left. A container in
// unknown state is stopped before it is removed; removing a container removes its log files
// (the runtime manager's RemoveContainer). DeleteAllUnusedContainers, for the eviction manager,
// also empties terminated pods that are not deleted.
//
// Containers and sandboxes without nodelet's io.kubernetes.pod.uid label are not nodelet's and
// are left alone (upstream's collector would treat them as belonging to an unknown pod).
//
// The choice (DeadContainers, Sandboxes, LogDirs) is pure; Manager runs it every period (1 min,
// --container-gc-period) against the CRI, the pod workers and the pod log directory.
package containergc
