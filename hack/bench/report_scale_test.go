package main

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	cases := []struct {
		in   []time.Duration
		p    float64
		want float64
	}{
		{nil, 50, 0},
		{ms(7), 99, 0.007},
		{ms(5, 1, 3, 2, 4), 50, 0.003},
		{ms(5, 1, 3, 2, 4), 99, 0.005},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 50, 0.010},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 90, 0.018},
	}
	for _, c := range cases {
		if got := percentile(c.in, c.p); got != c.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", c.in, c.p, got, c.want)
		}
	}
}

func TestNewIDs(t *testing.T) {
	id := func(s string) string { return s }
	got := newIDs([]string{"a", "b"}, []string{"b", "c", "a", "d"}, id)
	if strings.Join(got, ",") != "c,d" {
		t.Errorf("newIDs = %v, want [c d]", got)
	}
}

func TestNeverManifest(t *testing.T) {
	var p v1.Pod
	if err := yaml.UnmarshalStrict([]byte(neverManifest("exit-1")), &p); err != nil {
		t.Fatal(err)
	}
	if p.Spec.RestartPolicy != v1.RestartPolicyNever || p.Name != "exit-1" || len(p.Spec.Containers) != 1 {
		t.Errorf("neverManifest: restartPolicy %q, name %q, %d containers", p.Spec.RestartPolicy, p.Name, len(p.Spec.Containers))
	}
}

// TestGoalsTable: the summary shows medians, the worst run, the ratio and whether the goal is met.
func TestGoalsTable(t *testing.T) {
	r := report{machine: machine{kubelet: "v1.37.1"}, scaleSettings: scaleSettings{pods: 100, latencyPods: 2, steady: time.Minute, churnRate: 5}}
	for _, ms := range []int{10, 20, 30} {
		d := time.Duration(ms) * time.Millisecond
		r.scale.add(kindNodelet, scaleResult{latency: []time.Duration{d, 2 * d}, restart: 300 * time.Millisecond})
		r.scale.add(kindKubelet, scaleResult{latency: []time.Duration{50 * d, 60 * d}, restart: 2 * time.Second, restarted: 1})
	}
	got := r.goalsTable()
	for _, want := range []string{
		"| status latency p99 | 40 ms (worst 60) | 1200 ms (worst 1800) | 0.03 | ≤ 50 ms | median only |",
		"| restart (SIGKILL), 100 pods: every status current after | 0.30 s | 2.00 s | 0.15 | ≤ 1 s | yes |",
		"| restart: containers restarted or duplicated | 0 | 1 | 0.00 | 0 | yes |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("goals table lacks %q:\n%s", want, got)
		}
	}
}

// TestGoalsTableIssue16: the one-pod start is held to the kubelet and the raw floor + 50 ms, the
// teardown of goalPods pods (all stopped) to the kubelet, the steady RSS to 0.4 × the kubelet's.
func TestGoalsTableIssue16(t *testing.T) {
	ms := func(v ...int) []agentResult {
		var out []agentResult
		for _, x := range v {
			d := time.Duration(x) * time.Millisecond
			out = append(out, agentResult{ready: d, stopped: 10 * d})
		}
		return out
	}
	r := report{scaleSettings: scaleSettings{pods: 100, latencyPods: 2, steady: time.Minute, churnRate: 5}, rows: []row{
		{pods: 1, nodelet: ms(180, 190, 200), kubelet: ms(190, 200, 210),
			raw: []rawResult{{create: 140 * time.Millisecond}, {create: 150 * time.Millisecond}, {create: 160 * time.Millisecond}}},
		{pods: 30, nodelet: ms(250, 260, 270), kubelet: ms(240, 250, 300), raw: []rawResult{{create: time.Second, teardown: 2 * time.Second}}},
	}}
	for _, x := range []uint64{40, 44, 45} {
		r.scale.add(kindNodelet, scaleResult{steadyMem: memory{rssKiB: x * 1024}})
	}
	for _, x := range []uint64{110, 111, 112} {
		r.scale.add(kindKubelet, scaleResult{steadyMem: memory{rssKiB: x * 1024}})
	}
	got := r.goalsTable()
	for _, want := range []string{
		// 1 pod: worst 0.20 ≤ kubelet's 0.20 and ≤ floor 0.15 + 0.05.
		"| start, 1 pod: Running after | 0.19 s (worst 0.20) | 0.20 s (worst 0.21) | 0.95 | ≤ kubelet, ≤ raw CRI floor + 50 ms | yes |",
		// 30 pods stopped: worst 2.70 > kubelet's median 2.50; the median 2.60 too.
		"| teardown, 30 pods: all stopped after | 2.60 s (worst 2.70) | 2.50 s (worst 3.00) | 1.04 | ≤ kubelet | no |",
		// RSS: 44 ≤ 0.4 × 111 = 44.4 but the worst 45 is not.
		"| steady state, 100 pods: RSS MiB | 44.0 (worst 45.0) | 111.0 (worst 112.0) | 0.40 | ≤ 0.4 × kubelet | median only |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("goals table lacks %q:\n%s", want, got)
		}
	}
}
