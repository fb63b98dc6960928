// Package metrics holds the kubelet metrics nodelet exposes on /metrics, with upstream's names,
// help texts, labels and buckets (pkg/kubelet/metrics, kuberuntime/instrumented_services.go), so
// that dashboards and alerts written for the kubelet work unchanged:
//
//	kubelet_pod_start_duration_seconds           first seen → Running (podsync)
//	kubelet_pod_worker_duration_seconds          one pod sync, by operation_type (podworkers)
//	kubelet_pleg_relist_duration_seconds         one relist (pleg)
//	kubelet_pleg_relist_interval_seconds         between relist starts (pleg)
//	kubelet_running_pods                         pods with a ready sandbox, read at scrape time
//	kubelet_running_containers{container_state}  containers by state, read at scrape time
//	kubelet_runtime_operations_total             CRI calls, by operation_type
//	kubelet_runtime_operations_duration_seconds  their duration
//	kubelet_runtime_operations_errors_total      the failed ones
//	process_* and go_*                           client_golang's process and Go collectors
//
// The CRI metrics come from a gRPC client interceptor on the runtime connection (one place,
// every call) whose operation names are upstream's (RunPodSandbox → run_podsandbox).
//
// Probe metrics (/metrics/probes: prober_probe_total, prober_probe_duration_seconds) have their
// own registry, as upstream serves them on their own path.
//
// Nothing here is global: each Kubelet owns a prometheus.Registry (upstream uses component-base's
// legacyregistry, a process-wide singleton, which this project's rules forbid).
package metrics
