package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/container"
)

// Upstream's bucket layouts (pkg/kubelet/metrics/metrics.go).
var (
	podStartupDurationBuckets = []float64{0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600}
	runtimeOperationBuckets   = prometheus.ExponentialBuckets(.005, 2.5, 14)
)

// RuntimeLister lists the runtime's pods (runtime.Manager.GetPods); the running pod and container
// gauges are computed from it when /metrics is scraped.
type RuntimeLister interface {
	GetPods(ctx context.Context) ([]*container.Pod, error)
}

// Kubelet is the node agent's metric set, registered in its own registry.
type Kubelet struct {
	registry *prometheus.Registry
	clock    clock.PassiveClock

	podStart       prometheus.Histogram
	podWorker      *prometheus.HistogramVec
	relistDuration prometheus.Histogram
	relistInterval prometheus.Histogram
	runtimeOps     *prometheus.CounterVec
	runtimeOpsDur  *prometheus.HistogramVec
	runtimeOpsErrs *prometheus.CounterVec
	eventedConnErr prometheus.Counter
	eventedConn    prometheus.Counter
	eventedLatency prometheus.Histogram
	evictions      *prometheus.CounterVec
	evictionAge    *prometheus.HistogramVec
}

// New builds and registers the metrics.
func New(clk clock.PassiveClock) *Kubelet {
	k := &Kubelet{
		registry: prometheus.NewRegistry(),
		clock:    clk,
		podStart: prometheus.NewHistogram(prometheus.HistogramOpts{Subsystem: "kubelet", Name: "pod_start_duration_seconds",
			Help: "[ALPHA] Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run", Buckets: podStartupDurationBuckets}),
		podWorker: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "kubelet", Name: "pod_worker_duration_seconds",
			Help: "[ALPHA] Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync", Buckets: prometheus.DefBuckets},
			[]string{"operation_type"}),
		relistDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Subsystem: "kubelet", Name: "pleg_relist_duration_seconds",
			Help: "[ALPHA] Duration in seconds for relisting pods in PLEG.", Buckets: prometheus.DefBuckets}),
		relistInterval: prometheus.NewHistogram(prometheus.HistogramOpts{Subsystem: "kubelet", Name: "pleg_relist_interval_seconds",
			Help: "[ALPHA] Interval in seconds between relisting in PLEG.", Buckets: prometheus.DefBuckets}),
		runtimeOps: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "kubelet", Name: "runtime_operations_total",
			Help: "[ALPHA] Cumulative number of runtime operations by operation type."}, []string{"operation_type"}),
		runtimeOpsDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "kubelet", Name: "runtime_operations_duration_seconds",
			Help: "[ALPHA] Duration in seconds of runtime operations. Broken down by operation type.", Buckets: runtimeOperationBuckets},
			[]string{"operation_type"}),
		runtimeOpsErrs: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "kubelet", Name: "runtime_operations_errors_total",
			Help: "[ALPHA] Cumulative number of runtime operation errors by operation type."}, []string{"operation_type"}),
		eventedConnErr: prometheus.NewCounter(prometheus.CounterOpts{Subsystem: "kubelet", Name: "evented_pleg_connection_error_count",
			Help: "[ALPHA] The number of errors encountered during the establishment of streaming connection with the CRI runtime."}),
		eventedConn: prometheus.NewCounter(prometheus.CounterOpts{Subsystem: "kubelet", Name: "evented_pleg_connection_success_count",
			Help: "[ALPHA] The number of times a streaming client was obtained to receive CRI Events."}),
		eventedLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Subsystem: "kubelet", Name: "evented_pleg_connection_latency_seconds",
			Help: "[ALPHA] The latency of streaming connection with the CRI runtime, measured in seconds.", Buckets: prometheus.DefBuckets}),
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "kubelet", Name: "evictions",
			Help: "[ALPHA] Cumulative number of pod evictions by eviction signal"}, []string{"eviction_signal"}),
		evictionAge: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "kubelet", Name: "eviction_stats_age_seconds",
			Help:    "[ALPHA] Time between when stats are collected, and when pod is evicted based on those stats by eviction signal",
			Buckets: prometheus.DefBuckets}, []string{"eviction_signal"}),
	}
	k.registry.MustRegister(k.podStart, k.podWorker, k.relistDuration, k.relistInterval, k.runtimeOps, k.runtimeOpsDur, k.runtimeOpsErrs,
		k.eventedConnErr, k.eventedConn, k.eventedLatency, k.evictions, k.evictionAge,
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	return k
}

// WatchRuntime adds kubelet_running_pods and kubelet_running_containers, read from runtime at
// each scrape; called once the runtime is connected.
func (k *Kubelet) WatchRuntime(runtime RuntimeLister) {
	k.registry.MustRegister(&runningCollector{runtime: runtime})
}

