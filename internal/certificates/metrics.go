package certificates

import (
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The names of the two certificates, in logs and in ManagerConfig.Name.
const (
	Client  = "client"
	Serving = "serving"
)

// Metrics are upstream's certificate manager metrics (names, help and buckets as
// kubelet v1.37's).
type Metrics struct {
	reg                      prometheus.Registerer
	clientErrors, servErrors prometheus.Counter
	servRotation             prometheus.Histogram
}

// NewMetrics registers the renewal error counters and the serving certificate's rotation
// histogram in reg; WatchTTL adds each manager's TTL gauge.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		reg: reg,
		clientErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "kubelet", Subsystem: "certificate_manager", Name: "client_expiration_renew_errors",
			Help: "Counter of certificate renewal errors.",
		}),
		servErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Subsystem: "kubelet", Name: "server_expiration_renew_errors",
			Help: "Counter of certificate renewal errors.",
		}),
		servRotation: prometheus.NewHistogram(prometheus.HistogramOpts{
			Subsystem: "kubelet", Name: "certificate_manager_server_rotation_seconds",
			Help:    "Histogram of the number of seconds the previous certificate lived before being rotated.",
			Buckets: []float64{60, 3600, 14400, 86400, 604800, 2592000, 7776000, 15552000, 31104000, 124416000},
		}),
	}
	reg.MustRegister(m.clientErrors, m.servErrors, m.servRotation)
	return m
}

// WatchTTL registers the gauge of mgr's time to live: kubelet_certificate_manager_client_ttl_seconds
// or kubelet_certificate_manager_server_ttl_seconds (+Inf without a certificate, as upstream).
func (m *Metrics) WatchTTL(name string, mgr *Manager) {
	if m == nil {
		return
	}
	opts := prometheus.GaugeOpts{Subsystem: "kubelet", Name: "certificate_manager_client_ttl_seconds",
		Help: "Gauge of the TTL (time-to-live) of the Kubelet's client certificate. " +
			"The value is in seconds until certificate expiry (negative if already expired). " +
			"If client certificate is invalid or unused, the value will be +INF."}
	if name == Serving {
		opts.Name = "certificate_manager_server_ttl_seconds"
		opts.Help = "Gauge of the shortest TTL (time-to-live) of the Kubelet's serving certificate. " +
			"The value is in seconds until certificate expiry (negative if already expired). " +
			"If serving certificate is invalid or unused, the value will be +INF."
	}
	m.reg.MustRegister(prometheus.NewGaugeFunc(opts, func() float64 {
		ttl, ok := mgr.TTL()
		if !ok {
			return math.Inf(1)
		}
		return math.Trunc(ttl.Seconds())
	}))
}

func (m *Metrics) renewError(name string) {
	switch {
	case m == nil:
	case name == Serving:
		m.servErrors.Inc()
	default:
		m.clientErrors.Inc()
	}
}

func (m *Metrics) rotated(name string, lived time.Duration) {
	if m != nil && name == Serving {
		m.servRotation.Observe(lived.Seconds())
	}
}
