// Package probeview holds View, what the prober knows of a pod's current container instances:
// the one probe-result type the prober produces (prober.Manager.Results), the pod syncer
// passes on, the status generator reads (started, ready) and the runtime's plan reads
// (liveness and startup kills, sidecar gating). It is a leaf: it imports nothing, so any of
// them can use it without importing the others.
package probeview
