package main

import (
	"strings"
	"testing"
	"time"
)

func TestRatio(t *testing.T) {
	for _, tc := range []struct {
		a, b float64
		want string
	}{
		{1, 4, "0.25"},
		{3.01, 1, "3.01"},
		{0, 2, "0.00"},
		{1, 0, "–"},
	} {
		if got := ratio(tc.a, tc.b); got != tc.want {
			t.Errorf("ratio(%v, %v) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestResultsTable(t *testing.T) {
	run := func(ready time.Duration, cpu float64, peakMiB uint64) agentResult {
		return agentResult{ready: ready, cpu: cpu, mem: memory{peakKiB: peakMiB * 1024}}
	}
	r := report{machine: machine{kubelet: "Kubernetes v1.37.1"}, rows: []row{{
		pods:    30,
		nodelet: []agentResult{run(4*time.Second, 0.4, 30), run(5*time.Second, 0.5, 31)},
		kubelet: []agentResult{run(8*time.Second, 2, 100), run(10*time.Second, 3, 110)},
		raw:     []rawResult{{create: 6 * time.Second}, {create: 7 * time.Second}},
	}}}
	want := "| Pods | nodelet: all Running after | kubelet: all Running after | nodelet/kubelet | nodelet: CPU s | kubelet: CPU s | nodelet/kubelet | nodelet: peak RSS MiB | kubelet: peak RSS MiB | nodelet/kubelet | raw CRI floor: create |\n" +
		"|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n" +
		"| 30 | 4.50 s (4.00–5.00) | 9.00 s (8.00–10.00) | 0.50 | 0.45 (0.40–0.50) | 2.50 (2.00–3.00) | 0.18 | 30.5 (30.0–31.0) | 105.0 (100.0–110.0) | 0.29 | 6.50 s (6.00–7.00) |\n"
	if got := r.resultsTable(); got != want {
		t.Errorf("resultsTable:\n%s\nwant:\n%s", got, want)
	}
	r.machine.kubelet, r.rows[0].kubelet = "", nil
	if got := r.resultsTable(); strings.Contains(got, "kubelet") || !strings.HasPrefix(got, "| Pods | nodelet: all Running after | nodelet: CPU s |") {
		t.Errorf("resultsTable without the kubelet:\n%s", got)
	}
	if got := r.runsTable(); strings.Count(got, "\n") != 2+2*2 {
		t.Errorf("runsTable without the kubelet has %d lines, want 6:\n%s", strings.Count(got, "\n"), got)
	}
}
