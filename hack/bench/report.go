package main

import (
	"fmt"
	"strings"
	"time"
)

// makeBenchCommand is what the Makefile's bench target runs.
const makeBenchCommand = "go run ./hack/bench --pods 1,30 --runs 3 --out docs/benchmarks.md"

// row is every run of one pod count.
type row struct {
	pods    int
	nodelet []nodeletResult
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
	waits         []*waitRecord
	interruptions []string
	notes         []string
}

func secs(d time.Duration) float64 { return d.Seconds() }

// resultsTable is the summary: the median of the runs, and min–max.
func (r report) resultsTable() string {
	var b strings.Builder
	b.WriteString("| Pods | nodelet: all Running after | nodelet CPU s | nodelet peak RSS MiB | teardown | raw CRI floor: create | raw CRI floor: teardown |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, w := range r.rows {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s |\n", w.pods,
			spreadOf(collect(w.nodelet, func(x nodeletResult) float64 { return secs(x.ready) })).cell(2, " s"),
			spreadOf(collect(w.nodelet, func(x nodeletResult) float64 { return x.cpu })).cell(2, ""),
			spreadOf(collect(w.nodelet, func(x nodeletResult) float64 { return mib(x.mem.peakKiB) })).cell(1, ""),
			spreadOf(collect(w.nodelet, func(x nodeletResult) float64 { return secs(x.teardown) })).cell(2, " s"),
			spreadOf(collect(w.raw, func(x rawResult) float64 { return secs(x.create) })).cell(2, " s"),
			spreadOf(collect(w.raw, func(x rawResult) float64 { return secs(x.teardown) })).cell(2, " s"))
	}
	return b.String()
}

