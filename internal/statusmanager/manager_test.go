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

func TestManagerVersions(t *testing.T) {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u"}}
	api := p.DeepCopy()
	api.Status.Phase = v1.PodRunning
	m := New(desired{api})
	version := func() uint64 {
		t.Helper()
		vs := m.Versioned()
		if len(vs) != 1 {
			t.Fatalf("%d statuses", len(vs))
		}
		if vs[0].Pod != api {
			t.Error("Versioned does not carry the desired pod (with the API's status)")
		}
		return vs[0].Version
	}
	signalled := func() bool {
		select {
		case <-m.Changed():
			return true
		default:
			return false
		}
	}
	m.SetPodStatus(p, v1.PodStatus{Phase: v1.PodPending})
	if version() != 1 || !signalled() {
		t.Fatal("first status: want version 1 and a signal")
	}
	m.SetPodStatus(p, v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{{Type: "example.com/gate", Status: v1.ConditionTrue}}})
	if version() != 1 || !signalled() {
		t.Error("a change in another's condition only: want the same version, and a signal")
	}
	if st, _ := m.GetPodStatus("u"); len(st.Conditions) != 1 {
		t.Error("the latest status is not kept for local readers")
	}
	m.SetPodStatus(p, v1.PodStatus{Phase: v1.PodRunning})
	if version() != 2 {
		t.Error("a new phase: want version 2")
	}
}
