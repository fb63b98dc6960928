// Package oomwatcher reports system OOM kills as SystemOOM node events, as upstream's OOM
// watcher (pkg/kubelet/oom/oom_watcher_linux.go, v1.37) with the OOM parser it forks from
// cadvisor (third_party/forked/cadvisor/oomparser and go-kmsg-parser).
//
// The kernel log is read from /dev/kmsg, one record per read:
//
//	priority,sequence,microseconds since boot,flags;message
//	 KEY=value (dictionary lines, skipped)
//
// An OOM kill is a run of records: "<comm> invoked oom-killer: ...", then either the
// "oom-kill:constraint=...,oom_memcg=...,task_memcg=...,task=...,pid=...,uid=..." line (kernels
// since 4.19, for a memory cgroup's OOM; a global OOM prints "global_oom" in place of
// oom_memcg and is finished by the next line), or, on older kernels, "Task in <cgroup> killed
// as a result of limit of <cgroup>" followed by "Killed process <pid> (<name>)". The parser
// (Record, ParseRecord, Parser) is pure and follows upstream's regular expressions and state
// machine: the cgroup whose limit was hit is the event's VictimContainerName, "/" for a
// system (global) OOM; only those become a Warning node event with reason SystemOOM and the
// message "System OOM encountered, victim process: <name>, pid: <pid>". A kill inside a
// container's memory cgroup is the container's business (its status says OOMKilled).
//
// Lines written to /dev/kmsg from user space (facility user) are parsed as the kernel's, as
// upstream does: only root can write there.
//
// Differences from upstream:
//
//   - Upstream reads the kernel log from its first record, so every kubelet restart reports
//     again every system OOM since boot. The watcher seeks to the end of /dev/kmsg and drops
//     kills recorded before it started (less a second for the drift between the kernel log's
//     clock and CLOCK_MONOTONIC), so a restart reports nothing old.
//   - Upstream fails the kubelet's start when /dev/kmsg cannot be opened (unless it runs in a
//     user namespace); the watcher logs it once and nodelet runs without OOM events.
//   - A malformed record is skipped (upstream stops reading).
//   - Upstream also counts kills per cgroup for cadvisor's container_oom_events_total, which
//     nodelet does not serve.
package oomwatcher
