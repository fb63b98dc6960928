package plan

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
)

func TestComputePodActionsSandbox(t *testing.T) {
	runCases(t, []tc{
		{
			name:      "new pod: no sandbox, create one and start every main container",
			pod:       newPod(mains("app", "log")),
			sandboxes: noSandbox,
			want:      Plan{KillPod: true, CreateSandbox: true, ContainersToStart: []int{0, 1}},
		},
		{
			name:      "new pod with init containers: create a sandbox and start the first init container only",
			pod:       newPod(inits("migrate", "seed"), mains("app")),
			sandboxes: noSandbox,
			want:      Plan{KillPod: true, CreateSandbox: true, InitContainersToStart: []int{0}},
		},
		{
			name:      "new pod whose first init container is a sidecar: still only index 0",
			pod:       newPod(sidecar("proxy"), sidecar("agent"), mains("app")),
			sandboxes: noSandbox,
			want:      Plan{KillPod: true, CreateSandbox: true, InitContainersToStart: []int{0}},
		},
		{
			name:      "sandbox not ready under Always: recreate it with the next attempt, restart everything",
			pod:       newPod(mains("app", "log")),
			sandboxes: []*runtimeapi.PodSandboxStatus{sandbox(sb, false, 3)},
			ctrs:      []ctr{exited("app", 137), exited("log", 0)},
			want:      Plan{KillPod: true, CreateSandbox: true, SandboxID: sb, Attempt: 4, ContainersToStart: []int{0, 1}},
		},
		{
			name:      "sandbox not ready under OnFailure: restart all but the succeeded container",
			pod:       newPod(policy(v1.RestartPolicyOnFailure), mains("app", "job", "log")),
			sandboxes: []*runtimeapi.PodSandboxStatus{sandbox(sb, false, 0)},
			ctrs:      []ctr{running("app"), exited("job", 0), exited("log", 1)},
			want:      Plan{KillPod: true, CreateSandbox: true, SandboxID: sb, Attempt: 1, ContainersToStart: []int{0, 2}},
		},
		{
			name:      "an older sandbox is ready but the newest is not: recreate from the newest",
			pod:       newPod(mains("app")),
			sandboxes: []*runtimeapi.PodSandboxStatus{sandbox("sb2", false, 1), sandbox(sb, true, 0)},
			ctrs:      []ctr{running("app")},
			want:      Plan{KillPod: true, CreateSandbox: true, SandboxID: "sb2", Attempt: 2, ContainersToStart: []int{0}},
		},
		{
			name:      "two ready sandboxes: reconcile by recreating",
			pod:       newPod(mains("app")),
			sandboxes: []*runtimeapi.PodSandboxStatus{sandbox("sb2", true, 1), sandbox(sb, true, 0)},
			ctrs:      []ctr{running("app")},
			want:      Plan{KillPod: true, CreateSandbox: true, SandboxID: "sb2", Attempt: 2, ContainersToStart: []int{0}},
		},
		{
			name: "hostNetwork turned on: the pod-network sandbox is replaced, with no SandboxID as upstream",
			pod:  newPod(hostNetwork(), mains("app")),
			ctrs: []ctr{running("app")},
			want: Plan{KillPod: true, CreateSandbox: true, Attempt: 1, ContainersToStart: []int{0}},
		},
		{
			name:      "hostNetwork turned off: the node-network sandbox is replaced",
			pod:       newPod(mains("app")),
			sandboxes: []*runtimeapi.PodSandboxStatus{sandbox(sb, true, 5, nodeNetNS, noIP)},
			ctrs:      []ctr{running("app")},
			want:      Plan{KillPod: true, CreateSandbox: true, Attempt: 6, ContainersToStart: []int{0}},
		},
		{
			name:      "pod network sandbox without an IP: recreate it",
			pod:       newPod(mains("app")),
			sandboxes: []*runtimeapi.PodSandboxStatus{sandbox(sb, true, 0, noIP)},
			ctrs:      []ctr{running("app")},
			want:      Plan{KillPod: true, CreateSandbox: true, SandboxID: sb, Attempt: 1, ContainersToStart: []int{0}},
		},
		{
			name:      "host network sandbox without an IP is fine",
			pod:       newPod(hostNetwork(), mains("app")),
			sandboxes: []*runtimeapi.PodSandboxStatus{sandbox(sb, true, 2, nodeNetNS, noIP)},
			ctrs:      []ctr{running("app")},
			want:      Plan{SandboxID: sb, Attempt: 2},
		},
		{
			name:      "restartPolicy Never, sandbox died after containers ran: only kill, no new sandbox",
			pod:       newPod(policy(v1.RestartPolicyNever), mains("app", "log")),
			sandboxes: []*runtimeapi.PodSandboxStatus{sandbox(sb, false, 1)},
			ctrs:      []ctr{exited("app", 0), running("log")},
			want:      Plan{KillPod: true, SandboxID: sb, Attempt: 2},
		},
		{
			name:      "restartPolicy Never, sandbox died before any container was created: retry the sandbox",
			pod:       newPod(policy(v1.RestartPolicyNever), mains("app")),
			sandboxes: []*runtimeapi.PodSandboxStatus{sandbox(sb, false, 2)},
			want:      Plan{KillPod: true, CreateSandbox: true, SandboxID: sb, Attempt: 3, ContainersToStart: []int{0}},
		},
		{
			name:      "restartPolicy Never, no sandbox at all but old containers (attempt 0): create, as upstream",
			pod:       newPod(policy(v1.RestartPolicyNever), mains("app")),
			sandboxes: noSandbox,
			ctrs:      []ctr{exited("app", 1).old()},
			want:      Plan{KillPod: true, CreateSandbox: true, ContainersToStart: []int{0}},
		},
		{
			name:      "restartPolicy Never, init container failed and sandbox died: only kill",
			pod:       newPod(policy(v1.RestartPolicyNever), inits("migrate"), mains("app")),
			sandboxes: []*runtimeapi.PodSandboxStatus{sandbox(sb, false, 0)},
			ctrs:      []ctr{exited("migrate", 1)},
			want:      Plan{KillPod: true, SandboxID: sb, Attempt: 1},
		},
		{
			name:      "OnFailure, every main container succeeded and the sandbox died: only kill",
			pod:       newPod(policy(v1.RestartPolicyOnFailure), inits("migrate"), mains("app", "log")),
			sandboxes: []*runtimeapi.PodSandboxStatus{sandbox(sb, false, 1)},
			ctrs:      []ctr{exited("app", 0), exited("log", 0), exited("migrate", 0)},
			want:      Plan{KillPod: true, SandboxID: sb, Attempt: 2},
		},
		{
			name:      "OnFailure, sandbox died during initialization: recreate and restart initialization",
			pod:       newPod(policy(v1.RestartPolicyOnFailure), inits("migrate", "seed"), mains("app")),
			sandboxes: []*runtimeapi.PodSandboxStatus{sandbox(sb, false, 0)},
			ctrs:      []ctr{exited("seed", 1), exited("migrate", 0)},
			want:      Plan{KillPod: true, CreateSandbox: true, SandboxID: sb, Attempt: 1, InitContainersToStart: []int{0}},
		},
	})
}

