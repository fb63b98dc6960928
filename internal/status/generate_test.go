package status

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/prober/probeview"
)

type genCase struct {
	name  string
	in    Input
	check func(t *testing.T, s v1.PodStatus)
}

func TestGenerate(t *testing.T) {
	for _, tc := range generateCases() {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			if in.Now.IsZero() {
				in.Now = now
			}
			if in.HostIPs == nil {
				in.HostIPs = []string{"192.168.1.10"}
			}
			before := *in.Pod.DeepCopy()
			oldBefore := *in.Old.DeepCopy()
			s := Generate(in)
			if !equality.Semantic.DeepEqual(before, *in.Pod) || !equality.Semantic.DeepEqual(oldBefore, in.Old) {
				t.Error("Generate modified its input")
			}
			if again := Generate(in); !equality.Semantic.DeepEqual(s, again) {
				t.Error("Generate is not deterministic")
			}
			if c := findCondition(s.Conditions, v1.PodScheduled); c == nil || c.Status != v1.ConditionTrue {
				t.Errorf("PodScheduled = %+v, want True", c)
			}
			tc.check(t, s)
		})
	}
}

func generateCases() []genCase {
	crash := map[string]WaitingReason{"app": {"CrashLoopBackOff", "back-off 10s restarting failed container=app pod=web_default(uid-1)"}}
	readiness := &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
	return []genCase{
		{name: "pending without sandbox", in: Input{Pod: podOf(v1.RestartPolicyAlways, "app")},
			check: func(t *testing.T, s v1.PodStatus) {
				wantPhase(t, s, v1.PodPending)
				wantWaiting(t, s, "app", ReasonContainerCreating)
				wantCond(t, s, v1.PodReadyToStartContainers, v1.ConditionFalse, ReasonPodSandboxNotReady, "no pod sandbox exists")
				wantCond(t, s, v1.PodInitialized, v1.ConditionTrue, "", "")
				wantCond(t, s, v1.ContainersReady, v1.ConditionFalse, ReasonContainersNotReady, "containers with unready status: [app]")
				wantCond(t, s, v1.PodReady, v1.ConditionFalse, ReasonContainersNotReady, "containers with unready status: [app]")
				if s.PodIP != "" || s.HostIP != "192.168.1.10" || len(s.HostIPs) != 1 {
					t.Errorf("podIP %q hostIP %q hostIPs %v", s.PodIP, s.HostIP, s.HostIPs)
				}
				if s.StartTime == nil || !s.StartTime.Time.Equal(now.Truncate(1e9)) {
					t.Errorf("startTime = %v, want now at second precision", s.StartTime)
				}
				if c := cstatus(t, s, "app"); c.Started == nil || *c.Started || c.Ready || c.Image != "busybox:1.36" {
					t.Errorf("app = %+v", c)
				}
			}},
		{name: "init container running", in: Input{
			Pod:     withInit(podOf(v1.RestartPolicyAlways, "app"), initC("setup")),
			Runtime: rtOf(readySandbox(), running("setup", "i1", at(1), 0))},
			check: func(t *testing.T, s v1.PodStatus) {
				wantPhase(t, s, v1.PodPending)
				wantWaiting(t, s, "app", ReasonPodInitializing)
				if c := cstatus(t, s, "setup"); c.State.Running == nil || c.ContainerID != "containerd://i1" {
					t.Errorf("setup = %+v", c)
				}
				wantCond(t, s, v1.PodInitialized, v1.ConditionFalse, ReasonContainersNotInitialized, "containers with incomplete status: [setup]")
				wantCond(t, s, v1.PodReadyToStartContainers, v1.ConditionTrue, "", "")
			}},
		{name: "init failed with Never fails the pod", in: Input{
			Pod:     withInit(podOf(v1.RestartPolicyNever, "app"), initC("setup")),
			Runtime: rtOf(readySandbox(), exited("setup", "i1", at(1), at(2), 1, "Error", 0))},
			check: func(t *testing.T, s v1.PodStatus) {
				wantPhase(t, s, v1.PodFailed)
				wantTerminated(t, cstatus(t, s, "setup").State, 1, "Error")
				wantWaiting(t, s, "app", ReasonPodInitializing)
				wantCond(t, s, v1.ContainersReady, v1.ConditionFalse, ReasonPodFailed, "")
				wantCond(t, s, v1.PodReady, v1.ConditionFalse, ReasonPodFailed, "")
			}},
		{name: "init crash looping with OnFailure stays pending", in: Input{
			Pod:     withInit(podOf(v1.RestartPolicyOnFailure, "app"), initC("setup")),
			Runtime: rtOf(readySandbox(), exited("setup", "i1", at(1), at(2), 1, "Error", 0)),
			Waiting: map[string]WaitingReason{"setup": {"CrashLoopBackOff", "back-off"}}},
			check: func(t *testing.T, s v1.PodStatus) {
				wantPhase(t, s, v1.PodPending)
				wantWaiting(t, s, "setup", "CrashLoopBackOff")
				wantTerminated(t, cstatus(t, s, "setup").LastTerminationState, 1, "Error")
			}},
		{name: "init completed, main running", in: Input{
			Pod:     withInit(podOf(v1.RestartPolicyAlways, "app"), initC("setup")),
			Runtime: rtOf(readySandbox(), running("app", "m1", at(3), 0), exited("setup", "i1", at(1), at(2), 0, "Completed", 0))},
			check: func(t *testing.T, s v1.PodStatus) {
				wantPhase(t, s, v1.PodRunning)
				c := cstatus(t, s, "setup")
				wantTerminated(t, c.State, 0, ReasonCompleted)
				if !c.Ready || c.Started == nil || *c.Started {
					t.Errorf("completed init: ready %v started %v, want true false", c.Ready, c.Started)
				}
				wantCond(t, s, v1.PodInitialized, v1.ConditionTrue, "", "")
				wantCond(t, s, v1.PodReady, v1.ConditionTrue, "", "")
			}},
		{name: "all running is Running and Ready", in: Input{
			Pod:     podOf(v1.RestartPolicyAlways, "app", "log"),
			Runtime: rtOf(readySandbox(), running("log", "c2", at(2), 0), running("app", "c1", at(1), 0))},
			check: func(t *testing.T, s v1.PodStatus) {
				wantPhase(t, s, v1.PodRunning)
				wantCond(t, s, v1.ContainersReady, v1.ConditionTrue, "", "")
				wantCond(t, s, v1.PodReady, v1.ConditionTrue, "", "")
				if s.ContainerStatuses[0].Name != "app" || s.ContainerStatuses[1].Name != "log" {
					t.Errorf("order = %s, %s", s.ContainerStatuses[0].Name, s.ContainerStatuses[1].Name)
				}
				c := cstatus(t, s, "app")
				if !c.Ready || c.Started == nil || !*c.Started || c.ContainerID != "containerd://c1" || c.ImageID != "sha256:aaa" ||
					c.State.Running == nil || !c.State.Running.StartedAt.Time.Equal(at(1)) || c.Resources == nil {
					t.Errorf("app = %+v", c)
				}
				if s.PodIP != "10.1.0.5" || len(s.PodIPs) != 1 || s.QOSClass != v1.PodQOSBestEffort {
					t.Errorf("podIP %q podIPs %v qos %s", s.PodIP, s.PodIPs, s.QOSClass)
				}
			}},
		{name: "failing readiness lists the unready containers", in: func() Input {
			p := podOf(v1.RestartPolicyAlways, "a", "b", "c")
			for i := range p.Spec.Containers {
				p.Spec.Containers[i].ReadinessProbe = readiness
			}
			return Input{Pod: p, Probes: probeview.View{Ready: map[string]bool{"a": true, "b": false}},
				Runtime: rtOf(readySandbox(), running("a", "1", at(1), 0), running("b", "2", at(1), 0), running("c", "3", at(1), 0))}
		}(),
			check: func(t *testing.T, s v1.PodStatus) {
				wantPhase(t, s, v1.PodRunning)
				wantCond(t, s, v1.ContainersReady, v1.ConditionFalse, ReasonContainersNotReady, "containers with unready status: [b c]")
				wantCond(t, s, v1.PodReady, v1.ConditionFalse, ReasonContainersNotReady, "containers with unready status: [b c]")
			}},
		{name: "CrashLoopBackOff keeps the last termination", in: Input{
			Pod: podOf(v1.RestartPolicyAlways, "app"), Waiting: crash,
			Runtime: rtOf(readySandbox(), exited("app", "c2", at(5), at(6), 1, "Error", 1), exited("app", "c1", at(1), at(2), 2, "Error", 0))},
			check: func(t *testing.T, s v1.PodStatus) {
				wantPhase(t, s, v1.PodRunning)
				c := cstatus(t, s, "app")
				if c.State.Waiting == nil || c.State.Waiting.Reason != "CrashLoopBackOff" || c.State.Waiting.Message != crash["app"].Message {
					t.Errorf("state = %+v", c.State)
				}
				wantTerminated(t, c.LastTerminationState, 1, "Error")
				if c.RestartCount != 1 || c.ContainerID != "containerd://c2" || c.Ready {
					t.Errorf("app = %+v", c)
				}
			}},
		{name: "restarted after OOM shows OOMKilled as last state", in: Input{
			Pod:     podOf(v1.RestartPolicyAlways, "app"),
			Runtime: rtOf(readySandbox(), running("app", "c2", at(5), 1), exited("app", "c1", at(1), at(2), 137, "OOMKilled", 0))},
			check: func(t *testing.T, s v1.PodStatus) {
				c := cstatus(t, s, "app")
				wantTerminated(t, c.LastTerminationState, 137, "OOMKilled")
				if c.State.Running == nil || c.RestartCount != 1 {
					t.Errorf("app = %+v", c)
				}
			}},
		{name: "OnFailure exit 0 succeeds", in: Input{
			Pod:     podOf(v1.RestartPolicyOnFailure, "app"),
			Runtime: rtOf(readySandbox(), exited("app", "c1", at(1), at(2), 0, "Completed", 0))},
			check: func(t *testing.T, s v1.PodStatus) {
				wantPhase(t, s, v1.PodSucceeded)
				wantTerminated(t, cstatus(t, s, "app").State, 0, ReasonCompleted)
				wantCond(t, s, v1.PodInitialized, v1.ConditionTrue, ReasonPodCompleted, "")
				wantCond(t, s, v1.ContainersReady, v1.ConditionFalse, ReasonPodCompleted, "")
				wantCond(t, s, v1.PodReady, v1.ConditionFalse, ReasonPodCompleted, "")
			}},
		{name: "Never exit 3 fails with Error", in: Input{
			Pod:     podOf(v1.RestartPolicyNever, "app"),
			Runtime: rtOf(readySandbox(), exited("app", "c1", at(1), at(2), 3, "", 0))},
			check: func(t *testing.T, s v1.PodStatus) {
				wantPhase(t, s, v1.PodFailed)
				c := cstatus(t, s, "app")
				wantTerminated(t, c.State, 3, ReasonError)
				if tt := c.State.Terminated; tt.ContainerID != "containerd://c1" || !tt.StartedAt.Time.Equal(at(1)) || !tt.FinishedAt.Time.Equal(at(2)) {
					t.Errorf("terminated = %+v", tt)
				}
			}},
		{name: "OOMKilled with Never fails", in: Input{
			Pod:     podOf(v1.RestartPolicyNever, "app"),
			Runtime: rtOf(readySandbox(), exited("app", "c1", at(1), at(2), 137, "OOMKilled", 0))},
			check: func(t *testing.T, s v1.PodStatus) {
				wantPhase(t, s, v1.PodFailed)
				wantTerminated(t, cstatus(t, s, "app").State, 137, "OOMKilled")
			}},
		{name: "ErrImagePull waiting", in: Input{
			Pod: podOf(v1.RestartPolicyAlways, "app"), Runtime: rtOf(readySandbox()),
			Waiting: map[string]WaitingReason{"app": {"ErrImagePull", "pull access denied"}}},
			check: func(t *testing.T, s v1.PodStatus) {
				wantPhase(t, s, v1.PodPending)
				wantWaiting(t, s, "app", "ErrImagePull")
				if m := cstatus(t, s, "app").State.Waiting.Message; m != "pull access denied" {
					t.Errorf("message = %q", m)
				}
			}},
		{name: "ImagePullBackOff waiting", in: Input{
			Pod: podOf(v1.RestartPolicyAlways, "app"), Runtime: rtOf(readySandbox()),
			Waiting: map[string]WaitingReason{"app": {"ImagePullBackOff", "Back-off pulling image"}}},
			check: func(t *testing.T, s v1.PodStatus) {
				wantPhase(t, s, v1.PodPending)
				wantWaiting(t, s, "app", "ImagePullBackOff")
			}},
		{name: "sidecar running while main exited 0 with Never is still Running (as upstream)", in: Input{
			Pod:     withInit(podOf(v1.RestartPolicyNever, "app"), sidecar("proxy")),
			Runtime: rtOf(readySandbox(), exited("app", "c1", at(2), at(3), 0, "Completed", 0), running("proxy", "p1", at(1), 0))},
			check: func(t *testing.T, s v1.PodStatus) {
				wantPhase(t, s, v1.PodRunning)
				if c := cstatus(t, s, "proxy"); c.Started == nil || !*c.Started || !c.Ready {
					t.Errorf("proxy = %+v", c)
				}
			}},
		{name: "sidecar stopped and main exited 0 with Never succeeds", in: Input{
			Pod:     withInit(podOf(v1.RestartPolicyNever, "app"), sidecar("proxy")),
			Runtime: rtOf(readySandbox(), exited("app", "c1", at(2), at(3), 0, "Completed", 0), exited("proxy", "p1", at(1), at(4), 143, "Error", 0))},
			check: func(t *testing.T, s v1.PodStatus) {
				wantPhase(t, s, v1.PodSucceeded)
				wantCond(t, s, v1.PodReady, v1.ConditionFalse, ReasonPodCompleted, "")
			}},
		{name: "QoS Guaranteed", in: func() Input {
			p := podOf(v1.RestartPolicyAlways, "app")
			p.Spec.Containers[0].Resources = resources("1", "1", "1Gi", "1Gi")
			return Input{Pod: p}
		}(), check: func(t *testing.T, s v1.PodStatus) {
			if s.QOSClass != v1.PodQOSGuaranteed {
				t.Errorf("qos = %s", s.QOSClass)
			}
		}},
		{name: "QoS Burstable", in: func() Input {
			p := podOf(v1.RestartPolicyAlways, "app", "log")
			p.Spec.Containers[0].Resources = resources("1", "1", "1Gi", "1Gi")
			return Input{Pod: p}
		}(), check: func(t *testing.T, s v1.PodStatus) {
			if s.QOSClass != v1.PodQOSBurstable {
				t.Errorf("qos = %s", s.QOSClass)
			}
		}},
		{name: "QoS BestEffort", in: Input{Pod: podOf(v1.RestartPolicyAlways, "app", "log")},
			check: func(t *testing.T, s v1.PodStatus) {
				if s.QOSClass != v1.PodQOSBestEffort {
					t.Errorf("qos = %s", s.QOSClass)
				}
			}},
		{name: "dual-stack pod IPs follow an IPv4 node", in: Input{
			Pod: podOf(v1.RestartPolicyAlways, "app"), HostIPs: []string{"192.168.1.10", "fd00::10"},
			Runtime: rtOf(sandbox(true, t0, "fd00:0:0:0::5", "10.1.0.5", "10.1.0.6"))},
			check: func(t *testing.T, s v1.PodStatus) {
				if s.PodIP != "10.1.0.5" || len(s.PodIPs) != 2 || s.PodIPs[1].IP != "fd00::5" {
					t.Errorf("podIP %q podIPs %v", s.PodIP, s.PodIPs)
				}
				if len(s.HostIPs) != 2 || s.HostIPs[1].IP != "fd00::10" {
					t.Errorf("hostIPs %v", s.HostIPs)
				}
			}},
		{name: "dual-stack pod IPs follow an IPv6 node", in: Input{
			Pod: podOf(v1.RestartPolicyAlways, "app"), HostIPs: []string{"fd00::10", "192.168.1.10"},
			Runtime: rtOf(sandbox(true, t0, "10.1.0.5", "fd00::5"))},
			check: func(t *testing.T, s v1.PodStatus) {
				if s.PodIP != "fd00::5" || len(s.PodIPs) != 2 || s.PodIPs[1].IP != "10.1.0.5" {
					t.Errorf("podIP %q podIPs %v", s.PodIP, s.PodIPs)
				}
			}},
	}
}

