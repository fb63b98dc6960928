// Package criconfig builds the CRI configuration of a pod's sandbox and containers from the
// v1.Pod, as the upstream kubelet does: metadata, the labels and annotations that let
// everything be recovered from the runtime, hostname, DNS, port mappings, namespaces, cgroup
// parent, log paths, command and args with $(VAR) expansion, environment (values, downward API,
// resource fields), mounts, resources and security context (users and groups, capabilities,
// the masked and read-only /proc and /sys paths of procMount, seccomp, AppArmor).
//
// Everything here is pure: inputs in, CRI structs out, so it is table-tested without a runtime.
package criconfig
