package probeview

// View is the probe results of a pod's current container instances, by container name. A name
// is present in a map only when its probe's worker holds a result for the instance the caller
// named as current (upstream keys results by container ID; the prober drops a result whose
// instance is no longer the newest). Nil maps read as empty.
type View struct {
	// Ready: the readiness probe succeeded (false while it has not, or has failed). A running,
	// started container without a readiness probe is ready whatever this says.
	Ready map[string]bool
	// Started: the startup probe's result for the instance is Success (false while it is
	// unknown or failed). A sidecar with a startupProbe gates the next init container until it
	// is true. With no entry, a running container is started if its previous status said so
	// or it has no startup probe.
	Started map[string]bool
	// StartupFailed: the startup probe reached its failure threshold (the container is killed).
	StartupFailed map[string]bool
	// LivenessFailed: the liveness probe reached its failure threshold (the container is killed).
	LivenessFailed map[string]bool
}
