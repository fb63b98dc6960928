package status

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestContainerShouldRestart(t *testing.T) {
	never, onFailure, always := v1.ContainerRestartPolicyNever, v1.ContainerRestartPolicyOnFailure, v1.ContainerRestartPolicyAlways
	rule := func(op v1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) []v1.ContainerRestartRule {
		return []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestart,
			ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}}
	}
	cases := []struct {
		name   string
		pod    v1.RestartPolicy
		c      v1.Container
		code   int32
		expect bool
	}{
		{"pod Always", v1.RestartPolicyAlways, v1.Container{}, 0, true},
		{"pod default is Always", "", v1.Container{}, 0, true},
		{"pod OnFailure success", v1.RestartPolicyOnFailure, v1.Container{}, 0, false},
		{"pod OnFailure failure", v1.RestartPolicyOnFailure, v1.Container{}, 2, true},
		{"pod Never", v1.RestartPolicyNever, v1.Container{}, 2, false},
		{"container Always over pod Never", v1.RestartPolicyNever, v1.Container{RestartPolicy: &always}, 0, true},
		{"container OnFailure over pod Always", v1.RestartPolicyAlways, v1.Container{RestartPolicy: &onFailure}, 0, false},
		{"container Never over pod Always", v1.RestartPolicyAlways, v1.Container{RestartPolicy: &never}, 1, false},
		{"In rule matches", v1.RestartPolicyNever, v1.Container{RestartPolicy: &never, RestartPolicyRules: rule(v1.ContainerRestartRuleOnExitCodesOpIn, 42)}, 42, true},
		{"In rule misses", v1.RestartPolicyNever, v1.Container{RestartPolicy: &never, RestartPolicyRules: rule(v1.ContainerRestartRuleOnExitCodesOpIn, 42)}, 1, false},
		{"NotIn rule matches", v1.RestartPolicyNever, v1.Container{RestartPolicy: &never, RestartPolicyRules: rule(v1.ContainerRestartRuleOnExitCodesOpNotIn, 0)}, 1, true},
		{"rules ignored without container policy", v1.RestartPolicyNever, v1.Container{RestartPolicyRules: rule(v1.ContainerRestartRuleOnExitCodesOpIn, 42)}, 42, false},
	}
	for _, tc := range cases {
		if got := ContainerShouldRestart(&tc.c, &v1.PodSpec{RestartPolicy: tc.pod}, tc.code); got != tc.expect {
			t.Errorf("%s: ContainerShouldRestart = %v, want %v", tc.name, got, tc.expect)
		}
	}
}

func TestCheckTransition(t *testing.T) {
	term := func(code int32) v1.ContainerState {
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}
	}
	run := v1.ContainerState{Running: &v1.ContainerStateRunning{}}
	statusOf := func(st v1.ContainerState) *v1.PodStatus {
		return &v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "app", State: st}}}
	}
	spec := func(p v1.RestartPolicy) *v1.PodSpec {
		return &v1.PodSpec{RestartPolicy: p, Containers: []v1.Container{{Name: "app"}}}
	}
	if err := CheckTransition(statusOf(term(0)), statusOf(run), spec(v1.RestartPolicyNever)); err == nil {
		t.Error("Never: terminated to running must be refused")
	}
	if err := CheckTransition(statusOf(term(0)), statusOf(run), spec(v1.RestartPolicyAlways)); err != nil {
		t.Errorf("Always: %v", err)
	}
	if err := CheckTransition(statusOf(term(1)), statusOf(run), spec(v1.RestartPolicyOnFailure)); err != nil {
		t.Errorf("OnFailure after a failure: %v", err)
	}
	if err := CheckTransition(statusOf(term(0)), statusOf(run), spec(v1.RestartPolicyOnFailure)); err == nil {
		t.Error("OnFailure after success: terminated to running must be refused")
	}
	s := spec(v1.RestartPolicyNever)
	s.InitContainers = []v1.Container{sidecar("proxy")}
	old := &v1.PodStatus{InitContainerStatuses: []v1.ContainerStatus{{Name: "proxy", State: term(0)}}}
	cur := &v1.PodStatus{InitContainerStatuses: []v1.ContainerStatus{{Name: "proxy", State: run}}}
	if err := CheckTransition(old, cur, s); err != nil {
		t.Errorf("sidecars restart: %v", err)
	}
}

func TestPastActiveDeadline(t *testing.T) {
	pod := podOf(v1.RestartPolicyAlways, "app")
	started := v1.PodStatus{StartTime: &metav1.Time{Time: t0}}
	if PastActiveDeadline(pod, started, t0.Add(time.Hour)) {
		t.Error("no deadline set")
	}
	pod.Spec.ActiveDeadlineSeconds = ptr(int64(60))
	if PastActiveDeadline(pod, v1.PodStatus{}, t0.Add(time.Hour)) {
		t.Error("not started yet")
	}
	if PastActiveDeadline(pod, started, t0.Add(59*time.Second)) || !PastActiveDeadline(pod, started, t0.Add(60*time.Second)) {
		t.Error("deadline is at start + 60s")
	}
	if !IsTerminal(v1.PodStatus{Phase: v1.PodFailed}) || IsTerminal(v1.PodStatus{Phase: v1.PodRunning}) {
		t.Error("IsTerminal")
	}
}
