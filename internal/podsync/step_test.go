package podsync

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/kuberuntime"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/podworkers"
	"github.com/nodelet/nodelet/internal/status"
)

// Every waiting reason the runtime reports shows in the status of the sync in which it was
// reported, is kept in the next State, and still shows in the next sync's status before the
// runtime is called again.
func TestStepWaitingReasons(t *testing.T) {
	never := func() *container.PodStatus { return &container.PodStatus{ID: "u"} }
	crashed := func() *container.PodStatus { return inSandbox(instance("1", container.StateExited, 1, 10)) }
	for _, tc := range []struct {
		name   string
		reason string
		pod    *v1.Pod
		ps     *container.PodStatus
		// lastExit is the exit code lastState shows (-1: none).
		lastExit int32
	}{
		{"ErrImagePull before the first start", kuberuntime.ReasonErrImagePull, podOf(v1.RestartPolicyAlways), never(), -1},
		{"ImagePullBackOff", kuberuntime.ReasonImagePullBackOff, podOf(v1.RestartPolicyAlways), never(), -1},
		{"ErrImageNeverPull", kuberuntime.ReasonErrImageNeverPull, podOf(v1.RestartPolicyNever), never(), -1},
		{"InvalidImageName", kuberuntime.ReasonInvalidImageName, podOf(v1.RestartPolicyOnFailure), never(), -1},
		{"CreateContainerConfigError", kuberuntime.ReasonCreateContainerConfigError, podOf(v1.RestartPolicyAlways), never(), -1},
		{"CreateContainerError", kuberuntime.ReasonCreateContainerError, podOf(v1.RestartPolicyAlways), never(), -1},
		{"RunContainerError", kuberuntime.ReasonRunContainerError, podOf(v1.RestartPolicyAlways), never(), -1},
		{"PreStartHookError", kuberuntime.ReasonPreStartHookError, podOf(v1.RestartPolicyAlways), never(), -1},
		{"CrashLoopBackOff after an exit: the exit moves to lastState", kuberuntime.ReasonCrashLoopBackOff, podOf(v1.RestartPolicyAlways), crashed(), 1},
		{"CrashLoopBackOff with restartPolicy OnFailure", kuberuntime.ReasonCrashLoopBackOff, podOf(v1.RestartPolicyOnFailure), crashed(), 1},
		{"PostStartHookError after the hook killed the container", kuberuntime.ReasonPostStartHookError, podOf(v1.RestartPolicyAlways), crashed(), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := "why " + tc.reason
			in := syncInput(tc.pod, tc.ps)
			before := Step(in)
			if before.Finished || before.Runtime == nil {
				t.Fatalf("before the runtime: finished %v, runtime %v; want the runtime called", before.Finished, before.Runtime)
			}
			out := AfterRuntime(in, before, Report{Waiting: waitingFor(tc.reason, msg)})
			wantWaiting(t, out.Status, tc.reason, msg)
			if last := cstatus(t, out.Status).LastTerminationState.Terminated; (tc.lastExit < 0) != (last == nil) || (last != nil && last.ExitCode != tc.lastExit) {
				t.Errorf("lastState %+v, want exit %d", last, tc.lastExit)
			}
			if out.Finished || out.Runtime != nil || out.SyncMirror {
				t.Errorf("after the runtime: finished %v runtime %v mirror %v, want none", out.Finished, out.Runtime, out.SyncMirror)
			}
			if !reflect.DeepEqual(out.Next.Waiting, waitingFor(tc.reason, msg)) || !equality.Semantic.DeepEqual(out.Next.Status, out.Status) {
				t.Errorf("next state %+v, want the reasons and the status", out.Next)
			}
			in.Prev = out.Next
			wantWaiting(t, Step(in).Status, tc.reason, msg)
		})
	}
}

