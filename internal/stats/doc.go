// Package stats provides the data of the kubelet's /stats/summary and /metrics/resource
// endpoints: a Provider that assembles upstream's summary (statsapi =
// k8s.io/kubelet/pkg/apis/stats/v1alpha1, the JSON that metrics-server, eviction tooling and
// kubectl read) and a prometheus Collector with upstream's resource metrics. The HTTP handlers
// are internal/server's.
//
//	p, err := stats.New(stats.Config{NodeName: n, RootDir: "/var/lib/nodelet"},
//		stats.Deps{Runtime: criClient, Images: criClient, Clock: clk})
//	summary, err := p.Summary(ctx)                          // /stats/summary
//	reg.MustRegister(stats.NewResourceMetricsCollector(p))  // /metrics/resource
//
// It follows upstream's CRI stats provider (pkg/kubelet/stats/cri_stats_provider.go,
// provider.go, helper.go, host_stats_provider.go), the summary (server/stats/summary.go,
// summary_sys_containers.go) and the resource metrics collector
// (metrics/collectors/resource_metrics.go), without cadvisor. Host readings are package
// host's (rooted at Config.Root, so tests use a fake tree); statstest has a fake runtime.
//
// # Where each number comes from
//
//	node.cpu, memory, swap, io   root cgroup, read by package host (cgroup v1 or v2; memory
//	                             limit = MemTotal, swap from /proc/meminfo, PSI from
//	                             /proc/pressure)
//	node.network                 /proc/net/dev without lo/veth/docker/nerdctl; default eth0
//	node.fs                      statfs of Config.RootDir
//	node.runtime.imageFs         CRI ImageFsInfo used bytes/inodes + statfs of its mountpoint;
//	node.runtime.containerFs     ImageFsInfo's container filesystem when reported, else imageFs
//	node.rlimit                  min(pid_max, threads-max), tasks from /proc/loadavg
//	node.startTime               btime of /proc/stat
//	node.systemContainers        "pods" = Config.CgroupRoot; "kubelet" = Config.KubeletCgroup or
//	                             this process (/proc/self); "runtime", "misc" when configured
//	pods                         CRI ListPodSandboxStats (sandboxes kept as upstream's
//	                             removeTerminatedPods; containerd reports the ready ones)
//	pod cpu, memory, network,    the sandbox's stats; cpu and memory fall back to the sum of
//	io, process_stats            the containers' when missing; swap is the containers' sum
//	containers                   the sandbox's container stats, running ones only (upstream's
//	                             removeTerminatedContainers), startTime = CRI CreatedAt
//	container rootfs             CRI writable layer + statfs of its mountpoint
//	container logs               files in <PodLogsDir>/<ns>_<name>_<uid>/<container>/
//	volume                       walk of pods/<uid>/volumes/kubernetes.io~{empty-dir,configmap,
//	                             downward-api,secret,projected}/<name> under RootDir, reused for
//	                             Config.VolumeStatsAge
//	ephemeral-storage            containers' rootfs + logs, emptyDir (not tmpfs), configMap and
//	                             downwardAPI volumes, pod-level log files, etc-hosts
//
// When the runtime answers Unimplemented to ListPodSandboxStats, pods come from
// ListContainerStats (pods with a running container) and their CPU and memory are the sums of
// their containers', as upstream's fallback; there is then no pod network.
//
// # usageNanoCores
//
// CRI readings carry the runtime's usageNanoCores (containerd computes it); when one lacks it,
// it is computed from the previous reading of the same container or sandbox, as upstream. For
// the node and system containers (cadvisor's job upstream) the provider keeps the previous
// sample of each cgroup, under a mutex, and reports the rate since it. New takes a first
// sample, so the first summary already has a rate; until there is one the value is 0, as
// cadvisor reports. A reading within Config.MinCPUSampleInterval of the kept sample reports
// the previous rate, so that concurrent clients do not compute rates over milliseconds. The
// rate is thus over the interval between summaries, not cadvisor's housekeeping interval.
//
// # Differences from upstream
//
//   - No cadvisor: no accelerators, no user-defined metrics, no per-cgroup process counts for
//     the node; "kubelet" without --kubelet-cgroups is this process (upstream: its cgroup,
//     which it requires cpu and memory to share).
//   - Node PSI comes from /proc/pressure (v1 and v2) and is left out when the kernel has none;
//     upstream reports zeros from cadvisor on v1. Below the root, v1 cgroups have no PSI.
//   - Volume stats are computed when asked (and cached), not by a background walker, and only
//     for the local volume plugins above; there are no PVC references.
//   - containerFs is ImageFsInfo's container filesystem when the runtime reports one
//     (upstream's CRI provider always repeats imageFs).
//   - Pods, containers, volumes and system containers are sorted (upstream: map order).
//   - Hugepage-aware eviction's adjustment of node availableBytes is not applied.
package stats
