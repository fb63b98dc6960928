package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
)

// Probes are upstream's prober metrics (pkg/kubelet/prober/prober_manager.go), served on
// /metrics/probes from their own registry.
type Probes struct {
	registry *prometheus.Registry
	results  *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewProbes builds and registers the probe metrics.
func NewProbes() *Probes {
	p := &Probes{
		registry: prometheus.NewRegistry(),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "prober", Name: "probe_total",
			Help: "[BETA] Cumulative number of a liveness, readiness or startup probe for a container by result."},
			[]string{"probe_type", "result", "container", "pod", "namespace", "pod_uid"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "prober", Name: "probe_duration_seconds",
			Help: "[ALPHA] Duration in seconds for a probe response.", Buckets: prometheus.DefBuckets},
			[]string{"probe_type", "container", "pod", "namespace"}),
	}
	p.registry.MustRegister(p.results, p.duration)
	return p
}

// ObserveProbe records one probe of a container: probeType is Liveness, Readiness or Startup,
// result upstream's successful, failed or unknown. As upstream, the duration of failed probes
// is not recorded (a failure is often a timeout).
func (p *Probes) ObserveProbe(probeType string, pod *v1.Pod, container, result string, d time.Duration) {
	p.results.WithLabelValues(probeType, result, container, pod.Name, pod.Namespace, string(pod.UID)).Inc()
	if result != "failed" {
		p.duration.WithLabelValues(probeType, container, pod.Name, pod.Namespace).Observe(d.Seconds())
	}
}

// ForgetProbe drops the series of a probe worker that stopped, as upstream does, so that
// /metrics/probes does not grow with every pod ever run.
func (p *Probes) ForgetProbe(probeType string, pod *v1.Pod, container string) {
	for _, result := range []string{"successful", "failed", "unknown"} {
		p.results.DeleteLabelValues(probeType, result, container, pod.Name, pod.Namespace, string(pod.UID))
	}
	p.duration.DeleteLabelValues(probeType, container, pod.Name, pod.Namespace)
}

// Handler serves the probe metrics.
func (p *Probes) Handler() http.Handler { return Handler(p.registry) }
