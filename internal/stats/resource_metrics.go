package stats

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// CPUAndMemorySource is what the resource metrics are read from; *Provider satisfies it.
type CPUAndMemorySource interface {
	CPUAndMemorySummary(ctx context.Context) (*statsapi.Summary, error)
}

// The /metrics/resource families, with upstream's names, help texts (stability prefix
// included, as component-base renders them), labels and types
// (pkg/kubelet/metrics/collectors/resource_metrics.go). Upstream's scrape_error, deprecated
// since 1.29 and hidden since, is not served.
type resourceDescs struct {
	nodeCPU, nodeMemory, nodeSwap                                *prometheus.Desc
	containerCPU, containerMemory, containerSwap, containerLimit *prometheus.Desc
	containerStart                                               *prometheus.Desc
	podCPU, podMemory, podSwap                                   *prometheus.Desc
	scrapeError                                                  *prometheus.Desc
}

func newResourceDescs() resourceDescs {
	containerLabels := []string{"container", "pod", "namespace"}
	podLabels := []string{"pod", "namespace"}
	d := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return resourceDescs{
		nodeCPU:         d("node_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the node in core-seconds", nil),
		nodeMemory:      d("node_memory_working_set_bytes", "[STABLE] Current working set of the node in bytes", nil),
		nodeSwap:        d("node_swap_usage_bytes", "[ALPHA] Current swap usage of the node in bytes. Reported only on non-windows systems", nil),
		containerCPU:    d("container_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the container in core-seconds", containerLabels),
		containerMemory: d("container_memory_working_set_bytes", "[STABLE] Current working set of the container in bytes", containerLabels),
		containerSwap:   d("container_swap_usage_bytes", "[ALPHA] Current amount of the container swap usage in bytes. Reported only on non-windows systems", containerLabels),
		containerLimit:  d("container_swap_limit_bytes", "[ALPHA] Current amount of the container swap limit in bytes. Reported only on non-windows systems", containerLabels),
		containerStart:  d("container_start_time_seconds", "[STABLE] Start time of the container since unix epoch in seconds", containerLabels),
		podCPU:          d("pod_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the pod in core-seconds", podLabels),
		podMemory:       d("pod_memory_working_set_bytes", "[STABLE] Current working set of the pod in bytes", podLabels),
		podSwap:         d("pod_swap_usage_bytes", "[ALPHA] Current amount of the pod swap usage in bytes. Reported only on non-windows systems", podLabels),
		scrapeError:     d("resource_scrape_error", "[STABLE] 1 if there was an error while getting container metrics, 0 otherwise", nil),
	}
}

// resourceCollector serves the summary's CPU and memory as metrics, read at each scrape: only
// live pods and containers appear (upstream's reason for a custom collector).
type resourceCollector struct {
	src   CPUAndMemorySource
	descs resourceDescs
}

// NewResourceMetricsCollector returns the /metrics/resource collector, to be registered in the
// registry that serves that path.
func NewResourceMetricsCollector(src CPUAndMemorySource) prometheus.Collector {
	return &resourceCollector{src: src, descs: newResourceDescs()}
}

// Describe implements prometheus.Collector.
func (c *resourceCollector) Describe(ch chan<- *prometheus.Desc) {
	d := c.descs
	for _, desc := range []*prometheus.Desc{d.nodeCPU, d.nodeMemory, d.nodeSwap, d.containerStart, d.containerCPU,
		d.containerMemory, d.containerSwap, d.containerLimit, d.podCPU, d.podMemory, d.podSwap, d.scrapeError} {
		ch <- desc
	}
}

// Collect implements prometheus.Collector. A failed summary yields only resource_scrape_error 1.
func (c *resourceCollector) Collect(ch chan<- prometheus.Metric) {
	s, err := c.src.CPUAndMemorySummary(context.Background())
	if err != nil {
		klog.ErrorS(err, "Error getting summary for resourceMetric prometheus endpoint")
		ch <- prometheus.MustNewConstMetric(c.descs.scrapeError, prometheus.GaugeValue, 1)
		return
	}
	for _, m := range resourceMetrics(c.descs, s) {
		ch <- m
	}
	ch <- prometheus.MustNewConstMetric(c.descs.scrapeError, prometheus.GaugeValue, 0)
}