func TestGenerateKeepsTransitionTimes(t *testing.T) {
	pod := podOf(v1.RestartPolicyAlways, "app")
	in := Input{Pod: pod, Now: at(10), HostIPs: []string{"192.168.1.10"},
		Runtime: rtOf(readySandbox(), running("app", "c1", at(1), 0))}
	first := Generate(in)
	in.Old, in.Now = first, at(100)
	second := Generate(in)
	for _, c := range second.Conditions {
		if !c.LastTransitionTime.Time.Equal(at(10)) {
			t.Errorf("%s lastTransitionTime = %v, want the first generation's", c.Type, c.LastTransitionTime)
		}
	}
	if !second.StartTime.Time.Equal(at(10)) {
		t.Errorf("startTime = %v, want kept", second.StartTime)
	}
	// Readiness changes: Ready and ContainersReady move, the others stay.
	pod.Spec.Containers[0].ReadinessProbe = &v1.Probe{}
	in.Old, in.Now = second, at(200)
	third := Generate(in)
	for _, c := range third.Conditions {
		want := at(10)
		if c.Type == v1.PodReady || c.Type == v1.ContainersReady {
			want = at(200)
		}
		if !c.LastTransitionTime.Time.Equal(want) {
			t.Errorf("%s (%s) lastTransitionTime = %v, want %v", c.Type, c.Status, c.LastTransitionTime.Time, want)
		}
	}
}

