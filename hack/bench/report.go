package main

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// makeBenchCommand is what the Makefile's bench target runs.
const makeBenchCommand = "go run ./hack/bench --pods 1,30 --scale 100 --runs 3 --out docs/benchmarks.md"

// row is every run of one pod count.
type row struct {
	pods    int
	nodelet []agentResult
	kubelet []agentResult // empty when the kubelet is not measured
	raw     []rawResult
}

// report is everything the results page shows.
type report struct {
	command       string
	date          time.Time
	machine       machine
	runs          int
	loadStart     string // 1-minute load averages at the start and the end
	loadEnd       string
	rows          []row
	scale         scaleRuns
	scaleSettings scaleSettings
	waits         []*waitRecord
	interruptions []string
	notes         []string
}

func secs(d time.Duration) float64 { return d.Seconds() }

// column is one column of a summary table: its header and its cell in a row.
type column struct {
	head string
	cell func(row) string
}

// table renders a Markdown table with one line per row, every column right-aligned.
func table(cols []column, rows []row) string {
	var b strings.Builder
	b.WriteString("| Pods |")
	for _, c := range cols {
		b.WriteString(" " + c.head + " |")
	}
	b.WriteString("\n|---:|" + strings.Repeat("---:|", len(cols)) + "\n")
	for _, w := range rows {
		fmt.Fprintf(&b, "| %d |", w.pods)
		for _, c := range cols {
			b.WriteString(" " + c.cell(w) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// metric is one figure of an agent's run.
type metric struct {
	name string // "all Running after"
	prec int
	unit string
	of   func(agentResult) float64
}

var (
	readyMetric    = metric{"all Running after", 2, " s", func(x agentResult) float64 { return secs(x.ready) }}
	cpuMetric      = metric{"CPU s", 2, "", func(x agentResult) float64 { return x.cpu }}
	rssMetric      = metric{"peak RSS MiB", 1, "", func(x agentResult) float64 { return mib(x.mem.peakKiB) }}
	teardownMetric = metric{"teardown", 2, " s", func(x agentResult) float64 { return secs(x.teardown) }}
	stoppedMetric  = metric{"all stopped after", 2, " s", func(x agentResult) float64 { return secs(x.stopped) }}
)

// agentColumn is a metric of nodelet's or the kubelet's runs: median, min–max.
func agentColumn(kind agentKind, head string, m metric) column {
	return column{head, func(w row) string {
		return spreadOf(collect(w.agent(kind), m.of)).cell(m.prec, m.unit)
	}}
}

// ratioColumn is nodelet's median over the kubelet's.
func ratioColumn(m metric) column {
	return column{"nodelet/kubelet", func(w row) string {
		return ratio(spreadOf(collect(w.nodelet, m.of)).median, spreadOf(collect(w.kubelet, m.of)).median)
	}}
}

func rawColumn(head string, of func(rawResult) float64) column {
	return column{head, func(w row) string { return spreadOf(collect(w.raw, of)).cell(2, " s") }}
}

func (w row) agent(kind agentKind) []agentResult {
	if kind == kindKubelet {
		return w.kubelet
	}
	return w.nodelet
}

// ratio formats a/b as "0.42", or "–" when b is zero (nothing to compare with).
func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func (r report) withKubelet() bool { return r.machine.kubelet != "" }

// resultsTable is the summary of the burst start: the medians of the runs, and min–max.
func (r report) resultsTable() string {
	var cols []column
	for _, m := range []metric{readyMetric, cpuMetric, rssMetric} {
		cols = append(cols, agentColumn(kindNodelet, "nodelet: "+m.name, m))
		if r.withKubelet() {
			cols = append(cols, agentColumn(kindKubelet, "kubelet: "+m.name, m), ratioColumn(m))
		}
	}
	cols = append(cols, rawColumn("raw CRI floor: create", func(x rawResult) float64 { return secs(x.create) }))
	return table(cols, r.rows)
}

// teardownTable is the summary of the teardown.
func (r report) teardownTable() string {
	cols := []column{agentColumn(kindNodelet, "nodelet: all stopped after", stoppedMetric),
		agentColumn(kindNodelet, "nodelet: all removed after", teardownMetric)}
	if r.withKubelet() {
		cols = append(cols, agentColumn(kindKubelet, "kubelet: all stopped after", stoppedMetric), ratioColumn(stoppedMetric))
	}
	cols = append(cols, rawColumn("raw CRI floor: teardown", func(x rawResult) float64 { return secs(x.teardown) }))
	return table(cols, r.rows)
}

// runsTable lists every run, with the figures the summary leaves out.
func (r report) runsTable() string {
	var b strings.Builder
	b.WriteString("| Pods | Run | Agent | all Running after | CPU s | start-up CPU s | peak RSS MiB | RSS at end MiB | steady CPU ms/s | all stopped after | teardown | teardown CPU s |\n")
	b.WriteString("|---:|---:|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, w := range r.rows {
		for i, y := range w.raw {
			for _, kind := range []agentKind{kindNodelet, kindKubelet} {
				if runs := w.agent(kind); i < len(runs) {
					x := runs[i]
					fmt.Fprintf(&b, "| %d | %d | %s | %.2f s | %.2f | %.2f | %.1f | %.1f | %.0f | %.2f s | %.2f s | %.2f |\n",
						w.pods, i+1, kind, secs(x.ready), x.cpu, x.startupCPU, mib(x.mem.peakKiB), mib(x.mem.rssKiB),
						x.steadyCPU*1000, secs(x.stopped), secs(x.teardown), x.teardownCPU)
				}
			}
			fmt.Fprintf(&b, "| %d | %d | raw CRI floor | %.2f s | – | – | – | – | – | – | %.2f s | – |\n",
				w.pods, i+1, secs(y.create), secs(y.teardown))
		}
	}
	return b.String()
}

// resultsSection is what the bench prints: how and where it ran, the tables and what happened.
func (r report) resultsSection() string {
	var b strings.Builder
	m := r.machine
	b.WriteString("## Results\n\n")
	how := "as root, from the repository"
	if r.command == makeBenchCommand {
		how += "; `make bench` runs exactly this"
	}
	fmt.Fprintf(&b, "- Command: `%s` (%s)\n", r.command, how)
	fmt.Fprintf(&b, "- Date: %s\n", r.date.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- Machine: %d CPUs (`nproc`), %s, %s RAM; %s, kernel %s\n", m.cpus, m.cpuModel, m.memory, m.os, m.kernel)
	fmt.Fprintf(&b, "- Runtime: %s, %s, bridge CNI, from `hack/testenv.sh up`\n", m.runtime, m.runc)
	fmt.Fprintf(&b, "- nodelet: commit %s, built with %s\n", m.nodeletRev, m.goVersion)
	if r.withKubelet() {
		fmt.Fprintf(&b, "- Upstream kubelet: %s (built by `hack/cluster.sh build` from the Go module proxy)\n", m.kubelet)
	}
	fmt.Fprintf(&b, "- Load average (1 min, other work on the machine shows here): %s at the start, %s at the end\n\n",
		r.loadStart, r.loadEnd)
	fmt.Fprintf(&b, "Median of %d runs, min–max in parentheses", r.runs)
	order := "nodelet, raw CRI floor"
	if r.withKubelet() {
		b.WriteString("; nodelet/kubelet is the ratio of the medians")
		order = "nodelet, kubelet, raw CRI floor"
	}
	b.WriteString(".\n\n")
	b.WriteString("Summary: each measure's median over the runs and its worst run; \"met\" tells whether nodelet's worst run " +
		"(\"median only\": its median) meets its goal (issue 7's; issue 16's for the one-pod start, the teardown and the steady RSS).\n\n")
	b.WriteString(r.goalsTable())
	b.WriteString("\nBurst start: N static pods written at once, until all are Running and Ready.\n\n")
	b.WriteString(r.resultsTable())
	b.WriteString("\nTeardown: the N manifests removed at once.\n\n")
	b.WriteString(r.teardownTable())
	fmt.Fprintf(&b, "\nEvery run (in this order: %s):\n\n", order)
	b.WriteString(r.runsTable())
	if len(r.scale.nodelet) > 0 {
		fmt.Fprintf(&b, "\nEvery scale session (%d pods, in this order: status latency with %d pods, churn, burst, "+
			"steady state over %v, restart, teardown):\n\n", r.scaleSettings.pods, r.scaleSettings.latencyPods, r.scaleSettings.steady)
		b.WriteString(r.scaleRunsTable())
	}
	if len(r.waits) > 0 || len(r.interruptions) > 0 || len(r.notes) > 0 {
		b.WriteString("\nDuring this measurement:\n\n")
	}
	for _, w := range r.waits {
		var names []string
		for _, p := range w.others {
			names = append(names, p.short())
		}
		fmt.Fprintf(&b, "- The bench waited %v for another agent (%s) to exit before the %s.\n",
			w.waited.Round(time.Second), strings.Join(names, "; "), w.before)
	}
	for _, s := range r.interruptions {
		fmt.Fprintf(&b, "- %s.\n", s)
	}
	for _, s := range r.notes {
		fmt.Fprintf(&b, "- %s.\n", s)
	}
	return b.String()
}

// handWritten marks the start of the page's hand-written part (the profiles and what was
// changed because of them), which the bench keeps when it rewrites the page.
const handWritten = "<!-- Hand-written from here on: make bench keeps it when it rewrites the page. -->"

// keepHandWritten returns the hand-written part of the page at path, from handWritten on, or
// "" when there is none.
func keepHandWritten(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if i := strings.Index(string(b), handWritten); i >= 0 {
		return "\n" + string(b[i:])
	}
	return ""
}

// markdown is the whole results page.
func (r report) markdown() string {
	return "# nodelet benchmarks\n\n" +
		"Measured by [`hack/bench`](../hack/bench) on real parts — containerd, runc and the bridge CNI\n" +
		"plugin of `hack/testenv.sh` — with the nodelet binary built from this tree, next to the upstream\n" +
		"kubelet " + kubeletVersion + " on the same runtime, machine and manifests, and the raw CRI floor.\n" +
		"`make bench` reruns it and rewrites this page.\n\n" +
		r.resultsSection() + "\n" + prose
}

// prose explains the columns; it is part of the page the bench writes. A raw string cannot
// hold a backquote, so it is written as ~ here.
var prose = strings.NewReplacer("~", "\x60", "KUBELET_VERSION", kubeletVersion).Replace(`## What is measured

Before every run, and before the burst and the restart of a scale session, the bench waits
until the machine is idle (85% of its CPU time idle over two seconds in a row, at most two
minutes): after a teardown containerd goes on removing snapshots in the background, and a run
starting meanwhile would pay for its predecessor's clean-up.

Each run starts a fresh agent — nodelet, then the upstream kubelet — with its own manifest
directory, root directory, pod logs directory, node name and read-only port
(~fileCheckFrequency~ 20 s for both, so the manifests are seen through inotify), waits until
~GET /pods~ answers and then until the agent is quiet (at most 20 ms of CPU over the last
second; at most 20 s), so that neither agent's start-up work is counted as pod work. The pods are N busybox sleepers:
~busybox:1.35~, ~imagePullPolicy: IfNotPresent~, pod network,
~terminationGracePeriodSeconds: 2~, a shell that traps SIGTERM and exits at once (it waits on
a background ~sleep~: a shell runs its trap only between commands, and a foreground ~sleep 1~
would add up to a second to every stop). The image is in the runtime before the first run, so
no run pulls it. Both agents read the same manifests; each run has its own node name, so its
static pods have their own names and UIDs.

- **all Running after** — wall time from putting the first of the N manifests in place (all N
  are written beforehand and renamed into the manifest directory in one go) until the agent's
  ~/pods~ lists all N pods with phase Running and condition Ready. It covers the file source,
  the pod workers, sandbox creation (pause container and CNI), container creation and start in
  containerd and runc, and the agent noticing the started containers and updating the status.
  ~/pods~ is read every 10 ms (with more than 5 pods, every 2 ms per pod: 60 ms with 30, 200 ms
  with 100, as each read costs the agent a copy and an encoding of every pod), so a time may be
  up to one read late. "per pod p50/p99" are the percentiles of the times at which each pod was
  first seen Running and Ready.
- **CPU s** — user + system CPU time of the agent's process (every thread), from
  ~/proc/<pid>/stat~ at ~CLK_TCK~ resolution (10 ms), over that same window. It includes
  serving the bench's ~/pods~ reads and excludes start-up (the start-up CPU
  column of the per-run table: from exec until the agent was quiet).
- **peak RSS MiB** — ~VmHWM~ of ~/proc/<pid>/status~ at the end of the window: the largest
  resident set since the agent started, start-up included. "RSS at end" is ~VmRSS~ at the same
  moment.
- **nodelet/kubelet** — nodelet's median divided by the kubelet's: below 1, nodelet is faster or
  smaller.
- **steady CPU ms/s** (per run) — the agent's CPU use per second over 5 s once every pod runs,
  with no ~/pods~ reads: what N idle pods cost it (relisting, housekeeping, the kubelet's
  cAdvisor). At 10 ms resolution over 5 s, its step is 2 ms/s.
- **teardown** — wall time from removing the manifests (all at once) until ~/pods~ is empty,
  no mount is left below the agent's root directory and none of the node's sandboxes is ready
  (**all stopped after**), and, for nodelet, until the runtime lists no sandbox of the node's
  pods (**all removed after**). The kubelet removes stopped sandboxes and containers only in
  its container GC, once a minute, so it is compared on "all stopped after". The bench checks
  as often as it reads ~/pods~ for the start. "teardown CPU s" is the
  agent's CPU time meanwhile. The agent is then stopped with SIGTERM, and the bench removes
  whatever is left through CRI.
- **raw CRI floor** — the same N pods created by the bench itself through ~internal/cri~,
  with the agents' concurrency: one goroutine per pod runs RunPodSandbox, CreateContainer and
  StartContainer, all pods at once, timed until the last StartContainer returns; then, again
  all at once, StopContainer (2 s), StopPodSandbox and RemovePodSandbox. The sandboxes and
  containers have the same image, command, namespaces, cgroup parent and log directory as
  nodelet's. This is what the runtime costs a client that does nothing else: no status reads,
  no readiness, no volumes, no managed ~/etc/hosts~.

### The scale session

After the burst runs, each run starts a fresh agent once more (quiet first, as above) and
measures, in this order:

1. **status latency** — 20 pods with ~restartPolicy: Never~ are started; then, one after the
   other, the bench kills the container's process with SIGKILL (its PID from containerd's
   verbose ~ContainerStatus~) and reads ~/pods~ every 5 ms until it shows the container
   Terminated: the latency, reported as p50 and p99 of the 20. The bench also follows the
   runtime's CRI event stream (containerd 2 sends every event to every subscriber) and notes
   when containerd announced ~CONTAINER_STOPPED_EVENT~: the runtime's part, which no agent can
   beat — until then, ~ContainerStatus~ says the container runs. The agent's part is the
   difference, per container. The pods are then removed.
2. **churn** — 100 pods created at 5 a second (one manifest put in place every 200 ms), then
   deleted at 5 a second, the first deletion 200 ms after the last creation (each pod lives
   about 20 s): the shape of the upstream node-throughput test. The churn ends when ~/pods~
   is empty and the runtime has no sandbox of the node left — for the kubelet, once its
   container GC (every minute) has removed them, so that what it holds for dead pods is
   released before "after" is read. RSS before is read just before the first creation; RSS
   after once the agent is quiet again.
3. **burst** — 100 pods written at once, until all are Running and Ready (with per-pod
   times, as for the burst runs).
4. **steady state** — the agent is left alone for 60 s with the 100 pods running, no ~/pods~
   read: its CPU seconds over the window and its RSS at the end (and the anonymous part of
   it, ~RssAnon~: heap and stacks; the rest is mostly pages of the agent's own binary it has
   touched, clean and shared with the page cache).
5. **restart** — the bench kills the agent with SIGKILL and starts it again at once with the
   same flags, directories and node name; "every status current after" is the time from the
   new process's start until ~/pods~ shows all 100 pods Running and Ready, each with the
   container ID that ran before the kill. Once the agent is quiet, the bench counts the
   node's containers and sandboxes the runtime has that it did not have before the kill:
   containers restarted (or duplicated) and sandboxes recreated.
6. **teardown** of the 100 pods, as above.

## How the upstream kubelet runs

The kubelet KUBELET_VERSION is built once by ~hack/cluster.sh build~ from the wrapper module
~hack/controlplane/k8s~ (Go module proxy) and cached in ~/var/cache/nodelet/k8s-<hash>~; the
bench runs that build, which returns at once when the binary is there. It runs standalone:
no ~--kubeconfig~, static pods only, with ~--config~, ~--root-dir~, ~--cert-dir~ (its
self-signed serving certificate; the default is ~/var/lib/kubelet/pki~ whatever the root
directory) and ~--hostname-override~. Its KubeletConfiguration, besides the directories, the
runtime endpoint and the read-only port:

- ~cgroupDriver: cgroupfs~ and ~failCgroupV1: false~: this machine has cgroup v1, on which
  the kubelet refuses to start by default; ~failSwapOn: false~.
- ~cgroupsPerQOS: true~, ~enforceNodeAllocatable: [pods]~ (the defaults) under a cgroup root
  of its own, ~/nodelet-bench-<id>~, which the bench creates in every hierarchy (the kubelet
  requires it to exist) and removes afterwards: the kubelet sets CPU shares and limits on its
  ~kubepods~ and QoS cgroups, which must not change the ~/kubepods~ nodelet runs its pods in.
  Its pods' cgroups are ~/nodelet-bench-<id>/kubepods/besteffort/pod<uid>~, one level deeper
  than nodelet's.
- ~enableServer: false~ and ~healthzPort: 0~: only the read-only port listens, on 127.0.0.1.
  Authentication (anonymous and webhook off) and authorization (~AlwaysAllow~) must still be
  set: the kubelet builds them at start-up, and the webhook defaults need an API server.
- ~evictionHard~ at 1% of disk and inodes and 1 MiB of memory, so that the shared, well-filled
  disk never makes it evict; ~imageGCHighThresholdPercent: 100~ turns image garbage collection
  off, so that it never removes the test images.
- ~makeIPTablesUtilChains: false~ (no ~KUBE-IPTABLES-HINT~, ~KUBE-FIREWALL~ or canary chains)
  and ~volumePluginDir~ inside the run's directory (not ~/usr/libexec/kubernetes~).
- Everything else is upstream's default: ~oomScoreAdj: -999~ (it fails without
  CAP_SYS_RESOURCE, which the kubelet logs and ignores), the generic PLEG relisting once a
  second (nodelet's default is its evented PLEG), ~protectKernelDefaults: false~.

Some changes no setting prevents, and the bench undoes them after every kubelet run: the
sysctls ~vm.overcommit_memory~, ~kernel.panic~ and ~kernel.panic_on_oops~ (and three others,
if they differ) the kubelet sets at start (~protectKernelDefaults: true~ would make it refuse
to start instead) are put back; its device plugin socket ~/var/lib/kubelet/device-plugins/kubelet.sock~
(a fixed path) and its container log links in ~/var/log/containers~ are removed, with the
directories it created for them; the bind mount it makes of its root directory (to make it a
shared mount) is unmounted; its cgroup root is removed with everything below.

## What is not measured

- No threshold is asserted anywhere: the bench reports numbers, it passes or fails nothing.
  It exits non-zero only when a run cannot be completed.
- The raw floor has the agents' concurrency but none of their work: it is a reference point,
  not a strict lower bound (the runtime's own scheduling varies from run to run).
- containerd, shim and runc CPU and memory are not in the agents' columns (they are part of
  every wall-time measurement).
- Image pulls, probes, container restarts, volumes and cluster mode (an API server) are not
  exercised.
- The machine is shared: before each run the bench waits until no other agent (nodelet,
  kubelet, or e2e test binary, which starts one nodelet after the other) has used the runtime
  for 3 s, and it repeats a run another agent starts during; it does not control other load
  (builds, tests). Three runs give a spread, not a distribution: compare numbers measured on
  one machine.
`)
