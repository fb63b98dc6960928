package plan

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	podstatus "github.com/nodelet/nodelet/internal/status"
)

func TestComputePodActionsMainContainers(t *testing.T) {
	never, onFailure := policy(v1.RestartPolicyNever), policy(v1.RestartPolicyOnFailure)
	runCases(t, []tc{
		{
			name: "everything running: nothing to do",
			pod:  newPod(mains("app", "log")),
			ctrs: []ctr{running("app"), running("log")},
			want: Plan{SandboxID: sb},
		},
		{
			name: "ready sandbox, no containers yet: start them all",
			pod:  newPod(mains("app", "log")),
			want: Plan{SandboxID: sb, ContainersToStart: []int{0, 1}},
		},
		{
			name: "Always: restart containers that exited, whatever their code",
			pod:  newPod(mains("app", "log", "web")),
			ctrs: []ctr{exited("app", 0), exited("log", 111), running("web")},
			want: Plan{SandboxID: sb, ContainersToStart: []int{0, 1}},
		},
		{
			name: "OnFailure: restart the failed container, not the succeeded one",
			pod:  newPod(onFailure, mains("app", "log", "web")),
			ctrs: []ctr{exited("app", 0), exited("log", 111), running("web")},
			want: Plan{SandboxID: sb, ContainersToStart: []int{1}},
		},
		{
			name: "Never: exited containers stay exited while another runs",
			pod:  newPod(never, mains("app", "log", "web")),
			ctrs: []ctr{exited("app", 0), exited("log", 111), running("web")},
			want: Plan{SandboxID: sb},
		},
		{
			name: "restart decisions use the newest instance only",
			pod:  newPod(onFailure, mains("app", "log")),
			ctrs: []ctr{exited("app", 0), running("log"), exited("app", 1).old()},
			want: Plan{SandboxID: sb},
		},
		{
			name: "Never: a created but never started container is started",
			pod:  newPod(never, mains("app", "log")),
			ctrs: []ctr{created("app"), running("log")},
			want: Plan{SandboxID: sb, ContainersToStart: []int{0}},
		},
		{
			name: "unknown state, even under Never: kill it, then start it",
			pod:  newPod(never, mains("app", "log")),
			ctrs: []ctr{unknown("app"), running("log")},
			want: Plan{SandboxID: sb, ContainersToStart: []int{0}, ContainersToKill: map[string]KillInfo{
				"id-app": {Name: "app", Reason: ReasonUnknown, Message: `Container is in "unknown" state, try killing it before restart`}}},
		},
		{
			name: "image changed: kill and restart, even under Never",
			pod:  newPod(never, mains("app", "log")),
			ctrs: []ctr{running("app").hashChanged(), running("log")},
			want: Plan{SandboxID: sb, ContainersToStart: []int{0}, ContainersToKill: map[string]KillInfo{
				"id-app": {Name: "app", Reason: ReasonDefinitionChanged, Message: "Container app definition changed, will be restarted"}}},
		},
		{
			name:       "liveness failed under Always: kill and restart",
			pod:        newPod(mains("app", "log")),
			ctrs:       []ctr{running("app"), running("log")},
			liveFailed: []string{"log"},
			want: Plan{SandboxID: sb, ContainersToStart: []int{1}, ContainersToKill: map[string]KillInfo{
				"id-log": {Name: "log", Reason: ReasonLivenessProbe, Message: "Container log failed liveness probe, will be restarted"}}},
		},
		{
			name:       "liveness failed under Never: kill only, the other container keeps the pod",
			pod:        newPod(never, mains("app", "log")),
			ctrs:       []ctr{running("app"), running("log")},
			liveFailed: []string{"app"},
			want: Plan{SandboxID: sb, ContainersToKill: map[string]KillInfo{
				"id-app": {Name: "app", Reason: ReasonLivenessProbe, Message: "Container app failed liveness probe"}}},
		},
		{
			name:       "liveness failed under Never on the only container: the pod is done",
			pod:        newPod(never, mains("app")),
			ctrs:       []ctr{running("app")},
			liveFailed: []string{"app"},
			want:       Plan{KillPod: true, SandboxID: sb},
		},
		{
			name:          "startup probe failed under OnFailure: kill and restart",
			pod:           newPod(onFailure, mains("app")),
			ctrs:          []ctr{running("app")},
			startupFailed: []string{"app"},
			want: Plan{SandboxID: sb, ContainersToStart: []int{0}, ContainersToKill: map[string]KillInfo{
				"id-app": {Name: "app", Reason: ReasonStartupProbe, Message: "Container app failed startup probe, will be restarted"}}},
		},
		{
			name:          "a changed definition wins over a failed probe",
			pod:           newPod(mains("app")),
			ctrs:          []ctr{running("app").hashChanged()},
			liveFailed:    []string{"app"},
			startupFailed: []string{"app"},
			want: Plan{SandboxID: sb, ContainersToStart: []int{0}, ContainersToKill: map[string]KillInfo{
				"id-app": {Name: "app", Reason: ReasonDefinitionChanged, Message: "Container app definition changed, will be restarted"}}},
		},
		{
			name: "Never: every container terminal, the pod is done",
			pod:  newPod(never, mains("app", "log")),
			ctrs: []ctr{exited("app", 0), exited("log", 2)},
			want: Plan{KillPod: true, SandboxID: sb},
		},
		{
			name: "OnFailure: every container succeeded, the pod is done",
			pod:  newPod(onFailure, mains("app", "log")),
			ctrs: []ctr{exited("app", 0), exited("log", 0)},
			want: Plan{KillPod: true, SandboxID: sb},
		},
		{
			name: "pod being deleted: nothing restarts, so the pod is killed",
			pod:  newPod(deleting(), mains("app", "log")),
			ctrs: []ctr{exited("app", 1), exited("log", 0)},
			want: Plan{KillPod: true, SandboxID: sb},
		},
		{
			name: "ephemeral container never started: start it, and never restart one that exited",
			pod:  newPod(mains("app"), ephemeral("debug", "debug2")),
			ctrs: []ctr{exited("debug2", 1), running("app")},
			want: Plan{SandboxID: sb, EphemeralContainersToStart: []int{0}},
		},
		{
			name: "container restartPolicy Never overrides the pod's Always",
			pod:  newPod(mains("app", "job"), ctrPolicy("job", v1.ContainerRestartPolicyNever)),
			ctrs: []ctr{running("app"), exited("job", 1)},
			want: Plan{SandboxID: sb},
		},
		{
			name: "restart rule on exit code 42 restarts a container whose policy is Never",
			pod: newPod(never, mains("app", "job"), ctrPolicy("job", v1.ContainerRestartPolicyNever, v1.ContainerRestartRule{
				Action:    v1.ContainerRestartRuleActionRestart,
				ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
			})),
			ctrs: []ctr{exited("app", 42), exited("job", 42)},
			want: Plan{SandboxID: sb, ContainersToStart: []int{1}},
		},
		{
			name:       "container restartPolicy OnFailure: liveness failure restarts it in a Never pod",
			pod:        newPod(never, mains("app"), ctrPolicy("app", v1.ContainerRestartPolicyOnFailure)),
			ctrs:       []ctr{running("app")},
			liveFailed: []string{"app"},
			want: Plan{SandboxID: sb, ContainersToStart: []int{0}, ContainersToKill: map[string]KillInfo{
				"id-app": {Name: "app", Reason: ReasonLivenessProbe, Message: "Container app failed liveness probe, will be restarted"}}},
		},
	})
}

