package main

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// scaleRuns are the scale sessions of each agent.
type scaleRuns struct{ nodelet, kubelet []scaleResult }

func (s *scaleRuns) add(kind agentKind, r scaleResult) {
	if kind == kindKubelet {
		s.kubelet = append(s.kubelet, r)
	} else {
		s.nodelet = append(s.nodelet, r)
	}
}

func (s scaleRuns) of(kind agentKind) []scaleResult {
	if kind == kindKubelet {
		return s.kubelet
	}
	return s.nodelet
}

// percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of ds, in seconds.
func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[max(rank, 1)-1].Seconds()
}

// agentPart is, for each killed container, the latency less the runtime's part.
func agentPart(x scaleResult) []time.Duration {
	out := make([]time.Duration, 0, len(x.latency))
	for i := range min(len(x.latency), len(x.latencyFloor)) {
		out = append(out, x.latency[i]-x.latencyFloor[i])
	}
	return out
}

func (r scaleResult) summary() string {
	return fmt.Sprintf("status latency p50 %.0f ms p99 %.0f ms (runtime's part p50 %.0f ms p99 %.0f ms); churn RSS %.1f → %.1f MiB; burst %.2f s; "+
		"steady %.2f CPU s, RSS %.1f MiB; restart: current after %.2f s, %d containers and %d sandboxes new; teardown %.2f s",
		1000*percentile(r.latency, 50), 1000*percentile(r.latency, 99),
		1000*percentile(r.latencyFloor, 50), 1000*percentile(r.latencyFloor, 99), mib(r.churnBefore.rssKiB), mib(r.churnAfter.rssKiB),
		secs(r.burst), r.steadyCPU, mib(r.steadyMem.rssKiB), secs(r.restart), r.restarted, r.resandbox, secs(r.teardown))
}

// measure is one line of the summary table: a figure of each run of an agent, summarised as
// the median and the worst run (the largest: for every figure here, more is worse).
type measure struct {
	name  string
	prec  int
	unit  string
	goal  string
	burst func(agentResult) float64 // from the burst runs of burstPods pods (goalPods if 0), or
	scale func(scaleResult) float64 // from the scale sessions
	// burstPods is the pod count of a burst measure; 0 means goalPods.
	burstPods int
	// floor is the raw CRI floor a burst measure compares with; nil means the creation.
	floor  func(rawResult) float64
	met    func(n, k, floor float64) bool
	nodel  []float64 // filled by values
	kubel  []float64
	floors []float64
}

// goalPods is the pod count of the burst-start and teardown goals.
const goalPods = 30

// onePod is the pod count of the one-pod start goal.
const onePod = 1

