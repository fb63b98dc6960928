// Package volumes sets up the node-side volumes nodelet supports, emptyDir, hostPath,
// downwardAPI and, in cluster mode, configMap, secret and projected, and builds each
// container's CRI mounts, following the upstream kubelet (pkg/volume/emptydir, hostpath,
// configmap, secret, projected, downwardapi, util/atomic_writer.go, kubelet_pods.go
// makeMounts, kuberuntime makeMounts).
//
// Layout under Config.RootDir, upstream's:
//
//	pods/<uid>/                                           0750
//	pods/<uid>/volumes/kubernetes.io~empty-dir/<name>     0777 (a tmpfs for medium Memory)
//	pods/<uid>/volumes/kubernetes.io~configmap/<name>     0777, on disk
//	pods/<uid>/volumes/kubernetes.io~secret/<name>        a tmpfs
//	pods/<uid>/volumes/kubernetes.io~projected/<name>     a tmpfs
//	pods/<uid>/volumes/kubernetes.io~downward-api/<name>  a tmpfs
//	    ..<UTC timestamp>.<n>/<files>   one directory per version of the content
//	    ..data -> ..<timestamp>.<n>     the current version, switched atomically
//	    <key> -> ..data/<key>           what containers see (top-level names)
//	pods/<uid>/etc-hosts                                  the managed hosts file, 0644
//	pods/<uid>/containers/<name>/<%08x restartCount>      termination message files, 0666
//
// Use:
//
//	vm := volumes.New(volumes.Config{RootDir: "/var/lib/nodelet", Objects: apiObjects}, volumes.NewSystemMounter())
//	paths, err := vm.SetUp(pod)                                 // each sync; idempotent
//	mounts, err := vm.Mounts(pod, &c, paths, restartCount, ips) // before CreateContainer
//	msg, err := vm.ReadTerminationMessage(pod.UID, c.Name, restartCount)
//	err = vm.TearDown(pod.UID)                                  // pod gone; idempotent
//	uids, err := vm.PodDirs()                                   // housekeeping of orphans
//
// Choices where upstream has options or nodelet differs:
//
//   - emptyDir is 0777 (upstream's perm), set once at creation and never reset by a re-sync.
//     spec.emptyDir.mode (alpha, gate off by default) is ignored. With fsGroup the new volume
//     root gets group fsGroup, g+rwx and setgid, as upstream's SetVolumeOwnership.
//   - medium Memory mounts a tmpfs with only size= (upstream's options; "noswap" is not tried).
//     Size: upstream's rule, the smallest of Config.NodeAllocatableMemory, the pod's memory
//     limit and spec.emptyDir.sizeLimit, skipping the unknown ones; when all are unknown there
//     is no size option (the kernel's default, half of RAM). The pages are charged to the pod's
//     memory cgroup whatever the size. An existing mount point is not mounted again. Medium
//     HugePages* is rejected (no hugetlbfs support).
//   - hostPath: upstream's type checks, messages and creation modes (directories 0755, files
//     0644, FileOrCreate does not create parents); a path with ".." is rejected.
//   - configMap, secret, projected, downwardAPI: upstream's payloads (all keys or items,
//     per-item mode, defaultMode 0644 when unset, optional covering only NotFound, upstream's
//     messages for missing keys), fetched through Config.Objects before anything is mounted.
//     Without Objects (standalone mode) configMap, secret and projected sources other than
//     downwardAPI fail with ErrNeedsClusterMode; downwardAPI needs only the pod. Projected
//     clusterTrustBundle and podCertificate sources are rejected. Secret, projected and
//     downwardAPI volumes are a tmpfs sized like a memory emptyDir without sizeLimit;
//     configMap is on disk, as upstream. Every SetUp rewrites the content only when it
//     changed (content or mode), into a new version directory swapped in through ..data, so
//     a reader never sees a mix of versions. Modes are exact (no umask). Service account tokens
//     get mode 0600 and the owner of the pod's single runAsUser (upstream's fsUser) when the
//     pod has one or an fsGroup. With fsGroup, the volume root and the new version are given
//     to the group with upstream's read-only masks (files g+r, directories g+rx and setgid),
//     whenever a version is written. Directories for nested mount points (another volume
//     mounted below this one in a container) are created as upstream. These volumes are
//     always mounted read-only. A failed SetUp leaves the previous content in place
//     (upstream tears the volume down); spec's defaultUser/items' user (alpha, gate off)
//     are ignored.
//   - Any other volume type is an error naming the volume and the type.
//   - subPath/subPathExpr: absolute paths and ".." are rejected, a missing subPath is created
//     with the volume root's mode, symlinks must stay inside the volume, and the resolved path
//     is given to the runtime. Upstream's extra bind mount into pods/<uid>/volume-subpaths,
//     which closes the check-to-mount race, is not done (see joinSubPath).
//     subPathExpr is expanded from Config.SubPathEnv, or a built-in resolver of literal values
//     and pod fields.
//   - /etc/hosts: upstream's rule, mounted when the pod has IPs or uses the host network
//     (hostNetwork pods get a copy of the node's hosts file plus hostAliases) and the container
//     does not mount /etc/hosts itself. It is rewritten in place on each Mounts call (pod IPs
//     can change with a new sandbox) and only when the content changes. The FQDN uses
//     Config.ClusterDomain; without one it ends at ".svc" rather than upstream's trailing dot.
//   - The termination message file has a deterministic name per (pod, container,
//     restartCount) instead of upstream's random one, so a restarted nodelet finds it without
//     the CRI mount list. It is emptied if a restart count is reused; files older than the
//     previous instance are pruned. ReadTerminationMessage returns its last 4096 bytes; the
//     12 KiB per-pod bound is applied when the pod status is built (internal/status).
//   - TearDown unmounts every mount under the pod directory (all of them with a MountLister,
//     which the system mounter is; the emptyDir directories otherwise), then removes the tree
//     with openat/O_NOFOLLOW and stops at any directory on another filesystem, so a mount left
//     behind or a symlink planted by a container cannot make it delete anything outside.
//     Unmounts are not lazy: a busy mount fails TearDown, naming the path; call it again later.
//   - mountPropagation HostToContainer/Bidirectional needs the root directory on a shared
//     mount: call MakeRShared(RootDir) at start-up, as upstream's kubelet does.
//   - SELinux relabeling is not requested (nodelet targets hosts without SELinux).
package volumes