// resourceMetrics turns a CPU-and-memory summary into the metrics, each sample stamped with its
// reading's time (container_start_time_seconds excepted), as upstream.
func resourceMetrics(d resourceDescs, s *statsapi.Summary) []prometheus.Metric {
	var out []prometheus.Metric
	emit := func(t time.Time, desc *prometheus.Desc, typ prometheus.ValueType, v float64, labels ...string) {
		out = append(out, prometheus.NewMetricWithTimestamp(t, prometheus.MustNewConstMetric(desc, typ, v, labels...)))
	}
	seconds := func(ns uint64) float64 { return float64(ns) / float64(time.Second) }

	n := s.Node
	if n.CPU != nil && n.CPU.UsageCoreNanoSeconds != nil {
		emit(n.CPU.Time.Time, d.nodeCPU, prometheus.CounterValue, seconds(*n.CPU.UsageCoreNanoSeconds))
	}
	if n.Memory != nil && n.Memory.WorkingSetBytes != nil {
		emit(n.Memory.Time.Time, d.nodeMemory, prometheus.GaugeValue, float64(*n.Memory.WorkingSetBytes))
	}
	if n.Swap != nil && n.Swap.SwapUsageBytes != nil {
		emit(n.Swap.Time.Time, d.nodeSwap, prometheus.GaugeValue, float64(*n.Swap.SwapUsageBytes))
	}
	for _, pod := range s.Pods {
		name, ns := pod.PodRef.Name, pod.PodRef.Namespace
		for _, c := range pod.Containers {
			if c.StartTime.Unix() > 0 {
				out = append(out, prometheus.MustNewConstMetric(d.containerStart, prometheus.GaugeValue,
					float64(c.StartTime.UnixNano())/float64(time.Second), c.Name, name, ns))
			}
			if c.CPU != nil && c.CPU.UsageCoreNanoSeconds != nil {
				emit(c.CPU.Time.Time, d.containerCPU, prometheus.CounterValue, seconds(*c.CPU.UsageCoreNanoSeconds), c.Name, name, ns)
			}
			if c.Memory != nil && c.Memory.WorkingSetBytes != nil {
				emit(c.Memory.Time.Time, d.containerMemory, prometheus.GaugeValue, float64(*c.Memory.WorkingSetBytes), c.Name, name, ns)
			}
			if c.Swap != nil {
				usage := float64(0)
				if c.Swap.SwapUsageBytes != nil {
					usage = float64(*c.Swap.SwapUsageBytes)
					emit(c.Swap.Time.Time, d.containerSwap, prometheus.GaugeValue, usage, c.Name, name, ns)
				}
				if c.Swap.SwapAvailableBytes != nil {
					emit(c.Swap.Time.Time, d.containerLimit, prometheus.GaugeValue, float64(*c.Swap.SwapAvailableBytes)+usage, c.Name, name, ns)
				}
			}
		}
		if pod.CPU != nil && pod.CPU.UsageCoreNanoSeconds != nil {
			emit(pod.CPU.Time.Time, d.podCPU, prometheus.CounterValue, seconds(*pod.CPU.UsageCoreNanoSeconds), name, ns)
		}
		if pod.Memory != nil && pod.Memory.WorkingSetBytes != nil {
			emit(pod.Memory.Time.Time, d.podMemory, prometheus.GaugeValue, float64(*pod.Memory.WorkingSetBytes), name, ns)
		}
		if pod.Swap != nil && pod.Swap.SwapUsageBytes != nil {
			emit(pod.Swap.Time.Time, d.podSwap, prometheus.GaugeValue, float64(*pod.Swap.SwapUsageBytes), name, ns)
		}
	}
	return out
}
