// Package plan decides what the runtime manager must do to a pod on one sync: ComputePodActions
// takes the pod spec, the runtime's view (container.PodStatus) and the prober's results, and
// returns a Plan. It is a pure function: no CRI calls, no clock, no logging, so every decision
// is a table test.
//
// It is upstream's computePodActions (pkg/kubelet/kuberuntime, v1.37.1) with its default feature
// gates, and a Plan is upstream's podActions:
//
//	podActions                                   Plan
//	KillPod, CreateSandbox, SandboxID, Attempt   the same fields
//	InitContainersToStart, ContainersToStart     the same, indexes into the pod spec
//	EphemeralContainersToStart                   the same
//	ContainersToKill, by kubecontainer.ID        ContainersToKill, by CRI container ID
//	containerToKillInfo                          KillInfo
//	ContainersToUpdate, UpdatePodResources,      not carried: in-place resize is not
//	UpdatePodLevelResources, VolumesTo*size      planned here
//	ContainersToReset                            not carried: RestartAllContainers is
//	                                             the caller's separate path
//
// The decisions, in upstream's order:
//
//  1. Sandbox (SandboxChanged, upstream's PodSandboxChanged): a new one is needed when there is
//     none, the newest is not ready, more than one is ready, the network namespace mode no longer
//     matches hostNetwork, or a pod-network pod's sandbox has no IP. Then KillPod and
//     CreateSandbox are set, Attempt is the newest attempt + 1, and the pod restarts from the
//     beginning: the first init container, or every main container (but, under OnFailure, not
//     those that succeeded). Exceptions, where only KillPod remains: a restartPolicy Never pod
//     that already ran containers in an earlier sandbox, and a pod whose initialization completed
//     and that has no main container left to run.
//  2. Ephemeral containers never started are started.
//  3. Init containers (computeInitContainerActions): walked from the last one back, in the
//     current sandbox's containers (Input.ActiveContainerStatuses). A regular init container
//     runs alone and in order: running means wait, exited 0 means start the next, failed means
//     start it again, or, when the restart policy forbids it, KillPod (the pod failed). A
//     sidecar (restartPolicy Always) is started after the previous one has started, the next
//     init container only once it is running and, if it has a startupProbe, has started; it is
//     restarted whenever it exits, is unknown, fails its startup or liveness probe or its image
//     changed, even under restartPolicy Never. Main containers wait for initialization.
//  4. Main containers: one not running is started when the restart policy allows it (never for
//     a pod being deleted); unknown ones are killed first. A running one is killed, and
//     restarted, when its hash (container.HashContainer) changed; it is killed when its
//     liveness or startup probe failed, and restarted when the policy allows.
//  5. When no main container is kept running and none is to start, the pod is done: KillPod,
//     and sidecars are not restarted.
//
// Where nodelet differs from upstream, on purpose:
//   - ContainersToKill is empty when KillPod is set (upstream fills it, and SyncPod ignores it),
//     and empty lists are nil: same behaviour, plainer tests.
//   - A changed spec is killed with Reason ReasonDefinitionChanged (upstream: empty). Only the
//     probe reasons select a grace period, so the kill is the same.
//   - Probe results come by container name (Input.Probes, the prober's probeview.View), not
//     from result caches by container ID; StartupFailed is separate from Started because
//     upstream distinguishes a failed startup probe (kill) from one still running (wait).
//   - container.Status has no sandbox ID, so the current sandbox's containers come in
//     Input.ActiveContainerStatuses; nil falls back to all of Status.ContainerStatuses.
//   - Feature gates are fixed at v1.37's defaults (ContainerRestartRules and
//     RestartAllContainersOnContainerExits on); the in-place resize and RestartAllContainers
//     parts of upstream's function, and its internal-lifecycle PostStopContainer call, are not
//     here. A nil pod gives an empty Plan, a nil status counts as empty, and a sandbox without
//     metadata reads as attempt 0 instead of panicking.
//
// Back-off is not decided here: a Plan may list a container in CrashLoopBackOff. The caller
// applies back-off (upstream's doBackOff) when it actually starts each container, as upstream's
// SyncPod does after computePodActions.
package plan
