package podsync

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/kuberuntime"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/podworkers"
)

// AfterRuntime keeps the status decided before the runtime when the runtime's report changes
// nothing it is made of, and otherwise decides it again from the report; it never asks for
// the runtime or the mirror pod again, and never says finished.
func TestAfterRuntime(t *testing.T) {
	up := func() *container.PodStatus { return inSandbox(instance("1", container.StateRunning, 0, 10)) }
	resizing := []v1.PodCondition{{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue, ObservedGeneration: 7}}
	fresh := up()
	fresh.ContainerStatuses[0].Resources = &container.Resources{CPURequest: resource.NewMilliQuantity(1000, resource.DecimalSI)}
	allocated := func(p *v1.Pod) {
		p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}
	}
	for _, tc := range []struct {
		name      string
		in        Input
		rep       Report
		unchanged bool // the status decided before the runtime stands
		check     func(t *testing.T, out Output)
	}{
		{name: "nothing reported", in: syncInput(podOf(v1.RestartPolicyAlways, fromSource(podconfig.FileSource)), up()), unchanged: true},
		{name: "the same reasons as the last sync",
			in: func() Input {
				in := syncInput(podOf(v1.RestartPolicyAlways), &container.PodStatus{ID: "u"})
				in.Prev.Waiting = waitingFor(kuberuntime.ReasonImagePullBackOff, "back-off pulling")
				return in
			}(),
			rep: Report{Waiting: waitingFor(kuberuntime.ReasonImagePullBackOff, "back-off pulling")}, unchanged: true,
			check: func(t *testing.T, out Output) {
				wantWaiting(t, out.Status, kuberuntime.ReasonImagePullBackOff, "back-off pulling")
			}},
		{name: "a new reason",
			in: func() Input {
				in := syncInput(podOf(v1.RestartPolicyAlways), &container.PodStatus{ID: "u"})
				in.Prev.Waiting = waitingFor(kuberuntime.ReasonErrImagePull, "not found")
				return in
			}(),
			rep: Report{Waiting: waitingFor(kuberuntime.ReasonImagePullBackOff, "back-off pulling")},
			check: func(t *testing.T, out Output) {
				wantWaiting(t, out.Status, kuberuntime.ReasonImagePullBackOff, "back-off pulling")
			}},
		{name: "a resize: the fresh view's resources and the resize's conditions",
			in: func() Input {
				in := syncInput(podOf(v1.RestartPolicyAlways, allocated), up())
				in.ResizeConditions = []v1.PodCondition{{Type: v1.PodResizePending, Status: v1.ConditionTrue}}
				return in
			}(),
			rep: Report{Runtime: fresh, ResizeConditions: resizing},
			check: func(t *testing.T, out Output) {
				if c := condition(out.Status, v1.PodResizeInProgress); c == nil || c.ObservedGeneration != 7 {
					t.Errorf("conditions %+v, want PodResizeInProgress with its own generation", out.Status.Conditions)
				}
				if c := condition(out.Status, v1.PodResizePending); c != nil {
					t.Errorf("PodResizePending %+v left from before the resize", c)
				}
				cs := cstatus(t, out.Status)
				if !cs.AllocatedResources.Cpu().Equal(resource.MustParse("1")) || cs.Resources == nil || !cs.Resources.Requests.Cpu().Equal(resource.MustParse("1")) {
					t.Errorf("container status %+v %+v: want the allocated and the freshly reported cpu", cs.AllocatedResources, cs.Resources)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := Step(tc.in)
			out := AfterRuntime(tc.in, before, tc.rep)
			if out.Finished || out.Runtime != nil || out.SyncMirror {
				t.Errorf("finished %v runtime %v mirror %v, want none", out.Finished, out.Runtime, out.SyncMirror)
			}
			if same := equality.Semantic.DeepEqual(out.Status, before.Status); same != tc.unchanged {
				t.Errorf("status unchanged: %v, want %v", same, tc.unchanged)
			}
			if !sameWaiting(out.Next.Waiting, tc.rep.Waiting) || !equality.Semantic.DeepEqual(out.Next.Status, out.Status) {
				t.Errorf("next state %+v, want the report's reasons and the status", out.Next)
			}
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}

// What a step takes from the previous State, and what it leaves for the next.
func TestStepState(t *testing.T) {
	upAt := func(created int64) *container.PodStatus {
		return inSandbox(instance("1", container.StateRunning, 0, created))
	}
	readySince := metav1.NewTime(time.Unix(60, 0))
	for _, tc := range []struct {
		name  string
		in    Input
		check func(t *testing.T, in Input, out Output)
	}{
		{name: "a condition keeps its transition time from the previous status",
			in: func() Input {
				in := syncInput(podOf(v1.RestartPolicyAlways), upAt(10))
				in.Prev.Status = v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: readySince}}}
				return in
			}(),
			check: func(t *testing.T, _ Input, out Output) {
				if c := condition(out.Status, v1.PodReady); c == nil || !c.LastTransitionTime.Equal(&readySince) {
					t.Errorf("Ready %+v, want its transition time kept", c)
				}
			}},
		{name: "the first step: the API's status stands for the previous one",
			in: func() Input {
				p := podOf(v1.RestartPolicyAlways)
				p.Status.StartTime = &metav1.Time{Time: time.Unix(40, 0)}
				return syncInput(p, upAt(10))
			}(),
			check: func(t *testing.T, _ Input, out Output) {
				if out.Status.StartTime == nil || !out.Status.StartTime.Time.Equal(time.Unix(40, 0)) {
					t.Errorf("startTime %v, want the API's", out.Status.StartTime)
				}
			}},
		{name: "the waiting reasons stay until a runtime sync replaces them",
			in: Input{Work: podworkers.TerminatingPod, Pod: podOf(v1.RestartPolicyAlways), Runtime: running(container.StateExited, 1), Now: t0,
				Prev: State{Waiting: waitingFor(kuberuntime.ReasonCrashLoopBackOff, "back-off")}},
			check: func(t *testing.T, in Input, out Output) {
				if !sameWaiting(out.Next.Waiting, in.Prev.Waiting) {
					t.Errorf("next reasons %v, want %v", out.Next.Waiting, in.Prev.Waiting)
				}
			}},
		{name: "a status the status manager would refuse is not taken as the previous one",
			in: func() Input {
				in := syncInput(podOf(v1.RestartPolicyNever), upAt(30))
				in.Prev.Status = v1.PodStatus{Phase: v1.PodFailed, ContainerStatuses: []v1.ContainerStatus{{Name: "c", ContainerID: "containerd://0",
					State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1, ContainerID: "containerd://0"}}}}}
				return in
			}(),
			check: func(t *testing.T, in Input, out Output) {
				if cstatus(t, out.Status).State.Running == nil || !equality.Semantic.DeepEqual(out.Next.Status, in.Prev.Status) {
					t.Errorf("status %+v, next %+v: want the refused status out and the previous one kept", cstatus(t, out.Status).State, out.Next.Status)
				}
			}},
		{name: "an accepted status is the next previous one",
			in: syncInput(podOf(v1.RestartPolicyAlways), upAt(10)),
			check: func(t *testing.T, _ Input, out Output) {
				if !equality.Semantic.DeepEqual(out.Next.Status, out.Status) {
					t.Errorf("next status %+v, want %+v", out.Next.Status, out.Status)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, tc.in, Step(tc.in))
		})
	}
}

