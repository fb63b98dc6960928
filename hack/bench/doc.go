// Command bench measures nodelet on real parts — containerd v2 + runc + bridge CNI from
// hack/testenv.sh, and the nodelet binary built from this tree — next to the upstream kubelet
// v1.37.1 (built once by hack/cluster.sh build) on the same runtime and manifests, and the raw
// CRI floor.
//
// Usage (as root, from the repository, on the test environment's machine):
//
//	go run ./hack/bench --pods 1,30 --runs 3 --out docs/benchmarks.md   # = make bench
//
// For each pod count N and each run it starts a fresh nodelet (own manifest directory, root
// directory, pod logs directory, node name and read-only port), waits until it answers and is
// quiet, writes N busybox sleeper manifests at once and measures, from the first write until
// /pods shows all N pods Running and Ready: the wall time, nodelet's CPU time (utime+stime from
// /proc/<pid>/stat) and its memory (VmHWM and VmRSS from /proc/<pid>/status). It then removes
// the manifests and measures the teardown until nodelet has removed every pod and sandbox, and
// stops nodelet with SIGTERM. The upstream kubelet then runs the same way, standalone (static
// pods, status from its read-only port's /pods; kubeletConfig is its configuration), under a
// cgroup root of its own; its teardown ends when its sandboxes are stopped (it removes them only
// in its container GC), and the bench undoes what it changes on the host (hostChanges). Each
// pair of runs is followed by a raw CRI floor run: the same N pods created sequentially with
// RunPodSandbox, CreateContainer and StartContainer through internal/cri, then stopped and
// removed, so the agents' figures can be read against what the runtime itself costs.
//
// The results (median and min–max of the runs, nodelet/kubelet ratios) are printed and, with
// --out, written to a Markdown page together with the machine, the date and the command.
//
// The bench shares the test environment with others: an agent (nodelet, and the upstream
// kubelet too) removes runtime pods it does not know, so two must never run at once on one
// runtime. Before every run the bench waits until no other nodelet or kubelet process (nor e2e
// test binary) has used the test environment's runtime for a few seconds, and it watches during
// the run: should another one appear, the bench kills its own agent at once, removes what it
// created and repeats the run. Raw CRI pods carry no io.kubernetes.pod.uid label, so no nodelet
// ever touches them (a kubelet would: raw runs never overlap the bench's kubelet runs). Nothing
// here asserts a threshold: the bench measures and reports.
package main
