// Package host reads the node-level numbers of the kubelet's summary API from the kernel: the
// CPU and memory of a cgroup (cgroup v1 and v2, cgroupfs layout), /proc/meminfo, /proc/net/dev,
// boot time, the task limit and count, the calling process, and filesystem sizes and disk
// usage. It is what cadvisor does for the upstream kubelet's machine and raw-cgroup containers,
// reduced to what the summary needs.
//
// All I/O goes through a Reader rooted at a directory ("/" in production), so tests build a
// fake /proc and /sys/fs/cgroup in a temporary directory; parsing is pure functions
// (parse_*.go) with table tests.
//
// Sources, by cgroup version:
//
//	                 v1 (controller mounts)                 v2 (unified)
//	CPU time         cpuacct/<cg>/cpuacct.usage             <cg>/cpu.stat usage_usec
//	memory usage     memory/<cg>/memory.usage_in_bytes      <cg>/memory.current (root: anon+file
//	                                                        of memory.stat, as runc)
//	working set      usage - total_inactive_file            usage - inactive_file
//	RSS              total_rss                              anon
//	page faults      pgfault, pgmajfault (the cgroup's own, as cadvisor's ContainerData)
//	limit            memory.limit_in_bytes                  memory.max
//	swap             total_swap (with swap accounting)      memory.swap.current, memory.swap.max
//	pressure (PSI)   none below the root                    <cg>/{cpu,memory,io}.pressure
//
// The root cgroup stands for the machine: its memory limit is MemTotal and its swap is
// SwapTotal - SwapFree from /proc/meminfo (cadvisor's machine container); its pressure is the
// system's, /proc/pressure/{cpu,memory,io}, on v1 and v2 alike. A v1 hierarchy with
// cpuacct is found under cpuacct, cpu,cpuacct or cpuacct,cpu; v2 is recognised by
// /sys/fs/cgroup/cgroup.controllers (a hybrid mount with v2 only under unified/ is v1).
//
// Network interfaces leave out what cadvisor leaves out (lo, veth*, docker*, nerdctl*). Disk
// usage is du's: allocated blocks, hard links once, one filesystem.
package host
