// Package cgroups holds what nodelet decides about the node's cgroups. Today: which cgroup
// version the host runs (Unified) and whether nodelet may run on it (CheckVersion, upstream's
// failCgroupV1), and which cgroup driver it uses (Driver: the runtime's, as upstream). The pod
// and QoS cgroups' settings, the systemd driver and cgroup v2 come with issue 17.
package cgroups
