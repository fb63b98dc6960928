// Package prober runs the liveness, readiness and startup probes of pods' containers and
// sidecars (restartable init containers), as the upstream kubelet v1.37 prober does
// (pkg/kubelet/prober and pkg/probe/{exec,http,tcp,grpc}) with its default feature gates.
//
// A Manager starts one worker goroutine per (container, probe) on AddPod. Each worker ticks at
// the probe's period (the first tick of a worker started within a period of the manager's
// start is delayed by a random part of the period, as upstream), reads the pod's status from
// the status manager, and decides with step, a pure function that is upstream's
// worker.doProbe:
//
//   - a new container instance (new container ID) resets the worker: counters cleared, and the
//     initial result stored (readiness Failure, liveness Success, startup Unknown), except for
//     a container that was already running 10s before the manager started (upstream's
//     kubelet-restart grace, ChangeContainerStatusOnKubeletRestart off);
//   - a container that is not running reads as Failure and is not probed; the worker exits
//     when a terminated container will not be restarted, or the pod has finished;
//   - nothing is probed before initialDelaySeconds from the instance's startedAt; startup
//     probes run until the status says the container started, the others only after;
//   - successThreshold and failureThreshold count consecutive results; once a liveness failure
//     or a startup result reaches its threshold the worker holds until a new instance;
//   - liveness and startup stop, reporting Success, once the pod has a deletion timestamp;
//   - each failure records a Warning Unhealthy event ("Liveness probe failed: <output>"), a
//     warning (an HTTP redirect to another host) a Warning ProbeWarning event, and a probe
//     that errors (no answer at all, e.g. an unknown port name) is retried twice, then
//     recorded ("... probe errored and resulted in unknown state: ...") and ignored.
//
// The runners (runners.go) are upstream's: exec through the CRI ExecSync (the command's
// $(VAR) expanded from the container's literal env only), httpGet through internal/httpget,
// tcpSocket by dialing host (or the pod IP) and port, gRPC by grpc.health.v1 Check over an
// insecure connection. timeoutSeconds bounds each.
//
// Results(pod, currentIDs) exposes, by container name, what the workers hold for the current
// instances only, as a probeview.View: the one type the pod syncer passes, unchanged, to the
// status generator (ready, started) and to the runtime's plan (liveness and startup kills,
// sidecar gating). Updates delivers a pod's UID after one of its results changed.
//
// Where nodelet differs from upstream, on purpose:
//   - A new container instance also resets the consecutive-result counters (upstream keeps
//     lastResult and resultRun across instances, so a restarted container could inherit a
//     partial success run).
//   - Each worker holds the result of the one instance it probes, in place of upstream's three
//     result caches keyed by container ID; Results filters them by the caller's current IDs.
//   - Updates carries pod UIDs, coalesced while not yet received, and never blocks a worker
//     (upstream: three channels of 20 Update structs whose senders block).
//   - RemovePod forgets every worker of the pod UID at once; Stop and RemovePod cancel probes
//     in flight (upstream stops workers between probes only, its TODO #140977).
//   - AddPod keeps a deep copy of the pod. As upstream, an existing worker keeps the probe
//     settings it started with; only the pod object (deletion timestamp, restart policy) is
//     updated.
//   - tcpSocket and gRPC probes with no host and no pod IP are errors (upstream would dial
//     ":port", the node itself). Unset period/timeout/thresholds take the API defaults.
//   - No metrics; events are recorded against the pod; the alpha gates
//     GRPCContainerProbeTLS and H2CContainerProbe are off, so gRPC mode and HTTP/2 are
//     ignored; setReadyStateOnKubeletRestart, StopLivenessAndStartup and CleanupPods are not
//     here.
package prober