func TestContainerShouldRestartRules(t *testing.T) {
	never := v1.ContainerRestartPolicyNever
	rule := func(op v1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) v1.ContainerRestartRule {
		return v1.ContainerRestartRule{Action: v1.ContainerRestartRuleActionRestart,
			ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}
	}
	c := &v1.Container{Name: "c", RestartPolicy: &never, RestartPolicyRules: []v1.ContainerRestartRule{
		{Action: v1.ContainerRestartRuleActionRestart}, // no exit codes: never matches
		rule(v1.ContainerRestartRuleOnExitCodesOpNotIn, 0, 1),
	}}
	for code, want := range map[int32]bool{0: false, 1: false, 2: true, 137: true} {
		if got := podstatus.ContainerShouldRestart(c, &v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways}, code); got != want {
			t.Errorf("exit %d: got %t, want %t", code, got, want)
		}
	}
	// Rules are only read with a container-level policy.
	c = &v1.Container{Name: "c", RestartPolicyRules: []v1.ContainerRestartRule{rule(v1.ContainerRestartRuleOnExitCodesOpIn, 3)}}
	if podstatus.ContainerShouldRestart(c, &v1.PodSpec{RestartPolicy: v1.RestartPolicyNever}, 3) {
		t.Error("rule applied without a container restartPolicy")
	}
	if !podstatus.ContainerShouldRestart(c, &v1.PodSpec{}, 0) {
		t.Error("an empty pod policy must default to Always")
	}
}
