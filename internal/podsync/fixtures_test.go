package podsync

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/podworkers"
	"github.com/nodelet/nodelet/internal/status"
)

// The fixtures: pod "p" (UID "u") with one container "c", a runtime view in a ready sandbox,
// and a step's input at t=100s.

var t0 = time.Unix(100, 0)

func pod() *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u"},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
}

// podOf is pod() with the restart policy and the changes given.
func podOf(policy v1.RestartPolicy, mods ...func(*v1.Pod)) *v1.Pod {
	p := pod()
	p.Spec.RestartPolicy = policy
	for _, m := range mods {
		m(p)
	}
	return p
}

var probe = &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}

func withReadiness(p *v1.Pod) { p.Spec.Containers[0].ReadinessProbe = probe }
func withStartup(p *v1.Pod)   { p.Spec.Containers[0].StartupProbe = probe }
func withLiveness(p *v1.Pod)  { p.Spec.Containers[0].LivenessProbe = probe }
func deleting(p *v1.Pod)      { now := metav1.NewTime(time.Unix(50, 0)); p.DeletionTimestamp = &now }

func fromSource(source string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[podconfig.ConfigSourceAnnotationKey] = source
	}
}

func seenAt(t time.Time) func(*v1.Pod) {
	return func(p *v1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[podconfig.ConfigFirstSeenAnnotationKey] = t.Format(time.RFC3339Nano)
	}
}

// running is a view of container c's instance "1" in state, started at 10s, finished at 20s.
func running(state container.State, exit int) *container.PodStatus {
	return &container.PodStatus{ID: "u", ContainerStatuses: []*container.Status{{ID: "1", Name: "c", State: state, ExitCode: exit,
		StartedAt: time.Unix(10, 0), FinishedAt: time.Unix(20, 0)}}}
}

// inSandbox is a view of the given instances of container c in ready sandbox "sb".
func inSandbox(cs ...*container.Status) *container.PodStatus {
	ps := &container.PodStatus{ID: "u", Name: "p", Namespace: "default",
		SandboxStatuses: []*runtimeapi.PodSandboxStatus{{Id: "sb", State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: time.Unix(1, 0).UnixNano(),
			Network: &runtimeapi.PodSandboxNetworkStatus{Ip: "10.0.0.7"},
			Linux: &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{
				Options: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD}}}}}}
	for _, c := range cs {
		c.SandboxID = "sb"
		ps.ContainerStatuses = append(ps.ContainerStatuses, c)
	}
	ps.ActiveContainerStatuses = ps.ContainerStatuses
	return ps
}

func instance(id string, state container.State, exit int, created int64) *container.Status {
	return &container.Status{ID: id, Name: "c", State: state, ExitCode: exit, Image: "busybox", ImageRef: "sha256:aaa",
		CreatedAt: time.Unix(created, 0), StartedAt: time.Unix(created+1, 0), FinishedAt: time.Unix(created+5, 0)}
}

// syncInput is the input of a SyncPod step before the runtime.
func syncInput(p *v1.Pod, ps *container.PodStatus) Input {
	return Input{Work: podworkers.SyncPod, Pod: p, Runtime: ps, Now: t0, Node: Config{HostIPs: []string{"192.0.2.1"}}}
}

func waitingFor(reason, message string) map[string]status.WaitingReason {
	return map[string]status.WaitingReason{"c": {Reason: reason, Message: message}}
}

// cstatus is container c's status.
func cstatus(t *testing.T, st v1.PodStatus) v1.ContainerStatus {
	t.Helper()
	for _, cs := range st.ContainerStatuses {
		if cs.Name == "c" {
			return cs
		}
	}
	t.Fatalf("no status for container c in %+v", st.ContainerStatuses)
	return v1.ContainerStatus{}
}

func wantWaiting(t *testing.T, st v1.PodStatus, reason, message string) {
	t.Helper()
	if w := cstatus(t, st).State.Waiting; w == nil || w.Reason != reason || w.Message != message {
		t.Errorf("container state %+v, want waiting %s %q", cstatus(t, st).State, reason, message)
	}
}

func wantPhase(t *testing.T, st v1.PodStatus, phase v1.PodPhase, reason string) {
	t.Helper()
	if st.Phase != phase || st.Reason != reason {
		t.Errorf("phase %s reason %q, want %s %q", st.Phase, st.Reason, phase, reason)
	}
}

func condition(st v1.PodStatus, ct v1.PodConditionType) *v1.PodCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == ct {
			return &st.Conditions[i]
		}
	}
	return nil
}

func wantCondition(t *testing.T, st v1.PodStatus, ct v1.PodConditionType, want v1.ConditionStatus) {
	t.Helper()
	if c := condition(st, ct); c == nil || c.Status != want {
		t.Errorf("condition %s = %+v, want %s", ct, c, want)
	}
}
