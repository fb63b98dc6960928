package podsync

import (
	"maps"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/podworkers"
	"github.com/nodelet/nodelet/internal/prober/probeview"
	"github.com/nodelet/nodelet/internal/status"
)

// State is what a pod's decisions carry from one sync to the next. The Syncer keeps one per
// pod; the zero State is a pod's first sync (or the first since nodelet started).
type State struct {
	// Status is the status the last step decided, as the status manager holds it: a status
	// the manager refuses (a terminated container that may not restart shown otherwise) is
	// not taken.
	Status v1.PodStatus
	// Waiting are the reasons the runtime gave, in the last sync that called it, for the
	// containers it could not start (upstream's reason cache).
	Waiting map[string]status.WaitingReason
}

// Input is everything one step decides from. Nothing in it is modified.
type Input struct {
	// Work is the pod worker's call: SyncPod, TerminatingPod or TerminatedPod.
	Work podworkers.WorkType
	// Pod is the desired pod with its allocated resources.
	Pod *v1.Pod
	// Runtime is the runtime's view of the pod (the pod cache's, or for TerminatingPod the
	// runtime's own after the kill); nil before the first sandbox exists.
	Runtime *container.PodStatus
	// Probes are the prober's results for the view's current container instances.
	Probes probeview.View
	// ResizeConditions are the pod's PodResizePending and PodResizeInProgress conditions.
	ResizeConditions []v1.PodCondition
	// Prev is what the pod's previous step decided.
	Prev State
	// Now is the time of the sync.
	Now time.Time
	// Node are the node's facts (host IPs, runtime name).
	Node Config
	// Failure, for TerminatingPod, is why nodelet itself kills the pod (an eviction): the pod
	// shows Failed, with the reason, while it stops. Zero for other kills.
	Failure podworkers.Failure
	// Report, for SyncPod, is what the runtime did in this sync; nil before it was called.
	Report *Report
}

// Report is what the runtime's SyncPod said, as the step needs it.
type Report struct {
	// Waiting are the reasons the runtime could not start containers (CrashLoopBackOff,
	// ImagePullBackOff, ErrImagePull, CreateContainerConfigError...). They show in the status
	// of this same sync (upstream shows them from the next one).
	Waiting map[string]status.WaitingReason
	// Runtime is a fresh view of the pod when the runtime resized containers in place (the
	// view the sync began with no longer shows their resources); nil otherwise.
	Runtime *container.PodStatus
	// ResizeConditions replace Input.ResizeConditions when Runtime is set: the resize's
	// outcome.
	ResizeConditions []v1.PodCondition
}

// RuntimeInput is what SyncPod gives the runtime besides the pod and its view.
type RuntimeInput struct {
	Probes probeview.View
}

// Output is what the syncer applies.
type Output struct {
	// Status is the pod's API status, to store once.
	Status v1.PodStatus
	// Finished, for SyncPod before the runtime, says the pod has reached a terminal phase: the
	// runtime is not called and the worker moves the pod to terminating.
	Finished bool
	// Runtime, when set, asks for the runtime's SyncPod with these inputs (SyncPod, before the
	// runtime, the pod not finished).
	Runtime *RuntimeInput
	// SyncMirror asks to create or update the mirror pod of a static pod, before the runtime.
	SyncMirror bool
	// StartObserved says the pod turned Running in this step, StartDuration after its source
	// first delivered it (kubelet_pod_start_duration_seconds).
	StartObserved bool
	StartDuration time.Duration
	// Next is the State the pod's next step starts from.
	Next State
}

