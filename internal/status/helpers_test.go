package status

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/podconfig"
)

var (
	t0  = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	now = t0.Add(time.Minute + 500*time.Millisecond) // sub-second, to see truncation
)

// at is t0 plus s seconds.
func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// podOf builds a pod with the given main containers (name only) and restart policy.
func podOf(policy v1.RestartPolicy, names ...string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1",
			Annotations: map[string]string{podconfig.ConfigSourceAnnotationKey: podconfig.FileSource}},
		Spec: v1.PodSpec{RestartPolicy: policy},
	}
	for _, n := range names {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: n, Image: "busybox:1.36"})
	}
	return p
}

func withInit(p *v1.Pod, c ...v1.Container) *v1.Pod {
	p.Spec.InitContainers = append(p.Spec.InitContainers, c...)
	return p
}

func initC(name string) v1.Container { return v1.Container{Name: name, Image: "busybox:1.36"} }

func sidecar(name string) v1.Container {
	always := v1.ContainerRestartPolicyAlways
	return v1.Container{Name: name, Image: "envoy:1", RestartPolicy: &always}
}

func sandbox(ready bool, created time.Time, ips ...string) *runtimeapi.PodSandboxStatus {
	sb := &runtimeapi.PodSandboxStatus{Id: "sb-" + created.Format("150405"), CreatedAt: created.UnixNano(),
		State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY, Network: &runtimeapi.PodSandboxNetworkStatus{},
		Linux: &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{Options: &runtimeapi.NamespaceOption{}}}}
	if ready {
		sb.State = runtimeapi.PodSandboxState_SANDBOX_READY
	}
	for i, ip := range ips {
		if i == 0 {
			sb.Network.Ip = ip
		} else {
			sb.Network.AdditionalIps = append(sb.Network.AdditionalIps, &runtimeapi.PodIP{Ip: ip})
		}
	}
	return sb
}

func running(name, id string, started time.Time, restarts int) *container.Status {
	return &container.Status{ID: id, Name: name, State: container.StateRunning, CreatedAt: started,
		StartedAt: started, Image: "busybox:1.36", ImageRef: "sha256:aaa", RestartCount: restarts}
}

func exited(name, id string, started, finished time.Time, code int, reason string, restarts int) *container.Status {
	return &container.Status{ID: id, Name: name, State: container.StateExited, CreatedAt: started,
		StartedAt: started, FinishedAt: finished, ExitCode: code, Reason: reason,
		Image: "busybox:1.36", ImageRef: "sha256:aaa", RestartCount: restarts}
}

// rtOf builds a runtime view with one sandbox (created at t0) and the containers.
func rtOf(sb *runtimeapi.PodSandboxStatus, cs ...*container.Status) *container.PodStatus {
	r := &container.PodStatus{ID: "uid-1", Name: "web", Namespace: "default", ContainerStatuses: cs}
	if sb != nil {
		r.SandboxStatuses = []*runtimeapi.PodSandboxStatus{sb}
	}
	return r
}

func readySandbox() *runtimeapi.PodSandboxStatus { return sandbox(true, t0, "10.1.0.5") }

func resources(cpuReq, cpuLim, memReq, memLim string) v1.ResourceRequirements {
	var r v1.ResourceRequirements
	set := func(l *v1.ResourceList, name v1.ResourceName, q string) {
		if q == "" {
			return
		}
		if *l == nil {
			*l = v1.ResourceList{}
		}
		(*l)[name] = resource.MustParse(q)
	}
	set(&r.Requests, v1.ResourceCPU, cpuReq)
	set(&r.Limits, v1.ResourceCPU, cpuLim)
	set(&r.Requests, v1.ResourceMemory, memReq)
	set(&r.Limits, v1.ResourceMemory, memLim)
	return r
}

func cond(t *testing.T, s v1.PodStatus, ct v1.PodConditionType) v1.PodCondition {
	t.Helper()
	c := findCondition(s.Conditions, ct)
	if c == nil {
		t.Fatalf("no %s condition in %+v", ct, s.Conditions)
	}
	return *c
}

func wantCond(t *testing.T, s v1.PodStatus, ct v1.PodConditionType, status v1.ConditionStatus, reason, message string) {
	t.Helper()
	c := cond(t, s, ct)
	if c.Status != status || c.Reason != reason || c.Message != message {
		t.Errorf("%s = %s/%q/%q, want %s/%q/%q", ct, c.Status, c.Reason, c.Message, status, reason, message)
	}
}

func cstatus(t *testing.T, s v1.PodStatus, name string) v1.ContainerStatus {
	t.Helper()
	for _, list := range [][]v1.ContainerStatus{s.ContainerStatuses, s.InitContainerStatuses, s.EphemeralContainerStatuses} {
		for _, c := range list {
			if c.Name == name {
				return c
			}
		}
	}
	t.Fatalf("no status for container %q", name)
	return v1.ContainerStatus{}
}

func wantWaiting(t *testing.T, s v1.PodStatus, name, reason string) {
	t.Helper()
	c := cstatus(t, s, name)
	if c.State.Waiting == nil || c.State.Waiting.Reason != reason {
		t.Errorf("%s state = %+v, want waiting %q", name, c.State, reason)
	}
}

func wantTerminated(t *testing.T, st v1.ContainerState, code int32, reason string) {
	t.Helper()
	if st.Terminated == nil || st.Terminated.ExitCode != code || st.Terminated.Reason != reason {
		t.Errorf("state = %+v, want terminated %d %q", st, code, reason)
	}
}

func wantPhase(t *testing.T, s v1.PodStatus, p v1.PodPhase) {
	t.Helper()
	if s.Phase != p {
		t.Errorf("phase = %s, want %s", s.Phase, p)
	}
}

func ptr[T any](v T) *T { return &v }