func (r report) measures() []measure {
	p := r.scaleSettings.pods
	ms := []measure{
		{name: fmt.Sprintf("start, %d pod: Running after", onePod), prec: 2, unit: " s", burstPods: onePod,
			goal: "≤ kubelet, ≤ raw CRI floor + 50 ms", burst: func(x agentResult) float64 { return secs(x.ready) },
			met: func(n, k, f float64) bool { return n <= k && (f == 0 || n <= f+0.05) }},
		{name: fmt.Sprintf("burst start, %d pods: all Running after", goalPods), prec: 2, unit: " s",
			goal: "≤ 0.5 × kubelet, ≤ 1.2 × raw CRI floor", burst: func(x agentResult) float64 { return secs(x.ready) },
			met: func(n, k, f float64) bool { return n <= 0.5*k && (f == 0 || n <= 1.2*f) }},
		{name: fmt.Sprintf("burst start, %d pods: per pod p50", goalPods), prec: 2, unit: " s",
			burst: func(x agentResult) float64 { return percentile(x.perPod, 50) }},
		{name: fmt.Sprintf("burst start, %d pods: per pod p99", goalPods), prec: 2, unit: " s",
			burst: func(x agentResult) float64 { return percentile(x.perPod, 99) }},
		{name: fmt.Sprintf("teardown, %d pods: all stopped after", goalPods), prec: 2, unit: " s", goal: "≤ kubelet",
			burst: func(x agentResult) float64 { return secs(x.stopped) },
			floor: func(x rawResult) float64 { return secs(x.teardown) },
			met:   func(n, k, _ float64) bool { return n <= k }},
	}
	if p == 0 {
		return ms
	}
	return append(ms,
		measure{name: fmt.Sprintf("burst start, %d pods: all Running after", p), prec: 2, unit: " s",
			scale: func(x scaleResult) float64 { return secs(x.burst) }},
		measure{name: fmt.Sprintf("burst start, %d pods: per pod p50", p), prec: 2, unit: " s",
			scale: func(x scaleResult) float64 { return percentile(x.burstPods, 50) }},
		measure{name: fmt.Sprintf("burst start, %d pods: per pod p99", p), prec: 2, unit: " s",
			scale: func(x scaleResult) float64 { return percentile(x.burstPods, 99) }},
		measure{name: "status latency p50: container killed → Terminated in /pods", prec: 0, unit: " ms",
			scale: func(x scaleResult) float64 { return 1000 * percentile(x.latency, 50) }},
		measure{name: "status latency p99", prec: 0, unit: " ms", goal: "≤ 50 ms",
			scale: func(x scaleResult) float64 { return 1000 * percentile(x.latency, 99) },
			met:   func(n, _, _ float64) bool { return n <= 50 }},
		measure{name: "status latency, the runtime's part p50: container killed → containerd's CONTAINER_STOPPED event", prec: 0, unit: " ms",
			scale: func(x scaleResult) float64 { return 1000 * percentile(x.latencyFloor, 50) }},
		measure{name: "status latency, the runtime's part p99", prec: 0, unit: " ms",
			scale: func(x scaleResult) float64 { return 1000 * percentile(x.latencyFloor, 99) }},
		measure{name: "status latency, the agent's part p99: CONTAINER_STOPPED event → Terminated in /pods", prec: 0, unit: " ms",
			scale: func(x scaleResult) float64 { return 1000 * percentile(agentPart(x), 99) }},
		measure{name: fmt.Sprintf("steady state, %d pods: CPU s over %v", p, r.scaleSettings.steady), prec: 2,
			goal: "≤ 0.3 × kubelet", scale: func(x scaleResult) float64 { return x.steadyCPU },
			met: func(n, k, _ float64) bool { return n <= 0.3*k }},
		measure{name: fmt.Sprintf("steady state, %d pods: RSS MiB", p), prec: 1, goal: "≤ 0.4 × kubelet",
			scale: func(x scaleResult) float64 { return mib(x.steadyMem.rssKiB) },
			met:   func(n, k, _ float64) bool { return n <= 0.4*k }},
		measure{name: fmt.Sprintf("steady state, %d pods: of which anonymous (RssAnon) MiB", p), prec: 1,
			scale: func(x scaleResult) float64 { return mib(x.steadyMem.anonKiB) }},
		measure{name: fmt.Sprintf("restart (SIGKILL), %d pods: every status current after", p), prec: 2, unit: " s", goal: "≤ 1 s",
			scale: func(x scaleResult) float64 { return secs(x.restart) },
			met:   func(n, _, _ float64) bool { return n <= 1 }},
		measure{name: "restart: containers restarted or duplicated", prec: 0, goal: "0",
			scale: func(x scaleResult) float64 { return float64(x.restarted) },
			met:   func(n, _, _ float64) bool { return n == 0 }},
		measure{name: "restart: sandboxes recreated or duplicated", prec: 0, goal: "0",
			scale: func(x scaleResult) float64 { return float64(x.resandbox) },
			met:   func(n, _, _ float64) bool { return n == 0 }},
		measure{name: fmt.Sprintf("churn, %d pods at %g/s: RSS MiB before", p, r.scaleSettings.churnRate), prec: 1,
			scale: func(x scaleResult) float64 { return mib(x.churnBefore.rssKiB) }},
		measure{name: "churn: RSS MiB after", prec: 1,
			scale: func(x scaleResult) float64 { return mib(x.churnAfter.rssKiB) }},
		measure{name: "churn: RSS after / before", prec: 2, goal: "≤ 1.10",
			scale: func(x scaleResult) float64 {
				return float64(x.churnAfter.rssKiB) / float64(max(x.churnBefore.rssKiB, 1))
			},
			met: func(n, _, _ float64) bool { return n <= 1.10 }},
		measure{name: "churn: CPU s", prec: 2,
			scale: func(x scaleResult) float64 { return x.churnCPU }},
	)
}

