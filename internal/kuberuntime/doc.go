// Package kuberuntime is nodelet's runtime manager (upstream's pkg/kubelet/kuberuntime): it
// reads pods back from the CRI runtime (listings for PLEG, full statuses for the pod cache) and
// moves a pod toward its spec by
// applying the pure plan of internal/kuberuntime/plan over CRI v1: sandboxes, image pulls with the
// pull policy and ImagePullBackOff, container creation with the configs of
// internal/kuberuntime/criconfig, CrashLoopBackOff with upstream's timings (10 s doubling to 300 s,
// reset after 10 minutes of running), and termination with grace periods, sidecars last.
// Ephemeral containers start before init containers, once, in their target's process
// namespace; image volumes are pulled per their pull policy and mounted by the runtime; the
// service environment variables come from a ServiceLister in cluster mode.
//
// Everything nodelet needs to know about a running pod is in the runtime's labels and
// annotations, so a restarted nodelet adopts what runs without restarting it.
//
// Reading order: manager.go, listing.go, podstatus.go, sync.go, sandbox_run.go,
// container_start.go (postStart, ephemeral targets), images.go, imagevolumes.go, services.go,
// kill.go (preStop, grace periods), cgroups.go.
package kuberuntime