// Reasons that no longer apply do not show: the container runs, or the pod is being deleted
// (nothing will start it again), or the runtime reported none in this sync.
func TestStepWaitingReasonsNotShown(t *testing.T) {
	prev := State{Waiting: waitingFor(kuberuntime.ReasonCrashLoopBackOff, "back-off")}
	for _, tc := range []struct {
		name  string
		in    Input
		after *Report
		want  func(t *testing.T, st v1.PodStatus)
	}{
		{"the container runs", Input{Work: podworkers.SyncPod, Pod: podOf(v1.RestartPolicyAlways), Runtime: inSandbox(instance("2", container.StateRunning, 0, 30)), Prev: prev}, nil,
			func(t *testing.T, st v1.PodStatus) {
				if cstatus(t, st).State.Running == nil {
					t.Errorf("state %+v, want running", cstatus(t, st).State)
				}
			}},
		{"the pod is being deleted", Input{Work: podworkers.TerminatingPod, Pod: podOf(v1.RestartPolicyAlways, deleting), Runtime: inSandbox(instance("1", container.StateExited, 1, 10)), Prev: prev}, nil,
			func(t *testing.T, st v1.PodStatus) {
				if cstatus(t, st).State.Terminated == nil {
					t.Errorf("state %+v, want terminated", cstatus(t, st).State)
				}
			}},
		{"the runtime reported none in this sync", Input{Work: podworkers.SyncPod, Pod: podOf(v1.RestartPolicyAlways), Runtime: &container.PodStatus{ID: "u"},
			Prev: State{Waiting: waitingFor(kuberuntime.ReasonErrImagePull, "no such image")}}, &Report{},
			func(t *testing.T, st v1.PodStatus) { wantWaiting(t, st, status.ReasonContainerCreating, "") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Now = t0
			out := Step(tc.in)
			if tc.after != nil {
				out = AfterRuntime(tc.in, out, *tc.after)
			}
			tc.want(t, out.Status)
		})
	}
}

