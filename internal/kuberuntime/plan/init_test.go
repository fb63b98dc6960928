package plan

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestComputePodActionsInitContainers(t *testing.T) {
	never, onFailure := policy(v1.RestartPolicyNever), policy(v1.RestartPolicyOnFailure)
	pod := func(opts ...podOpt) *v1.Pod {
		return newPod(append([]podOpt{inits("migrate", "seed"), mains("app", "log")}, opts...)...)
	}
	runCases(t, []tc{
		{
			name: "no init container started in this sandbox: start the first",
			pod:  pod(),
			want: Plan{SandboxID: sb, InitContainersToStart: []int{0}},
		},
		{
			name: "first init container running: wait",
			pod:  pod(),
			ctrs: []ctr{running("migrate")},
			want: Plan{SandboxID: sb},
		},
		{
			name: "first init container succeeded: start the next",
			pod:  pod(),
			ctrs: []ctr{exited("migrate", 0)},
			want: Plan{SandboxID: sb, InitContainersToStart: []int{1}},
		},
		{
			name: "every init container succeeded: start the main containers",
			pod:  pod(),
			ctrs: []ctr{exited("seed", 0), exited("migrate", 0)},
			want: Plan{SandboxID: sb, ContainersToStart: []int{0, 1}},
		},
		{
			name: "earlier init statuses removed, the last one succeeded: start the mains, not the earlier ones",
			pod:  pod(),
			ctrs: []ctr{exited("seed", 0)},
			want: Plan{SandboxID: sb, ContainersToStart: []int{0, 1}},
		},
		{
			name: "init container failed under OnFailure: start it again",
			pod:  pod(onFailure),
			ctrs: []ctr{exited("seed", 1), exited("migrate", 0)},
			want: Plan{SandboxID: sb, InitContainersToStart: []int{1}},
		},
		{
			name: "init container failed under Always: start it again",
			pod:  pod(),
			ctrs: []ctr{exited("migrate", 137)},
			want: Plan{SandboxID: sb, InitContainersToStart: []int{0}},
		},
		{
			name: "init container failed under Never: the pod failed, kill it",
			pod:  pod(never),
			ctrs: []ctr{exited("seed", 1), exited("migrate", 0)},
			want: Plan{KillPod: true, SandboxID: sb},
		},
		{
			name: "init container OOM-killed with exit 0 counts as failed; Never kills the pod",
			pod:  pod(never),
			ctrs: []ctr{exited("migrate", 0).oom()},
			want: Plan{KillPod: true, SandboxID: sb},
		},
		{
			name: "init container in unknown state under Always: kill it, start it again",
			pod:  pod(),
			ctrs: []ctr{unknown("seed"), exited("migrate", 0)},
			want: Plan{SandboxID: sb, InitContainersToStart: []int{1}, ContainersToKill: map[string]KillInfo{
				"id-seed": {Name: "seed", Reason: ReasonUnknown, Message: `Init container is in "unknown" state, try killing it before restart`}}},
		},
		{
			name: "init container in unknown state under Never: the pod failed",
			pod:  pod(never),
			ctrs: []ctr{unknown("migrate")},
			want: Plan{KillPod: true, SandboxID: sb},
		},
		{
			name: "init container stuck in created: start it again",
			pod:  pod(never),
			ctrs: []ctr{created("seed"), exited("migrate", 0)},
			want: Plan{SandboxID: sb, InitContainersToStart: []int{1}},
		},
		{
			name: "a main container left from an older sandbox does not mean initialized",
			pod:  pod(),
			ctrs: []ctr{exited("app", 0).old(), exited("seed", 0).old()},
			want: Plan{SandboxID: sb, InitContainersToStart: []int{0}},
		},
		{
			name:      "without ActiveContainerStatuses every status counts (the documented fallback)",
			pod:       pod(),
			ctrs:      []ctr{running("app"), running("log")},
			allActive: true,
			want:      Plan{SandboxID: sb},
		},
		{
			name: "initialized (a main container exists), init statuses garbage-collected: do not rerun them",
			pod:  pod(),
			ctrs: []ctr{running("app"), exited("log", 1)},
			want: Plan{SandboxID: sb, ContainersToStart: []int{1}},
		},
	})
}