// A static pod's mirror pod is synced before the runtime, unless the pod is being deleted or
// has finished.
func TestStepMirror(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		ps   *container.PodStatus
		want bool
	}{
		{"static pod from a file", podOf(v1.RestartPolicyAlways, fromSource(podconfig.FileSource)), &container.PodStatus{ID: "u"}, true},
		{"static pod from a URL", podOf(v1.RestartPolicyAlways, fromSource(podconfig.HTTPSource)), &container.PodStatus{ID: "u"}, true},
		{"pod from the API server", podOf(v1.RestartPolicyAlways, fromSource(podconfig.APISource)), &container.PodStatus{ID: "u"}, false},
		{"static pod being deleted", podOf(v1.RestartPolicyAlways, fromSource(podconfig.HTTPSource), deleting), &container.PodStatus{ID: "u"}, false},
		{"finished static pod", podOf(v1.RestartPolicyNever, fromSource(podconfig.FileSource)), running(container.StateExited, 0), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Step(syncInput(tc.pod, tc.ps)).SyncMirror; got != tc.want {
				t.Errorf("SyncMirror = %v, want %v", got, tc.want)
			}
		})
	}
}

// kubelet_pod_start_duration_seconds: observed when the pod turns Running, from the time its
// source first delivered it.
func TestStepStartDuration(t *testing.T) {
	seen := seenAt(time.Unix(97, 500_000_000))
	up := func() *container.PodStatus { return inSandbox(instance("1", container.StateRunning, 0, 10)) }
	for _, tc := range []struct {
		name     string
		pod      *v1.Pod
		ps       *container.PodStatus
		prev     v1.PodPhase
		observed bool
	}{
		{"Pending to Running", podOf(v1.RestartPolicyAlways, seen), up(), v1.PodPending, true},
		{"first step, Running", podOf(v1.RestartPolicyAlways, seen), up(), "", true},
		{"still Pending", podOf(v1.RestartPolicyAlways, seen), &container.PodStatus{ID: "u"}, "", false},
		{"already Running", podOf(v1.RestartPolicyAlways, seen), up(), v1.PodRunning, false},
		{"no config.seen annotation", podOf(v1.RestartPolicyAlways), up(), v1.PodPending, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := syncInput(tc.pod, tc.ps)
			in.Prev.Status.Phase = tc.prev
			out := Step(in)
			if out.StartObserved != tc.observed || (tc.observed && out.StartDuration != 2500*time.Millisecond) {
				t.Errorf("observed %v after %v, want %v after 2.5s", out.StartObserved, out.StartDuration, tc.observed)
			}
		})
	}
}
