package stats

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

type fakeSource struct {
	summary *statsapi.Summary
	err     error
}

func (f fakeSource) CPUAndMemorySummary(context.Context) (*statsapi.Summary, error) {
	return f.summary, f.err
}

var _ CPUAndMemorySource = fakeSource{}

func TestResourceMetricsCollector(t *testing.T) {
	// 2021-06-23 05:11:18.302091597 +0800, upstream's test timestamp: samples carry milliseconds.
	ts := metav1.NewTime(time.Unix(0, 1624396278302091597))
	swapTS := metav1.NewTime(ts.Add(10 * time.Second))
	tests := []struct {
		name    string
		src     fakeSource
		metrics []string
		want    string
	}{
		{
			name: "error getting the summary",
			src:  fakeSource{err: errors.New("no summary")},
			want: `
# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 1
`,
		},
		{
			name: "node",
			src: fakeSource{summary: &statsapi.Summary{Node: statsapi.NodeStats{
				CPU:    &statsapi.CPUStats{Time: ts, UsageCoreNanoSeconds: u64(10000000000)},
				Memory: &statsapi.MemoryStats{Time: ts, WorkingSetBytes: u64(1000)},
				Swap:   &statsapi.SwapStats{Time: swapTS, SwapUsageBytes: u64(500)},
			}}},
			want: `
# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 10 1624396278302
# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 1000 1624396278302
# HELP node_swap_usage_bytes [ALPHA] Current swap usage of the node in bytes. Reported only on non-windows systems
# TYPE node_swap_usage_bytes gauge
node_swap_usage_bytes 500 1624396288302
# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 0
`,
		},
		{
			name: "pods and containers",
			src: fakeSource{summary: &statsapi.Summary{Pods: []statsapi.PodStats{
				{
					PodRef: statsapi.PodReference{Name: "pod_a", Namespace: "namespace_a"},
					CPU:    &statsapi.CPUStats{Time: ts, UsageCoreNanoSeconds: u64(10000000000)},
					Memory: &statsapi.MemoryStats{Time: ts, WorkingSetBytes: u64(1000)},
					Swap:   &statsapi.SwapStats{Time: swapTS, SwapUsageBytes: u64(5000)},
					Containers: []statsapi.ContainerStats{
						{
							Name: "container_a", StartTime: metav1.NewTime(ts.Add(-time.Hour)),
							CPU:    &statsapi.CPUStats{Time: ts, UsageCoreNanoSeconds: u64(2000000000)},
							Memory: &statsapi.MemoryStats{Time: ts, WorkingSetBytes: u64(1000)},
							Swap:   &statsapi.SwapStats{Time: swapTS, SwapUsageBytes: u64(1000), SwapAvailableBytes: u64(9000)},
						},
						{
							// No start time, no readings: only what is there is exported.
							Name: "container_b",
							CPU:  &statsapi.CPUStats{Time: ts},
						},
					},
				},
				{PodRef: statsapi.PodReference{Name: "pod_b", Namespace: "namespace_b"}},
			}}},
			metrics: []string{"container_cpu_usage_seconds_total", "container_memory_working_set_bytes", "container_swap_usage_bytes",
				"container_swap_limit_bytes", "container_start_time_seconds", "pod_cpu_usage_seconds_total", "pod_memory_working_set_bytes",
				"pod_swap_usage_bytes"},
			want: `
# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="container_a",namespace="namespace_a",pod="pod_a"} 2 1624396278302
# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="container_a",namespace="namespace_a",pod="pod_a"} 1000 1624396278302
# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="container_a",namespace="namespace_a",pod="pod_a"} 1.6243926783020916e+09
# HELP container_swap_limit_bytes [ALPHA] Current amount of the container swap limit in bytes. Reported only on non-windows systems
# TYPE container_swap_limit_bytes gauge
container_swap_limit_bytes{container="container_a",namespace="namespace_a",pod="pod_a"} 10000 1624396288302
# HELP container_swap_usage_bytes [ALPHA] Current amount of the container swap usage in bytes. Reported only on non-windows systems
# TYPE container_swap_usage_bytes gauge
container_swap_usage_bytes{container="container_a",namespace="namespace_a",pod="pod_a"} 1000 1624396288302
# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the pod in core-seconds
# TYPE pod_cpu_usage_seconds_total counter
pod_cpu_usage_seconds_total{namespace="namespace_a",pod="pod_a"} 10 1624396278302
# HELP pod_memory_working_set_bytes [STABLE] Current working set of the pod in bytes
# TYPE pod_memory_working_set_bytes gauge
pod_memory_working_set_bytes{namespace="namespace_a",pod="pod_a"} 1000 1624396278302
# HELP pod_swap_usage_bytes [ALPHA] Current amount of the pod swap usage in bytes. Reported only on non-windows systems
# TYPE pod_swap_usage_bytes gauge
pod_swap_usage_bytes{namespace="namespace_a",pod="pod_a"} 5000 1624396288302
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewResourceMetricsCollector(tt.src)
			if err := testutil.CollectAndCompare(c, strings.NewReader(tt.want), tt.metrics...); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestResourceMetricsFromProvider serves the provider's summary through a registry, as
// /metrics/resource does.
func TestResourceMetricsFromProvider(t *testing.T) {
	f := newFixture(t)
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewResourceMetricsCollector(f.provider(t)))
	const want = `
# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the pod in core-seconds
# TYPE pod_cpu_usage_seconds_total counter
pod_cpu_usage_seconds_total{namespace="ns",pod="db"} 30 10000000
pod_cpu_usage_seconds_total{namespace="ns",pod="web"} 28 10000000
# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 2e+09 10000000
# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "pod_cpu_usage_seconds_total", "node_memory_working_set_bytes", "resource_scrape_error"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(reg, "container_cpu_usage_seconds_total"); err != nil || n != 3 {
		t.Errorf("container_cpu_usage_seconds_total series = %d, %v; want 3 (app, sidecar, db)", n, err)
	}
}