// Step decides one sync of one pod: upstream's generateAPIPodStatus and the decisions of
// SyncPod, SyncTerminatingPod and SyncTerminatedPod around it, with no I/O.
//
//   - SyncPod without a Report: the status from the view and the previous waiting reasons;
//     Finished when it is terminal, else the runtime's inputs and, for a static pod not being
//     deleted, a mirror pod sync.
//   - SyncPod with a Report: the status with the runtime's new waiting reasons (and fresh
//     view after a resize); see AfterRuntime, which calls Step only when the report changes
//     the status.
//   - TerminatingPod: the status of the pod being stopped; with a Failure, Failed with its
//     reason and message (and the DisruptionTarget condition when asked).
//   - TerminatedPod: the final status, every container that did not end reported as failed,
//     a terminal phase unless the pod is static (upstream's TerminatePod).
func Step(in Input) Output {
	waiting, rt, resize := in.Prev.Waiting, in.Runtime, in.ResizeConditions
	if in.Work == podworkers.SyncPod && in.Report != nil {
		waiting = in.Report.Waiting
		if in.Report.Runtime != nil {
			rt, resize = in.Report.Runtime, in.Report.ResizeConditions
		}
	}
	st := status.Generate(status.Input{Pod: in.Pod, Runtime: rt, Old: in.Prev.Status, Waiting: waiting,
		Probes: in.Probes, HostIPs: in.Node.HostIPs, RuntimeName: in.Node.RuntimeName,
		ResizeConditions: resize, PodIsTerminal: in.Work == podworkers.TerminatedPod, Now: in.Now})

	out := Output{Next: State{Waiting: waiting}}
	switch in.Work {
	case podworkers.SyncPod:
		if in.Report == nil {
			out.Finished = status.IsTerminal(st)
			if !out.Finished {
				out.Runtime = &RuntimeInput{Probes: in.Probes}
				out.SyncMirror = podconfig.IsStaticPod(in.Pod) && in.Pod.DeletionTimestamp == nil
			}
		}
	case podworkers.TerminatingPod:
		if in.Failure.Reason != "" {
			status.Fail(&st, in.Pod, in.Failure.Reason, in.Failure.Message, in.Failure.DisruptionTarget, in.Now)
		}
	case podworkers.TerminatedPod:
		st = status.Terminate(in.Pod, st, podconfig.IsStaticPod(in.Pod))
	}
	out.Status = st
	out.StartDuration, out.StartObserved = startDuration(in.Pod, in.Prev.Status, st, in.Now)
	out.Next.Status = accepted(in.Pod, in.Prev.Status, st)
	return out
}

// AfterRuntime completes a SyncPod once the runtime has acted: before is the step's Output
// before the runtime was called (in without a Report), rep what the runtime said. When the
// report changes nothing the status is made of (the same waiting reasons as before, no
// resize) the status decided before stands and is not generated again.
func AfterRuntime(in Input, before Output, rep Report) Output {
	if rep.Runtime == nil && sameWaiting(in.Prev.Waiting, rep.Waiting) {
		out := before
		out.Finished, out.Runtime, out.SyncMirror = false, nil, false
		out.Next.Waiting = rep.Waiting
		return out
	}
	in.Report = &rep
	return Step(in)
}

// accepted is the status the status manager keeps after being given next: next, unless it
// would take a terminated container that may not restart out of its terminated state (the
// manager refuses and keeps prev).
func accepted(pod *v1.Pod, prev, next v1.PodStatus) v1.PodStatus {
	if status.CheckTransition(&prev, &next, &pod.Spec) != nil {
		return prev
	}
	return next
}

// startDuration is how long the pod took to start when its phase goes from Pending (or
// unknown) to Running: the time since its source first delivered it (the config.seen
// annotation), as upstream's kubelet_pod_start_duration_seconds.
func startDuration(pod *v1.Pod, prev, st v1.PodStatus, now time.Time) (time.Duration, bool) {
	if st.Phase != v1.PodRunning || (prev.Phase != v1.PodPending && prev.Phase != "") {
		return 0, false
	}
	seen, err := time.Parse(time.RFC3339Nano, pod.Annotations[podconfig.ConfigFirstSeenAnnotationKey])
	if err != nil {
		return 0, false
	}
	return now.Sub(seen), true
}

// sameWaiting says a and b hold the same reasons (nil and empty alike).
func sameWaiting(a, b map[string]status.WaitingReason) bool {
	return maps.Equal(a, b)
}

// currentIDs are the IDs of the newest instance of each container of the view (the prober's
// results for older instances do not count).
func currentIDs(ps *container.PodStatus) map[string]string {
	current := map[string]string{}
	if ps == nil {
		return current
	}
	for _, c := range ps.ContainerStatuses { // newest first
		if _, seen := current[c.Name]; !seen {
			current[c.Name] = c.ID
		}
	}
	return current
}