// Registry is where the metrics are registered; other collectors (resource metrics) may be
// added to it by their owners.
func (k *Kubelet) Registry() *prometheus.Registry { return k.registry }

// Handler serves the registry in the Prometheus text (or negotiated) format.
func (k *Kubelet) Handler() http.Handler { return Handler(k.registry) }

// Handler serves a registry, logging (not failing) on collection errors, as the kubelet does.
func Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, ErrorLog: promLogger{}})
}

// ObserveEviction records kubelet_evictions for the signal (a threshold's, or upstream's
// emptydirfs.limit, ephemeralpodfs.limit, ephemeralcontainerfs.limit).
func (k *Kubelet) ObserveEviction(signal string) { k.evictions.WithLabelValues(signal).Inc() }

// ObserveEvictionStatsAge records kubelet_eviction_stats_age_seconds: how old the stats of a met
// threshold were when its signal drove an eviction.
func (k *Kubelet) ObserveEvictionStatsAge(signal string, age time.Duration) {
	k.evictionAge.WithLabelValues(signal).Observe(age.Seconds())
}

// ObservePodStart records kubelet_pod_start_duration_seconds.
func (k *Kubelet) ObservePodStart(d time.Duration) { k.podStart.Observe(d.Seconds()) }

// ObservePodWorker records kubelet_pod_worker_duration_seconds; operation is upstream's
// create, update, sync, kill or terminated.
func (k *Kubelet) ObservePodWorker(operation string, d time.Duration) {
	k.podWorker.WithLabelValues(operation).Observe(d.Seconds())
}

// ObserveRelist records kubelet_pleg_relist_duration_seconds.
func (k *Kubelet) ObserveRelist(d time.Duration) { k.relistDuration.Observe(d.Seconds()) }

// ObserveRelistInterval records kubelet_pleg_relist_interval_seconds.
func (k *Kubelet) ObserveRelistInterval(d time.Duration) { k.relistInterval.Observe(d.Seconds()) }

// StreamConnected counts an opened CRI event stream (kubelet_evented_pleg_connection_success_count).
func (k *Kubelet) StreamConnected() { k.eventedConn.Inc() }

// StreamFailed counts a CRI event stream that failed (kubelet_evented_pleg_connection_error_count).
func (k *Kubelet) StreamFailed() { k.eventedConnErr.Inc() }

// ObserveEventLatency records a CRI event's delay (kubelet_evented_pleg_connection_latency_seconds).
func (k *Kubelet) ObserveEventLatency(d time.Duration) { k.eventedLatency.Observe(d.Seconds()) }

// promLogger sends promhttp's errors to klog.
type promLogger struct{}

func (promLogger) Println(v ...any) { klog.ErrorS(nil, "Serving metrics", "error", v) }

// runningCollector computes kubelet_running_pods and kubelet_running_containers from a runtime
// listing at scrape time, as upstream computes them from each relist's listing.
type runningCollector struct{ runtime RuntimeLister }

var (
	runningPodsDesc = prometheus.NewDesc("kubelet_running_pods", "[ALPHA] Number of pods that have a running pod sandbox", nil, nil)
	runningCtrsDesc = prometheus.NewDesc("kubelet_running_containers", "[ALPHA] Number of containers currently running", []string{"container_state"}, nil)
)

func (c *runningCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- runningPodsDesc
	ch <- runningCtrsDesc
}

func (c *runningCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pods, err := c.runtime.GetPods(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(runningPodsDesc, err)
		return
	}
	running, states := Running(pods)
	ch <- prometheus.MustNewConstMetric(runningPodsDesc, prometheus.GaugeValue, float64(running))
	for _, s := range containerStates {
		ch <- prometheus.MustNewConstMetric(runningCtrsDesc, prometheus.GaugeValue, float64(states[s]), s)
	}
}

// containerStates are upstream's container_state label values.
var containerStates = []string{"created", "running", "exited", "unknown"}

// Running counts the pods with a ready sandbox and the containers by state, as upstream's
// updateRunningPodAndContainerMetrics.
func Running(pods []*container.Pod) (runningPods int, containers map[string]int) {
	containers = map[string]int{}
	for _, p := range pods {
		for _, s := range p.Sandboxes {
			if s.State == container.StateRunning {
				runningPods++
				break
			}
		}
		for _, c := range p.Containers {
			containers[stateLabel(c.State)]++
		}
	}
	return runningPods, containers
}

func stateLabel(s container.State) string {
	switch s {
	case container.StateCreated:
		return "created"
	case container.StateRunning:
		return "running"
	case container.StateExited:
		return "exited"
	}
	return "unknown"
}
