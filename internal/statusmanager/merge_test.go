package statusmanager

import (
	"encoding/json"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Minute)
)

const gate v1.PodConditionType = "example.com/gate"

func cond(t v1.PodConditionType, s v1.ConditionStatus, mods ...func(*v1.PodCondition)) v1.PodCondition {
	c := v1.PodCondition{Type: t, Status: s, LastTransitionTime: metav1.NewTime(t0)}
	for _, m := range mods {
		m(&c)
	}
	return c
}

func reason(r string) func(*v1.PodCondition) { return func(c *v1.PodCondition) { c.Reason = r } }
func at(t time.Time) func(*v1.PodCondition) {
	return func(c *v1.PodCondition) { c.LastTransitionTime = metav1.NewTime(t) }
}

func running(conds ...v1.PodCondition) v1.PodStatus {
	return v1.PodStatus{Phase: v1.PodRunning, Conditions: conds, PodIP: "10.0.0.1"}
}

func TestEqualByKubelet(t *testing.T) {
	base := running(cond(v1.PodReady, v1.ConditionTrue), cond(gate, v1.ConditionFalse))
	for _, tc := range []struct {
		name  string
		other v1.PodStatus
		want  bool
	}{
		{"identical", running(cond(v1.PodReady, v1.ConditionTrue), cond(gate, v1.ConditionFalse)), true},
		{"another's condition differs", running(cond(v1.PodReady, v1.ConditionTrue), cond(gate, v1.ConditionTrue)), true},
		{"another's condition missing", running(cond(v1.PodReady, v1.ConditionTrue)), true},
		{"own condition's transition time only", running(cond(v1.PodReady, v1.ConditionTrue, at(t1)), cond(gate, v1.ConditionFalse)), true},
		{"own condition's status", running(cond(v1.PodReady, v1.ConditionFalse), cond(gate, v1.ConditionFalse)), false},
		{"own condition's reason", running(cond(v1.PodReady, v1.ConditionTrue, reason("X")), cond(gate, v1.ConditionFalse)), false},
		{"own condition added", running(cond(v1.PodReady, v1.ConditionTrue), cond(v1.PodInitialized, v1.ConditionTrue)), false},
		{"phase", v1.PodStatus{Phase: v1.PodFailed, PodIP: "10.0.0.1", Conditions: base.Conditions}, false},
		{"pod IP", v1.PodStatus{Phase: v1.PodRunning, PodIP: "10.0.0.2", Conditions: base.Conditions}, false},
		{"resource claim statuses are not the kubelet's", func() v1.PodStatus {
			s := *base.DeepCopy()
			s.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "c"}}
			return s
		}(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := equalByKubelet(&base, &tc.other); got != tc.want {
				t.Errorf("equalByKubelet = %v, want %v", got, tc.want)
			}
		})
	}
}

func byType(conds []v1.PodCondition) map[v1.PodConditionType]v1.PodCondition {
	out := map[v1.PodConditionType]v1.PodCondition{}
	for _, c := range conds {
		out[c.Type] = c
	}
	return out
}

