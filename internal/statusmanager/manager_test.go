package statusmanager

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type desired []*v1.Pod

func (d desired) Pods() []*v1.Pod { return d }

func TestManager(t *testing.T) {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u"},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "c"}}}}
	m := New(desired{p})
	if got := m.Pods(); len(got) != 1 || got[0].Status.Phase != "" {
		t.Fatalf("before any status: %+v", got)
	}
	done := v1.PodStatus{Phase: v1.PodSucceeded, ContainerStatuses: []v1.ContainerStatus{{Name: "c",
		State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0}}}}}
	m.SetPodStatus(p, done)
	// A terminated container under restartPolicy Never may not run again: refused.
	m.SetPodStatus(p, v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{Name: "c",
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}})
	if st, _ := m.GetPodStatus("u"); st.Phase != v1.PodSucceeded {
		t.Fatalf("a terminal status was left: %s", st.Phase)
	}
	got := m.Pods()
	got[0].Status.Phase = "mutated"
	if st, _ := m.GetPodStatus("u"); st.Phase != v1.PodSucceeded {
		t.Fatal("Pods returned shared state")
	}
	m.Forget("u")
	if _, ok := m.GetPodStatus("u"); ok {
		t.Fatal("forgotten status still there")
	}
}
