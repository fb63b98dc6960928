package status

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestTerminate(t *testing.T) {
	waiting := v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}
	done := v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{}}
	oneContainer := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a"}}}}
	withInit := &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "i1"}, {Name: "i2"}}, Containers: []v1.Container{{Name: "a"}}}}
	tests := []struct {
		name      string
		pod       *v1.Pod
		static    bool
		in        v1.PodStatus
		wantPhase v1.PodPhase
		// wantUnknown lists the containers (init first) expected to end ContainerStatusUnknown.
		wantUnknown []string
	}{
		{"waiting container of a deleted pod fails", oneContainer, false,
			v1.PodStatus{Phase: v1.PodPending, ContainerStatuses: []v1.ContainerStatus{{Name: "a", State: waiting}}},
			v1.PodFailed, []string{"a"}},
		{"succeeded stays succeeded", oneContainer, false,
			v1.PodStatus{Phase: v1.PodSucceeded, ContainerStatuses: []v1.ContainerStatus{{Name: "a", State: done}}},
			v1.PodSucceeded, nil},
		{"running phase becomes failed", oneContainer, false,
			v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{Name: "a", State: running}}},
			v1.PodFailed, []string{"a"}},
		{"static pods keep their phase", oneContainer, true,
			v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{Name: "a", State: running}}},
			v1.PodRunning, []string{"a"}},
		{"uninitialized pod: only the first waiting init container fails", withInit, false,
			v1.PodStatus{Phase: v1.PodPending,
				InitContainerStatuses: []v1.ContainerStatus{{Name: "i1", State: waiting}, {Name: "i2", State: waiting}},
				ContainerStatuses:     []v1.ContainerStatus{{Name: "a", State: waiting}}},
			v1.PodFailed, []string{"i1"}},
		{"initialized pod: regular containers fail too", withInit, false,
			v1.PodStatus{Phase: v1.PodRunning,
				InitContainerStatuses: []v1.ContainerStatus{{Name: "i1", State: done}, {Name: "i2", State: done}},
				ContainerStatuses:     []v1.ContainerStatus{{Name: "a", State: running}}},
			v1.PodFailed, []string{"a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := *tc.in.DeepCopy()
			got := Terminate(tc.pod, tc.in, tc.static)
			if got.Phase != tc.wantPhase {
				t.Errorf("phase %s, want %s", got.Phase, tc.wantPhase)
			}
			var unknown []string
			for _, cs := range append(append([]v1.ContainerStatus{}, got.InitContainerStatuses...), got.ContainerStatuses...) {
				if term := cs.State.Terminated; term != nil && term.Reason == ReasonContainerStatusUnknown {
					if term.ExitCode != 137 {
						t.Errorf("%s: exit code %d, want 137", cs.Name, term.ExitCode)
					}
					unknown = append(unknown, cs.Name)
				}
			}
			if len(unknown) != len(tc.wantUnknown) || (len(unknown) > 0 && unknown[0] != tc.wantUnknown[0]) {
				t.Errorf("ContainerStatusUnknown for %v, want %v", unknown, tc.wantUnknown)
			}
			if !reflect.DeepEqual(tc.in, in) {
				t.Error("Terminate modified its input")
			}
		})
	}
}
