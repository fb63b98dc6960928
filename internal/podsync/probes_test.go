package podsync

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/prober/probeview"
)

// The prober's view gates started and ready in the status, and reaches the runtime unchanged
// (one type from the prober to the plan), unless the pod has finished.
func TestStepProbeGating(t *testing.T) {
	up := func() *container.PodStatus { return inSandbox(instance("1", container.StateRunning, 0, 10)) }
	yes, no := map[string]bool{"c": true}, map[string]bool{"c": false}
	startedBefore := State{Status: v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{Name: "c",
		ContainerID: "containerd://1", Started: ptr.To(true), State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.Unix(11, 0)}}}}}}
	for _, tc := range []struct {
		name           string
		pod            *v1.Pod
		ps             *container.PodStatus
		probes         probeview.View
		prev           State
		started, ready bool
		runtime        bool // the runtime is called, with the view
	}{
		{name: "no probe: started and ready", pod: podOf(v1.RestartPolicyAlways), ps: up(), started: true, ready: true, runtime: true},
		{name: "readiness without a result: not ready", pod: podOf(v1.RestartPolicyAlways, withReadiness), ps: up(), started: true, runtime: true},
		{name: "readiness failed: not ready", pod: podOf(v1.RestartPolicyAlways, withReadiness), ps: up(), probes: probeview.View{Ready: no}, started: true, runtime: true},
		{name: "readiness succeeded: ready", pod: podOf(v1.RestartPolicyAlways, withReadiness), ps: up(), probes: probeview.View{Ready: yes}, started: true, ready: true, runtime: true},
		{name: "startup without a result: neither started nor ready", pod: podOf(v1.RestartPolicyAlways, withStartup), ps: up(), runtime: true},
		{name: "startup succeeded: started and ready", pod: podOf(v1.RestartPolicyAlways, withStartup), ps: up(), probes: probeview.View{Started: yes}, started: true, ready: true, runtime: true},
		{name: "startup failed: not started, the runtime told", pod: podOf(v1.RestartPolicyAlways, withStartup), ps: up(),
			probes: probeview.View{Started: no, StartupFailed: yes}, runtime: true},
		{name: "startup without a result for an instance started before: started", pod: podOf(v1.RestartPolicyAlways, withStartup), ps: up(),
			prev: startedBefore, started: true, ready: true, runtime: true},
		{name: "startup succeeded, readiness not yet: started, not ready", pod: podOf(v1.RestartPolicyAlways, withStartup, withReadiness), ps: up(),
			probes: probeview.View{Started: yes, Ready: no}, started: true, runtime: true},
		{name: "liveness failed: the runtime told", pod: podOf(v1.RestartPolicyAlways, withLiveness), ps: up(),
			probes: probeview.View{LivenessFailed: yes}, started: true, ready: true, runtime: true},
		{name: "a finished pod: the runtime not called, even with a liveness failure", pod: podOf(v1.RestartPolicyNever, withLiveness),
			ps: inSandbox(instance("1", container.StateExited, 0, 10)), probes: probeview.View{LivenessFailed: yes}},
		{name: "a container not running is neither started nor ready", pod: podOf(v1.RestartPolicyAlways, withReadiness),
			ps: inSandbox(instance("1", container.StateExited, 1, 10)), probes: probeview.View{Ready: yes}, runtime: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := syncInput(tc.pod, tc.ps)
			in.Probes, in.Prev = tc.probes, tc.prev
			out := Step(in)
			cs := cstatus(t, out.Status)
			if cs.Started == nil || *cs.Started != tc.started || cs.Ready != tc.ready {
				t.Errorf("started %v ready %v, want %v %v", ptrString(cs.Started), cs.Ready, tc.started, tc.ready)
			}
			ready := v1.ConditionFalse
			if tc.ready {
				ready = v1.ConditionTrue
			}
			wantCondition(t, out.Status, v1.ContainersReady, ready)
			wantCondition(t, out.Status, v1.PodReady, ready)
			if (out.Runtime != nil) != tc.runtime {
				t.Fatalf("runtime input %+v, want one: %v", out.Runtime, tc.runtime)
			}
			if out.Runtime != nil && !reflect.DeepEqual(out.Runtime.Probes, tc.probes) {
				t.Errorf("the runtime gets %+v, want the prober's view %+v", out.Runtime.Probes, tc.probes)
			}
		})
	}
}

func ptrString(b *bool) string {
	if b == nil {
		return "nil"
	}
	if *b {
		return "true"
	}
	return "false"
}

// The prober is asked about the newest instance of each container only.
func TestCurrentIDs(t *testing.T) {
	for _, tc := range []struct {
		name string
		ps   *container.PodStatus
		want map[string]string
	}{
		{"no view", nil, map[string]string{}},
		{"the newest instance of each container", &container.PodStatus{ContainerStatuses: []*container.Status{
			{ID: "3", Name: "c"}, {ID: "9", Name: "d"}, {ID: "1", Name: "c"}}}, map[string]string{"c": "3", "d": "9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := currentIDs(tc.ps); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("currentIDs = %v, want %v", got, tc.want)
			}
		})
	}
}
