package pleg

import "time"

// Metrics receives the relist measurements upstream exports. Config.Metrics is optional.
type Metrics interface {
	// ObserveRelist records how long one full relist took, failed ones included
	// (kubelet_pleg_relist_duration_seconds).
	ObserveRelist(duration time.Duration)
	// ObserveRelistInterval records, at the start of a relist, the time since the start of the
	// previous relist whose listing succeeded, as upstream (kubelet_pleg_relist_interval_seconds).
	ObserveRelistInterval(interval time.Duration)
}

// StreamMetrics receives the container event stream's measurements upstream exports for its
// evented PLEG. EventedConfig.StreamMetrics is optional.
type StreamMetrics interface {
	// StreamConnected counts a stream opened (kubelet_evented_pleg_connection_success_count).
	StreamConnected()
	// StreamFailed counts a stream that could not be opened or broke
	// (kubelet_evented_pleg_connection_error_count).
	StreamFailed()
	// ObserveEventLatency records the time from an event's creation in the runtime to its receipt
	// (kubelet_evented_pleg_connection_latency_seconds); never negative.
	ObserveEventLatency(latency time.Duration)
}