// The terminal phases: a finished pod is not synced with the runtime; TerminatingPod and
// TerminatedPod give the stopping and final statuses.
func TestStepTerminalPhases(t *testing.T) {
	exited := func(code int) *container.PodStatus { return inSandbox(instance("1", container.StateExited, code, 10)) }
	failedBefore := v1.PodStatus{Phase: v1.PodFailed, Reason: "Evicted", Message: "low on memory",
		Conditions: []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonTerminationByKubelet,
			LastTransitionTime: metav1.NewTime(time.Unix(90, 0))}}}
	for _, tc := range []struct {
		name     string
		in       Input
		phase    v1.PodPhase
		reason   string
		finished bool
		check    func(t *testing.T, out Output)
	}{
		{name: "Never, exited 0: Succeeded", in: syncInput(podOf(v1.RestartPolicyNever), exited(0)), phase: v1.PodSucceeded, finished: true},
		{name: "Never, exited 3: Failed", in: syncInput(podOf(v1.RestartPolicyNever), running(container.StateExited, 3)), phase: v1.PodFailed, finished: true},
		{name: "OnFailure, exited 0: Succeeded", in: syncInput(podOf(v1.RestartPolicyOnFailure), exited(0)), phase: v1.PodSucceeded, finished: true},
		{name: "OnFailure, exited 1: restarts", in: syncInput(podOf(v1.RestartPolicyOnFailure), exited(1)), phase: v1.PodRunning},
		{name: "Always, exited 0: restarts", in: syncInput(podOf(v1.RestartPolicyAlways), exited(0)), phase: v1.PodRunning},
		{name: "Always, running", in: syncInput(podOf(v1.RestartPolicyAlways), inSandbox(instance("1", container.StateRunning, 0, 10))), phase: v1.PodRunning},
		{name: "no container yet: Pending", in: syncInput(podOf(v1.RestartPolicyNever), &container.PodStatus{ID: "u"}), phase: v1.PodPending},
		{name: "a terminal phase decided before is kept", in: func() Input {
			in := syncInput(podOf(v1.RestartPolicyAlways), inSandbox(instance("1", container.StateRunning, 0, 10)))
			in.Prev.Status = failedBefore
			return in
		}(), phase: v1.PodFailed, reason: "Evicted", finished: true},
		{name: "a terminal phase in the API is kept", in: func() Input {
			p := podOf(v1.RestartPolicyAlways)
			p.Status.Phase = v1.PodSucceeded
			return syncInput(p, inSandbox(instance("1", container.StateRunning, 0, 10)))
		}(), phase: v1.PodSucceeded, finished: true},
		{name: "past activeDeadlineSeconds: Failed DeadlineExceeded", in: func() Input {
			in := syncInput(podOf(v1.RestartPolicyAlways, func(p *v1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To[int64](30) }),
				inSandbox(instance("1", container.StateRunning, 0, 10)))
			in.Prev.Status = v1.PodStatus{Phase: v1.PodRunning, StartTime: &metav1.Time{Time: time.Unix(50, 0)}}
			return in
		}(), phase: v1.PodFailed, reason: status.ReasonDeadlineExceeded, finished: true},
		{name: "terminating: the stopped container, the phase not yet terminal",
			in:    Input{Work: podworkers.TerminatingPod, Pod: podOf(v1.RestartPolicyAlways), Runtime: running(container.StateExited, 137), Now: t0},
			phase: v1.PodRunning,
			check: func(t *testing.T, out Output) {
				if term := cstatus(t, out.Status).State.Terminated; term == nil || term.ExitCode != 137 {
					t.Errorf("container state %+v, want terminated 137", cstatus(t, out.Status).State)
				}
			}},
		{name: "terminating with a failure: Failed, the reason, DisruptionTarget",
			in: Input{Work: podworkers.TerminatingPod, Pod: podOf(v1.RestartPolicyNever), Runtime: running(container.StateRunning, 0), Now: t0,
				Failure: podworkers.Failure{Reason: "Evicted", Message: "The node was low on resource: memory. ", DisruptionTarget: true}},
			phase: v1.PodFailed, reason: "Evicted",
			check: func(t *testing.T, out Output) {
				dt := condition(out.Status, v1.DisruptionTarget)
				if out.Status.Message != "The node was low on resource: memory. " || dt == nil || dt.Status != v1.ConditionTrue ||
					dt.Reason != v1.PodReasonTerminationByKubelet || dt.Message != out.Status.Message || !dt.LastTransitionTime.Time.Equal(t0) {
					t.Errorf("message %q, DisruptionTarget %+v", out.Status.Message, dt)
				}
				if out.Next.Status.Phase != v1.PodFailed {
					t.Errorf("next state's phase %s, want Failed", out.Next.Status.Phase)
				}
			}},
		{name: "terminating with a failure without disruption: no DisruptionTarget",
			in: Input{Work: podworkers.TerminatingPod, Pod: podOf(v1.RestartPolicyAlways), Runtime: running(container.StateRunning, 0), Now: t0,
				Failure: podworkers.Failure{Reason: "Evicted", Message: "m"}},
			phase: v1.PodFailed, reason: "Evicted",
			check: func(t *testing.T, out Output) {
				if dt := condition(out.Status, v1.DisruptionTarget); dt != nil {
					t.Errorf("DisruptionTarget %+v, want none", dt)
				}
			}},
		{name: "terminating after the kill of a failed pod: still Failed, with the reason",
			in:    Input{Work: podworkers.TerminatingPod, Pod: podOf(v1.RestartPolicyAlways), Runtime: running(container.StateExited, 137), Now: t0, Prev: State{Status: failedBefore}},
			phase: v1.PodFailed, reason: "Evicted",
			check: func(t *testing.T, out Output) {
				if dt := condition(out.Status, v1.DisruptionTarget); dt == nil || !dt.LastTransitionTime.Time.Equal(time.Unix(90, 0)) {
					t.Errorf("DisruptionTarget %+v, want kept from the previous status", dt)
				}
			}},
		{name: "terminated, Always, killed: Failed",
			in:    Input{Work: podworkers.TerminatedPod, Pod: podOf(v1.RestartPolicyAlways), Runtime: running(container.StateExited, 137), Now: t0},
			phase: v1.PodFailed},
		{name: "terminated, never started: Failed, the container ContainerStatusUnknown 137",
			in:    Input{Work: podworkers.TerminatedPod, Pod: podOf(v1.RestartPolicyAlways), Runtime: &container.PodStatus{ID: "u"}, Now: t0},
			phase: v1.PodFailed,
			check: func(t *testing.T, out Output) {
				if term := cstatus(t, out.Status).State.Terminated; term == nil || term.Reason != status.ReasonContainerStatusUnknown || term.ExitCode != 137 {
					t.Errorf("container state %+v, want terminated ContainerStatusUnknown 137", cstatus(t, out.Status).State)
				}
			}},
		{name: "terminated, Never, exited 0: Succeeded",
			in:    Input{Work: podworkers.TerminatedPod, Pod: podOf(v1.RestartPolicyNever), Runtime: exited(0), Now: t0},
			phase: v1.PodSucceeded},
		{name: "terminated static pod: no terminal phase forced",
			in:    Input{Work: podworkers.TerminatedPod, Pod: podOf(v1.RestartPolicyAlways, fromSource(podconfig.FileSource)), Runtime: &container.PodStatus{ID: "u"}, Now: t0},
			phase: v1.PodPending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := Step(tc.in)
			wantPhase(t, out.Status, tc.phase, tc.reason)
			if out.Finished != tc.finished {
				t.Errorf("finished %v, want %v", out.Finished, tc.finished)
			}
			if callsRuntime := tc.in.Work == podworkers.SyncPod && !tc.finished; (out.Runtime != nil) != callsRuntime {
				t.Errorf("runtime input %+v, want one: %v", out.Runtime, callsRuntime)
			}
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}