// values fills the measure's figures from the report.
func (m *measure) values(r report) {
	pods, floor := m.burstPods, m.floor
	if pods == 0 {
		pods = goalPods
	}
	if floor == nil {
		floor = func(x rawResult) float64 { return secs(x.create) }
	}
	for _, w := range r.rows {
		if m.burst == nil || w.pods != pods {
			continue
		}
		m.nodel, m.kubel = collect(w.nodelet, m.burst), collect(w.kubelet, m.burst)
		m.floors = collect(w.raw, floor)
	}
	if m.scale != nil {
		m.nodel, m.kubel = collect(r.scale.nodelet, m.scale), collect(r.scale.kubelet, m.scale)
	}
}

// medianWorst formats "1.23 s (worst 1.40)".
func medianWorst(vals []float64, prec int, unit string) string {
	if len(vals) == 0 {
		return "–"
	}
	s := spreadOf(vals)
	v := fmt.Sprintf("%.*f%s", prec, s.median, unit)
	if w := fmt.Sprintf("%.*f", prec, s.max); w != fmt.Sprintf("%.*f", prec, s.median) {
		v += " (worst " + w + ")"
	}
	return v
}

// goalsTable is the summary: each measure's median and worst run for both agents, the ratio of
// the medians, and the goal with whether nodelet's worst run meets it.
func (r report) goalsTable() string {
	var b strings.Builder
	b.WriteString("| Measure | nodelet | kubelet | nodelet/kubelet | goal | met |\n|:---|---:|---:|---:|:---|:---|\n")
	for _, m := range r.measures() {
		m.values(r)
		if len(m.nodel) == 0 {
			continue
		}
		n, k := spreadOf(m.nodel), spreadOf(m.kubel)
		met := ""
		if m.met != nil {
			f := 0.0
			if len(m.floors) > 0 {
				f = spreadOf(m.floors).median
			}
			met = "no"
			if m.met(n.max, k.median, f) {
				met = "yes"
			} else if m.met(n.median, k.median, f) {
				met = "median only"
			}
			if len(m.kubel) == 0 && strings.Contains(m.goal, "kubelet") {
				met = "–"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", m.name, medianWorst(m.nodel, m.prec, m.unit),
			medianWorst(m.kubel, m.prec, m.unit), ratio(n.median, k.median), m.goal, met)
	}
	return b.String()
}

// scaleRunsTable lists every scale session.
func (r report) scaleRunsTable() string {
	var b strings.Builder
	b.WriteString("| Run | Agent | latency p50 / p99 ms | runtime's part p50 / p99 ms | churn RSS before → after MiB | churn CPU s | churn: all removed after | " +
		"burst all Running | burst CPU s | steady CPU s | steady RSS / anon MiB | restart: current after | new containers / sandboxes | restart CPU s | teardown |\n")
	b.WriteString("|---:|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i := range max(len(r.scale.nodelet), len(r.scale.kubelet)) {
		for _, kind := range []agentKind{kindNodelet, kindKubelet} {
			runs := r.scale.of(kind)
			if i >= len(runs) {
				continue
			}
			x := runs[i]
			fmt.Fprintf(&b, "| %d | %s | %.0f / %.0f | %.0f / %.0f | %.1f → %.1f | %.2f | %.1f s | %.2f s | %.2f | %.2f | %.1f / %.1f | %.2f s | %d / %d | %.2f | %.2f s |\n",
				i+1, kind, 1000*percentile(x.latency, 50), 1000*percentile(x.latency, 99),
				1000*percentile(x.latencyFloor, 50), 1000*percentile(x.latencyFloor, 99),
				mib(x.churnBefore.rssKiB), mib(x.churnAfter.rssKiB), x.churnCPU, secs(x.churnGone),
				secs(x.burst), x.burstCPU, x.steadyCPU, mib(x.steadyMem.rssKiB), mib(x.steadyMem.anonKiB),
				secs(x.restart), x.restarted, x.resandbox, x.restartCPU, secs(x.teardown))
		}
	}
	return b.String()
}