// runsTable lists every run, with the figures the summary leaves out.
func (r report) runsTable() string {
	var b strings.Builder
	b.WriteString("| Pods | Run | all Running after | CPU s | start-up CPU s | peak RSS MiB | RSS at end MiB | steady CPU ms/s | teardown | teardown CPU s | raw create | raw teardown |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, w := range r.rows {
		for i, x := range w.nodelet {
			y := w.raw[i]
			fmt.Fprintf(&b, "| %d | %d | %.2f s | %.2f | %.2f | %.1f | %.1f | %.0f | %.2f s | %.2f | %.2f s | %.2f s |\n",
				w.pods, i+1, secs(x.ready), x.cpu, x.startupCPU, mib(x.mem.peakKiB), mib(x.mem.rssKiB),
				x.steadyCPU*1000, secs(x.teardown), x.teardownCPU, secs(y.create), secs(y.teardown))
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
	fmt.Fprintf(&b, "- Load average (1 min, other work on the machine shows here): %s at the start, %s at the end\n\n",
		r.loadStart, r.loadEnd)
	fmt.Fprintf(&b, "Median of %d runs, min–max in parentheses.\n\n", r.runs)
	b.WriteString(r.resultsTable())
	b.WriteString("\nEvery run (each nodelet run was followed by the raw CRI run on the same line):\n\n")
	b.WriteString(r.runsTable())
	if len(r.waits) > 0 || len(r.interruptions) > 0 || len(r.notes) > 0 {
		b.WriteString("\nDuring this measurement:\n\n")
	}
	for _, w := range r.waits {
		var names []string
		for _, p := range w.others {
			names = append(names, p.short())
		}
		fmt.Fprintf(&b, "- The bench waited %v for another nodelet (%s) to exit before the %s.\n",
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

// markdown is the whole results page.
func (r report) markdown() string {
	return "# nodelet benchmarks\n\n" +
		"Measured by [`hack/bench`](../hack/bench) on real parts — containerd, runc and the bridge CNI\n" +
		"plugin of `hack/testenv.sh` — with the nodelet binary built from this tree. `make bench`\n" +
		"reruns it and rewrites this page.\n\n" +
		r.resultsSection() + "\n" + prose
}

// prose explains the columns; it is part of the page the bench writes. A raw string cannot
// hold a backquote, so it is written as ~ here.
var prose = strings.ReplaceAll(`## What is measured

Each run starts a fresh nodelet (its own manifest directory, root directory, pod logs
directory, node name and read-only port; ~--file-check-frequency 20s~, so the manifests are
seen through fsnotify) and waits until ~GET /pods~ answers. The pods are N busybox sleepers:
~busybox:1.35~, ~imagePullPolicy: IfNotPresent~, pod network,
~terminationGracePeriodSeconds: 2~, a shell that traps SIGTERM and exits at once (it waits on
a background ~sleep~: a shell runs its trap only between commands, and a foreground ~sleep 1~
would add up to a second to every stop). The image is in the runtime before the first run, so
no run pulls it.

- **nodelet: all Running after** — wall time from putting the first of the N manifests in
  place (all N are written beforehand and renamed into the manifest directory in one go) until
  ~/pods~ lists all N pods with phase Running and condition Ready. It covers the file source,
  the pod workers, sandbox creation (pause container and CNI), container creation and start in
  containerd and runc, and nodelet noticing the started containers and updating the status.
  nodelet notices them on its PLEG relist, once a second as upstream, and the bench writes the
  manifests right after nodelet answers, at about the same phase of that tick in every run: so
  these times come out close to whole seconds. ~/pods~ is read every 50 ms, so a time may be
  up to one read late.
- **nodelet CPU s** — user + system CPU time of the nodelet process (every thread), from
  ~/proc/<pid>/stat~ at ~CLK_TCK~ resolution (10 ms), over that same window. It includes
  serving the bench's ~/pods~ reads (20 a second) and excludes start-up (the start-up CPU
  column of the per-run table: from exec until ~/pods~ answers).
- **nodelet peak RSS MiB** — ~VmHWM~ of ~/proc/<pid>/status~ at the end of the window: the
  largest resident set since nodelet started. "RSS at end" is ~VmRSS~ at the same moment.
- **steady CPU ms/s** (per run) — nodelet's CPU use per second over 5 s once every pod runs,
  with no ~/pods~ reads: what N idle pods cost it (relisting, housekeeping). At 10 ms
  resolution over 5 s, its step is 2 ms/s.
- **teardown** — wall time from removing the manifests (all at once) until ~/pods~ is empty,
  the runtime lists no sandbox of the node's pods and no mount is left under nodelet's root
  directory; "teardown CPU s" is nodelet's CPU time meanwhile. nodelet is then stopped with
  SIGTERM.
- **raw CRI floor** — the same N pods created by the bench itself through ~internal/cri~:
  RunPodSandbox, CreateContainer and StartContainer for one pod after the other, timed until
  the last StartContainer returns; then StopContainer (2 s), StopPodSandbox and
  RemovePodSandbox for one pod after the other. The sandboxes and containers have the same
  image, command, namespaces, cgroup parent and log directory as nodelet's. This is what the
  runtime costs a client that does nothing else: no status reads, no readiness, no volumes, no
  managed ~/etc/hosts~.

## What is not measured

- No threshold is asserted anywhere: the bench reports numbers, it passes or fails nothing.
  It exits non-zero only when a run cannot be completed.
- The raw floor is sequential, one client call after the other; nodelet works on pods in
  parallel, so with many pods it can come close to, or under, the floor's times. The floor is
  a reference point, not a strict lower bound.
- containerd, shim and runc CPU and memory are not in the nodelet columns (they are part of
  both wall-time measurements). The upstream kubelet is not measured here.
- Image pulls, probes, restarts, volumes and cluster mode (an API server) are not exercised.
- The machine is shared: before each run the bench waits until no other nodelet (and no e2e
  test binary, which starts one nodelet after the other) has used the runtime for 3 s, and it
  repeats a run another nodelet starts during; it does not control other load (builds, tests).
  Three runs give a spread, not a distribution: compare numbers measured on one machine.
`, "~", "\x60")
