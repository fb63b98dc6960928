// Package cgroups holds what nodelet decides about the node's cgroups. Today: which cgroup
// version the host runs (Unified) and whether nodelet may run on it (CheckVersion, upstream's
// failCgroupV1). The pod and QoS cgroups, the systemd driver and cgroup v2's settings come with
// issue 17.
package cgroups