func TestSandboxChangedMessages(t *testing.T) {
	pod := newPod(mains("app"))
	for _, c := range []struct {
		name string
		sbx  []*runtimeapi.PodSandboxStatus
		pod  *v1.Pod
		want SandboxCheck
	}{
		{"none", nil, pod, SandboxCheck{Changed: true, Message: MsgNoPodSandbox}},
		{"ready", []*runtimeapi.PodSandboxStatus{sandbox(sb, true, 4)}, pod, SandboxCheck{Attempt: 4, SandboxID: sb}},
		{"not ready", []*runtimeapi.PodSandboxStatus{sandbox(sb, false, 4)}, pod,
			SandboxCheck{Changed: true, Attempt: 5, SandboxID: sb, Message: MsgSandboxNotReady}},
		{"two ready", []*runtimeapi.PodSandboxStatus{sandbox("b", true, 1), sandbox("a", true, 0)}, pod,
			SandboxCheck{Changed: true, Attempt: 2, SandboxID: "b", Message: MsgMultipleSandboxes}},
		{"netns", []*runtimeapi.PodSandboxStatus{sandbox(sb, true, 0)}, newPod(hostNetwork(), mains("app")),
			SandboxCheck{Changed: true, Attempt: 1, Message: MsgNetworkNamespaceMode}},
		{"no ip", []*runtimeapi.PodSandboxStatus{sandbox(sb, true, 0, noIP)}, pod,
			SandboxCheck{Changed: true, Attempt: 1, SandboxID: sb, Message: MsgNoIPAddress}},
		{"no network status at all is not 'no IP'", []*runtimeapi.PodSandboxStatus{
			sandbox(sb, true, 0, func(s *runtimeapi.PodSandboxStatus) { s.Network = nil })}, pod,
			SandboxCheck{SandboxID: sb}},
		{"missing metadata does not panic", []*runtimeapi.PodSandboxStatus{
			sandbox(sb, false, 0, func(s *runtimeapi.PodSandboxStatus) { s.Metadata = nil })}, pod,
			SandboxCheck{Changed: true, Attempt: 1, SandboxID: sb, Message: MsgSandboxNotReady}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := SandboxChanged(c.pod, &container.PodStatus{SandboxStatuses: c.sbx})
			if got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
	if got := SandboxChanged(pod, nil); got != (SandboxCheck{Changed: true, Message: MsgNoPodSandbox}) {
		t.Errorf("nil status: %+v", got)
	}
}

func TestComputePodActionsNilInputs(t *testing.T) {
	if p := ComputePodActions(Input{}); !p.IsEmpty() {
		t.Errorf("nil pod: %v", p)
	}
	p := ComputePodActions(Input{Pod: newPod(mains("app"))})
	want := Plan{KillPod: true, CreateSandbox: true, ContainersToStart: []int{0}}
	if p.String() != want.String() {
		t.Errorf("nil status: got %v, want %v", p, want)
	}
}