func TestComputePodActionsSidecars(t *testing.T) {
	never := policy(v1.RestartPolicyNever)
	// proxy: plain sidecar; agent: sidecar with startup and liveness probes; migrate: regular.
	pod := func(opts ...podOpt) *v1.Pod {
		return newPod(append([]podOpt{sidecar("proxy"), sidecar("agent", "startup", "liveness"), inits("migrate"), mains("app")}, opts...)...)
	}
	kill := func(name, reason, msg string) map[string]KillInfo {
		return map[string]KillInfo{"id-" + name: {Name: name, Reason: reason, Message: msg}}
	}
	runCases(t, []tc{
		{
			name: "first sidecar running without startup probe: start the next init container",
			pod:  pod(),
			ctrs: []ctr{running("proxy")},
			want: Plan{SandboxID: sb, InitContainersToStart: []int{1}},
		},
		{
			name: "sidecar with a startup probe not yet succeeded: the next one waits",
			pod:  pod(),
			ctrs: []ctr{running("agent"), running("proxy")},
			want: Plan{SandboxID: sb},
		},
		{
			name:      "sidecar startup probe succeeded: start the next init container",
			pod:       pod(),
			ctrs:      []ctr{running("agent"), running("proxy")},
			startupOK: []string{"agent"},
			want:      Plan{SandboxID: sb, InitContainersToStart: []int{2}},
		},
		{
			name:          "sidecar startup probe failed: kill and restart it, the next still waits",
			pod:           pod(),
			ctrs:          []ctr{running("agent"), running("proxy")},
			startupFailed: []string{"agent"},
			want: Plan{SandboxID: sb, InitContainersToStart: []int{1},
				ContainersToKill: kill("agent", ReasonStartupProbe, "Init container agent failed startup probe")},
		},
		{
			name:      "sidecars up, regular init container succeeded: start the mains, keep sidecars",
			pod:       pod(),
			ctrs:      []ctr{exited("migrate", 0), running("agent"), running("proxy")},
			startupOK: []string{"agent"},
			want:      Plan{SandboxID: sb, ContainersToStart: []int{0}},
		},
		{
			name:      "sidecars up, regular init container running: wait",
			pod:       pod(),
			ctrs:      []ctr{running("migrate"), running("agent"), running("proxy")},
			startupOK: []string{"agent"},
			want:      Plan{SandboxID: sb},
		},
		{
			name:      "sidecar exited while the mains run: restart it, even under Never",
			pod:       pod(never),
			ctrs:      []ctr{running("app"), exited("migrate", 0), running("agent"), exited("proxy", 1)},
			startupOK: []string{"agent"},
			want:      Plan{SandboxID: sb, InitContainersToStart: []int{0}},
		},
		{
			name:      "sidecar exited during initialization: restart it along with the next init container",
			pod:       pod(),
			ctrs:      []ctr{running("agent"), exited("proxy", 0)},
			startupOK: []string{"agent"},
			want:      Plan{SandboxID: sb, InitContainersToStart: []int{0, 2}},
		},
		{
			name:      "sidecar image changed: kill and restart it, the mains keep running",
			pod:       pod(),
			ctrs:      []ctr{running("app"), exited("migrate", 0), running("agent"), running("proxy").hashChanged()},
			startupOK: []string{"agent"},
			want: Plan{SandboxID: sb, InitContainersToStart: []int{0},
				ContainersToKill: kill("proxy", ReasonDefinitionChanged, "Init container proxy definition changed")},
		},
		{
			name:       "sidecar liveness failed: kill and restart it",
			pod:        pod(),
			ctrs:       []ctr{running("app"), exited("migrate", 0), running("agent"), running("proxy")},
			startupOK:  []string{"agent"},
			liveFailed: []string{"agent"},
			want: Plan{SandboxID: sb, InitContainersToStart: []int{1},
				ContainersToKill: kill("agent", ReasonLivenessProbe, "Init container agent failed liveness probe")},
		},
		{
			name:       "liveness of a sidecar without a liveness probe is ignored",
			pod:        pod(),
			ctrs:       []ctr{running("app"), exited("migrate", 0), running("agent"), running("proxy")},
			startupOK:  []string{"agent"},
			liveFailed: []string{"proxy"},
			want:       Plan{SandboxID: sb},
		},
		{
			name: "sidecar in unknown state: kill and restart it",
			pod:  pod(never),
			ctrs: []ctr{running("app"), exited("migrate", 0), running("agent"), unknown("proxy")},
			want: Plan{SandboxID: sb, InitContainersToStart: []int{0},
				ContainersToKill: kill("proxy", ReasonUnknown, `Init container is in "unknown" state, try killing it before restart`)},
		},
		{
			name: "sidecar statuses gone after initialization: start the sidecars again",
			pod:  pod(),
			ctrs: []ctr{running("app")},
			want: Plan{SandboxID: sb, InitContainersToStart: []int{0, 1}},
		},
		{
			name: "last init container is a sidecar: once it runs, start the mains",
			pod:  newPod(inits("migrate"), sidecar("proxy"), mains("app", "log")),
			ctrs: []ctr{running("proxy"), exited("migrate", 0)},
			want: Plan{SandboxID: sb, ContainersToStart: []int{0, 1}},
		},
		{
			name:      "Never: mains all done while sidecars run: kill the pod, do not restart sidecars",
			pod:       pod(never),
			ctrs:      []ctr{exited("app", 0), exited("migrate", 0), running("agent"), exited("proxy", 2)},
			startupOK: []string{"agent"},
			want:      Plan{KillPod: true, SandboxID: sb},
		},
		{
			name: "sidecar stuck in created: start it again",
			pod:  pod(),
			ctrs: []ctr{created("proxy")},
			want: Plan{SandboxID: sb, InitContainersToStart: []int{0}},
		},
	})
}