func TestMergeStatus(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: 3}}
	for _, tc := range []struct {
		name     string
		old, cur v1.PodStatus
		couldRun bool
		check    func(t *testing.T, got v1.PodStatus)
	}{{
		name: "conditions of others kept, the kubelet's replaced",
		old: v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{
			cond(v1.PodScheduled, v1.ConditionTrue), cond(gate, v1.ConditionTrue), cond(v1.PodReady, v1.ConditionFalse)}},
		cur: running(cond(v1.PodReady, v1.ConditionTrue), cond(v1.PodScheduled, v1.ConditionTrue, at(t1)), cond(gate, v1.ConditionFalse)),
		check: func(t *testing.T, got v1.PodStatus) {
			c := byType(got.Conditions)
			if len(got.Conditions) != 3 || c[gate].Status != v1.ConditionTrue || c[v1.PodReady].Status != v1.ConditionTrue ||
				!c[v1.PodScheduled].LastTransitionTime.Time.Equal(t1) {
				t.Errorf("conditions %+v", got.Conditions)
			}
			if got.Phase != v1.PodRunning {
				t.Errorf("phase %s", got.Phase)
			}
		},
	}, {
		name:     "a terminal phase waits until no container can run",
		old:      v1.PodStatus{Phase: v1.PodRunning, Reason: "", Message: ""},
		cur:      v1.PodStatus{Phase: v1.PodFailed, Reason: "DeadlineExceeded", Message: "too long"},
		couldRun: true,
		check: func(t *testing.T, got v1.PodStatus) {
			if got.Phase != v1.PodRunning || got.Reason != "" || got.Message != "" {
				t.Errorf("phase %s %q %q, want Running held back", got.Phase, got.Reason, got.Message)
			}
		},
	}, {
		name: "terminal once no container runs; DisruptionTarget written; readiness dropped",
		old:  v1.PodStatus{Phase: v1.PodRunning},
		cur: v1.PodStatus{Phase: v1.PodSucceeded, Conditions: []v1.PodCondition{
			cond(v1.PodReady, v1.ConditionTrue), cond(v1.ContainersReady, v1.ConditionTrue), cond(v1.DisruptionTarget, v1.ConditionTrue)}},
		check: func(t *testing.T, got v1.PodStatus) {
			c := byType(got.Conditions)
			if got.Phase != v1.PodSucceeded {
				t.Errorf("phase %s", got.Phase)
			}
			for _, ct := range []v1.PodConditionType{v1.PodReady, v1.ContainersReady} {
				if c[ct].Status != v1.ConditionFalse || c[ct].Reason != "PodCompleted" || c[ct].ObservedGeneration != 3 ||
					!c[ct].LastTransitionTime.Time.Equal(t1) {
					t.Errorf("%s: %+v", ct, c[ct])
				}
			}
			if c[v1.DisruptionTarget].Status != v1.ConditionTrue || !c[v1.DisruptionTarget].LastTransitionTime.Time.Equal(t1) {
				t.Errorf("DisruptionTarget %+v", c[v1.DisruptionTarget])
			}
		},
	}, {
		name: "a failed pod is not ready, for reason PodFailed",
		old:  v1.PodStatus{Phase: v1.PodFailed},
		cur:  v1.PodStatus{Phase: v1.PodFailed, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue)}},
		check: func(t *testing.T, got v1.PodStatus) {
			if c := byType(got.Conditions)[v1.PodReady]; c.Status != v1.ConditionFalse || c.Reason != "PodFailed" {
				t.Errorf("Ready %+v", c)
			}
		},
	}, {
		name: "the kubelet's DisruptionTarget is not written while the pod runs; another's stays",
		old:  v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{cond(v1.DisruptionTarget, v1.ConditionTrue, reason("EvictionByEvictionAPI"))}},
		cur:  running(cond(v1.DisruptionTarget, v1.ConditionTrue, reason("TerminationByKubelet"))),
		check: func(t *testing.T, got v1.PodStatus) {
			if c := byType(got.Conditions)[v1.DisruptionTarget]; c.Reason != "EvictionByEvictionAPI" || len(got.Conditions) != 1 {
				t.Errorf("conditions %+v", got.Conditions)
			}
		},
	}, {
		name: "resource claim statuses stay as the API has them",
		old:  v1.PodStatus{Phase: v1.PodRunning, ResourceClaimStatuses: []v1.PodResourceClaimStatus{{Name: "gpu"}}},
		cur:  running(),
		check: func(t *testing.T, got v1.PodStatus) {
			if len(got.ResourceClaimStatuses) != 1 || got.ResourceClaimStatuses[0].Name != "gpu" {
				t.Errorf("claims %+v", got.ResourceClaimStatuses)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			cur := *tc.cur.DeepCopy()
			got := mergeStatus(pod, tc.old, tc.cur, tc.couldRun, t1)
			tc.check(t, got)
			if len(cur.Conditions) != len(tc.cur.Conditions) || (len(cur.Conditions) > 0 && cur.Conditions[0] != tc.cur.Conditions[0]) {
				t.Error("mergeStatus modified its input")
			}
		})
	}
}

func TestStatusPatch(t *testing.T) {
	old := running(cond(v1.PodReady, v1.ConditionFalse))
	patch, unchanged, err := statusPatch("u1", old, old)
	if err != nil || !unchanged || string(patch) != `{"metadata":{"uid":"u1"}}` {
		t.Fatalf("same status: %s unchanged=%v err=%v", patch, unchanged, err)
	}
	cur := running(cond(v1.PodReady, v1.ConditionTrue))
	patch, unchanged, err = statusPatch("u1", old, cur)
	if err != nil || unchanged {
		t.Fatalf("changed status: unchanged=%v err=%v", unchanged, err)
	}
	var p struct {
		Metadata struct{ UID string }
		Status   struct {
			Conditions []v1.PodCondition
			Phase      string
		}
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		t.Fatal(err)
	}
	if p.Metadata.UID != "u1" || len(p.Status.Conditions) != 1 || p.Status.Conditions[0].Status != v1.ConditionTrue || p.Status.Phase != "" {
		t.Errorf("patch %s: want the UID as a precondition and only the changed condition", patch)
	}
}

// A status read back from the API server (whole seconds) equals the one written.
func TestEqualByKubeletIgnoresSubSecondTimes(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 23, 17, 0, 0, 123456789, time.UTC))
	stored := metav1.NewTime(at.Truncate(time.Second))
	local := &v1.PodStatus{Phase: v1.PodSucceeded, StartTime: &at,
		Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: at}},
		ContainerStatuses: []v1.ContainerStatus{{Name: "a", State: v1.ContainerState{
			Terminated: &v1.ContainerStateTerminated{StartedAt: at, FinishedAt: at}}}}}
	api := local.DeepCopy()
	api.StartTime = &stored
	api.Conditions[0].LastTransitionTime = stored
	api.ContainerStatuses[0].State.Terminated.StartedAt = stored
	api.ContainerStatuses[0].State.Terminated.FinishedAt = stored
	if !equalByKubelet(api, local) {
		t.Error("statuses differing only below a second compare unequal: every pass would GET the pod again")
	}
	api.ContainerStatuses[0].State.Terminated.ExitCode = 1
	if equalByKubelet(api, local) {
		t.Error("a real difference was missed")
	}
}