func TestGenerateMoreCases(t *testing.T) {
	base := func() Input {
		return Input{Pod: podOf(v1.RestartPolicyAlways, "app"), Now: now, HostIPs: []string{"192.168.1.10", "fd00::10"}}
	}
	t.Run("host network takes the node's IPs", func(t *testing.T) {
		in := base()
		in.Pod.Spec.HostNetwork = true
		sb := sandbox(true, t0)
		sb.Linux.Namespaces.Options.Network = runtimeapi.NamespaceMode_NODE
		in.Runtime = rtOf(sb)
		s := Generate(in)
		if s.PodIP != "192.168.1.10" || len(s.PodIPs) != 2 || s.PodIPs[1].IP != "fd00::10" {
			t.Errorf("podIPs %v", s.PodIPs)
		}
		wantCond(t, s, v1.PodReadyToStartContainers, v1.ConditionTrue, "", "")
	})
	t.Run("exited sandbox is not ready and has no IP", func(t *testing.T) {
		in := base()
		in.Runtime = rtOf(sandbox(false, t0, "10.1.0.5"))
		s := Generate(in)
		wantCond(t, s, v1.PodReadyToStartContainers, v1.ConditionFalse, ReasonPodSandboxNotReady, "pod sandbox is not ready")
		if s.PodIP != "" {
			t.Errorf("podIP = %q", s.PodIP)
		}
	})
	t.Run("readiness gate without its condition", func(t *testing.T) {
		in := base()
		in.Pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "example.com/lb"}}
		in.Runtime = rtOf(readySandbox(), running("app", "c1", at(1), 0))
		s := Generate(in)
		wantCond(t, s, v1.ContainersReady, v1.ConditionTrue, "", "")
		wantCond(t, s, v1.PodReady, v1.ConditionFalse, ReasonReadinessGatesNotReady,
			`corresponding condition of pod readiness gate "example.com/lb" does not exist.`)
	})
	t.Run("a running container the runtime lost terminated", func(t *testing.T) {
		in := base()
		in.Runtime = rtOf(readySandbox(), running("app", "c1", at(1), 0))
		in.Old = Generate(in)
		in.Runtime = rtOf(readySandbox())
		s := Generate(in)
		c := cstatus(t, s, "app")
		wantTerminated(t, c.LastTerminationState, 137, ReasonContainerStatusUnknown)
		if c.RestartCount != 1 || c.State.Waiting == nil {
			t.Errorf("app = %+v", c)
		}
		wantPhase(t, s, v1.PodRunning)
	})
	t.Run("terminal phase and its reason stay", func(t *testing.T) {
		in := base()
		in.Pod.Spec.RestartPolicy = v1.RestartPolicyNever
		in.Runtime = rtOf(readySandbox(), exited("app", "c1", at(1), at(2), 0, "Completed", 0))
		in.Old = Generate(in)
		in.Old.Reason = "Custom"
		in.Runtime = nil // containers and sandbox removed
		s := Generate(in)
		wantPhase(t, s, v1.PodSucceeded)
		wantTerminated(t, cstatus(t, s, "app").State, 0, ReasonCompleted)
		if s.Reason != "Custom" {
			t.Errorf("reason = %q", s.Reason)
		}
	})
	t.Run("active deadline exceeded", func(t *testing.T) {
		in := base()
		in.Pod.Spec.ActiveDeadlineSeconds = ptr(int64(30))
		in.Runtime = rtOf(readySandbox(), running("app", "c1", at(1), 0))
		in.Old = v1.PodStatus{Phase: v1.PodRunning, StartTime: &metav1.Time{Time: t0}}
		s := Generate(in)
		if s.Phase != v1.PodFailed || s.Reason != ReasonDeadlineExceeded || s.Message != MessageDeadlineExceeded {
			t.Errorf("phase %s reason %q message %q", s.Phase, s.Reason, s.Message)
		}
	})
	t.Run("startup probe gates started and ready", func(t *testing.T) {
		in := base()
		in.Pod.Spec.Containers[0].StartupProbe = &v1.Probe{}
		in.Runtime = rtOf(readySandbox(), running("app", "c1", at(1), 0))
		if c := cstatus(t, Generate(in), "app"); c.Started == nil || *c.Started || c.Ready {
			t.Errorf("without a result: started %v ready %v", *c.Started, c.Ready)
		}
		in.Probes.Started = map[string]bool{"app": true}
		if c := cstatus(t, Generate(in), "app"); !*c.Started || !c.Ready {
			t.Errorf("with a result: started %v ready %v", *c.Started, c.Ready)
		}
	})
	t.Run("terminal pod worker finishes a non-static Always pod", func(t *testing.T) {
		in := base()
		in.PodIsTerminal = true
		in.Runtime = rtOf(readySandbox(), exited("app", "c1", at(1), at(2), 137, "Error", 0))
		wantPhase(t, Generate(in), v1.PodRunning) // static: upstream leaves it to restart
		in.Pod.Annotations[podconfig.ConfigSourceAnnotationKey] = podconfig.APISource
		wantPhase(t, Generate(in), v1.PodFailed)
	})
	t.Run("messages capped and times truncated", func(t *testing.T) {
		in := base()
		in.Pod.Spec.RestartPolicy = v1.RestartPolicyNever
		cs := exited("app", "c1", at(1).Add(300e6), at(2).Add(700e6), 1, "Error", 0)
		cs.Message = string(make([]byte, 20000))
		in.Runtime = rtOf(readySandbox(), cs)
		tt := cstatus(t, Generate(in), "app").State.Terminated
		if len(tt.Message) != maxPodTerminationMessageLength || !tt.StartedAt.Time.Equal(at(1)) || !tt.FinishedAt.Time.Equal(at(2)) {
			t.Errorf("message %d bytes, started %v finished %v", len(tt.Message), tt.StartedAt, tt.FinishedAt)
		}
	})
	t.Run("container restart rule restarts under Never", func(t *testing.T) {
		in := base()
		in.Pod.Spec.RestartPolicy = v1.RestartPolicyNever
		never := v1.ContainerRestartPolicyNever
		in.Pod.Spec.Containers[0].RestartPolicy = &never
		in.Pod.Spec.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestart,
			ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
		in.Runtime = rtOf(readySandbox(), exited("app", "c1", at(1), at(2), 42, "Error", 0))
		wantPhase(t, Generate(in), v1.PodRunning)
		in.Runtime = rtOf(readySandbox(), exited("app", "c1", at(1), at(2), 1, "Error", 0))
		wantPhase(t, Generate(in), v1.PodFailed)
	})
	t.Run("initialization is judged in the current sandbox", func(t *testing.T) {
		in := base()
		in.Pod = withInit(podOf(v1.RestartPolicyAlways, "app"), sidecar("proxy"))
		sb := readySandbox()
		app, proxy := running("app", "c1", at(2), 0), running("proxy", "p1", at(1), 0)
		app.SandboxID, proxy.SandboxID = "old-sandbox", sb.Id
		in.Runtime = rtOf(sb, app, proxy)
		wantPhase(t, Generate(in), v1.PodPending) // sidecar not yet started, app from an old sandbox
		app.SandboxID = sb.Id
		wantPhase(t, Generate(in), v1.PodRunning)
		app.SandboxID = "old-sandbox"
		in.Runtime.ActiveContainerStatuses = []*container.Status{app, proxy} // the view's word wins
		wantPhase(t, Generate(in), v1.PodRunning)
	})
	t.Run("runtime IPs without sandbox statuses and a custom runtime name", func(t *testing.T) {
		in := base()
		in.RuntimeName = "cri-o"
		in.Runtime = &container.PodStatus{IPs: []string{"10.1.0.9"},
			ContainerStatuses: []*container.Status{running("app", "c1", at(1), 0)}}
		s := Generate(in)
		if s.PodIP != "10.1.0.9" || cstatus(t, s, "app").ContainerID != "cri-o://c1" {
			t.Errorf("podIP %q containerID %q", s.PodIP, cstatus(t, s, "app").ContainerID)
		}
	})
}
