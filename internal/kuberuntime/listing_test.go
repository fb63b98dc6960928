package kuberuntime

import (
	"errors"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
)

// at is a CRI timestamp m minutes after t0.
func at(m int) int64 { return t0.Add(time.Duration(m) * time.Minute).UnixNano() }

func podLabels(uid, name string) map[string]string {
	return map[string]string{container.PodUIDLabel: uid, container.PodNameLabel: name, container.PodNamespaceLabel: "default"}
}

func seedSandbox(h *harness, id, uid string, attempt uint32, ready bool, created int64, ips ...string) {
	st := &runtimeapi.PodSandboxStatus{Id: id, CreatedAt: created, Labels: podLabels(uid, "web"),
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "default", Uid: uid, Attempt: attempt},
		State:    runtimeapi.PodSandboxState_SANDBOX_NOTREADY, Network: &runtimeapi.PodSandboxNetworkStatus{}}
	if ready {
		st.State = runtimeapi.PodSandboxState_SANDBOX_READY
	}
	if len(ips) > 0 {
		st.Network.Ip = ips[0]
		for _, ip := range ips[1:] {
			st.Network.AdditionalIps = append(st.Network.AdditionalIps, &runtimeapi.PodIP{Ip: ip})
		}
	}
	h.rt.AddSandbox(st)
}

type seeded struct {
	id, sandbox, uid, name string
	state                  runtimeapi.ContainerState
	created                int64
	hash                   string
	restarts               string
	exitCode               int32
	message                string
}

func seedContainer(h *harness, c seeded) {
	labels := podLabels(c.uid, "web")
	labels[container.ContainerNameLabel] = c.name
	st := &runtimeapi.ContainerStatus{Id: c.id, State: c.state, CreatedAt: c.created, StartedAt: c.created + 1,
		Metadata: &runtimeapi.ContainerMetadata{Name: c.name},
		Image:    &runtimeapi.ImageSpec{Image: "sha256:abc", UserSpecifiedImage: testImage}, ImageRef: "registry.local/app@sha256:abc",
		Labels: labels, Annotations: map[string]string{container.ContainerHashAnnotation: c.hash, container.ContainerRestartCountAnnotation: c.restarts},
		ExitCode: c.exitCode, Message: c.message}
	if c.state == runtimeapi.ContainerState_CONTAINER_EXITED {
		st.FinishedAt = c.created + int64(time.Second)
		st.Reason = "Error"
	}
	h.rt.AddContainer(c.sandbox, st)
}

const (
	running = runtimeapi.ContainerState_CONTAINER_RUNNING
	exited  = runtimeapi.ContainerState_CONTAINER_EXITED
)

// seedRuntime fills the runtime with pod uid-a (an old dead sandbox and a ready one),
// pod uid-b, and a sandbox and a container that are not a pod's.
func seedRuntime(h *harness) {
	seedSandbox(h, "sa0", "uid-a", 0, false, at(0))
	seedSandbox(h, "sa1", "uid-a", 1, true, at(10), "10.88.0.7", "fd00::7")
	seedContainer(h, seeded{id: "a-app-0", sandbox: "sa0", uid: "uid-a", name: "app", state: exited, created: at(1), hash: "1f", restarts: "0", exitCode: 2})
	seedContainer(h, seeded{id: "a-app-1", sandbox: "sa1", uid: "uid-a", name: "app", state: running, created: at(11), hash: "1f", restarts: "1"})
	seedContainer(h, seeded{id: "a-log-0", sandbox: "sa1", uid: "uid-a", name: "log", state: exited, created: at(12), hash: "abc", restarts: "4", exitCode: 1})
	seedSandbox(h, "sb0", "uid-b", 0, true, at(5), "10.88.0.8")
	seedContainer(h, seeded{id: "b-app-0", sandbox: "sb0", uid: "uid-b", name: "app", state: running, created: at(6), hash: "2", restarts: "0"})
	h.rt.AddSandbox(&runtimeapi.PodSandboxStatus{Id: "foreign", State: runtimeapi.PodSandboxState_SANDBOX_READY, Labels: map[string]string{"owner": "docker"}})
	h.rt.AddContainer("foreign", &runtimeapi.ContainerStatus{Id: "foreign-c", State: running, Labels: map[string]string{"owner": "docker"}})
}

func TestGetPods(t *testing.T) {
	h := newHarness(t)
	seedRuntime(h)
	pods, err := h.m.GetPods(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2 || pods[0].ID != "uid-a" || pods[1].ID != "uid-b" {
		t.Fatalf("pods %v, want uid-a and uid-b, by UID, without the unlabelled objects", pods)
	}
	a := pods[0]
	if a.Name != "web" || a.Namespace != "default" {
		t.Errorf("pod a is %s/%s", a.Namespace, a.Name)
	}
	states := map[string]container.State{}
	for _, s := range a.Sandboxes {
		states[s.ID] = s.State
	}
	if states["sa0"] != container.StateExited || states["sa1"] != container.StateRunning || len(states) != 2 {
		t.Errorf("pod a's sandboxes %v", states)
	}
	got := map[string]container.Container{}
	for _, c := range a.Containers {
		got[c.ID] = *c
	}
	want := map[string]container.Container{
		"a-app-0": {ID: "a-app-0", Name: "app", State: container.StateExited, Hash: 0x1f, Image: "sha256:abc", CreatedAt: at(1)},
		"a-app-1": {ID: "a-app-1", Name: "app", State: container.StateRunning, Hash: 0x1f, Image: "sha256:abc", CreatedAt: at(11)},
		"a-log-0": {ID: "a-log-0", Name: "log", State: container.StateExited, Hash: 0xabc, Image: "sha256:abc", CreatedAt: at(12)},
	}
	if len(got) != len(want) {
		t.Errorf("pod a's containers %v", got)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %+v, want %+v", id, got[id], w)
		}
	}
	if c := a.FindContainerByID("sa1"); c == nil || c.State != container.StateRunning {
		t.Errorf("FindContainerByID(sa1) = %v", c)
	}

	for _, call := range []string{"ListPodSandbox", "ListContainers"} {
		h.rt.InjectError(call, errors.New("runtime down"))
		if _, err := h.m.GetPods(h.ctx); err == nil {
			t.Errorf("GetPods hid a %s failure", call)
		}
	}
}

func TestGetPodStatus(t *testing.T) {
	h := newHarness(t)
	seedRuntime(h)
	h.vol.termMsgs = map[string]string{"app/0": "exit: config missing"}
	ps, err := h.m.GetPodStatus(h.ctx, "uid-a", "web", "default")
	if err != nil {
		t.Fatal(err)
	}
	if ps.ID != "uid-a" || ps.Name != "web" || ps.Namespace != "default" {
		t.Errorf("identity %s %s/%s", ps.ID, ps.Namespace, ps.Name)
	}
	var sandboxes []string
	for _, s := range ps.SandboxStatuses {
		sandboxes = append(sandboxes, s.GetId())
	}
	if !slices.Equal(sandboxes, []string{"sa1", "sa0"}) {
		t.Errorf("sandboxes %v, want newest first", sandboxes)
	}
	if !slices.Equal(ps.IPs, []string{"10.88.0.7", "fd00::7"}) {
		t.Errorf("IPs %v, want the ready newest sandbox's", ps.IPs)
	}
	ids := func(list []*container.Status) []string {
		var out []string
		for _, cs := range list {
			out = append(out, cs.ID)
		}
		return out
	}
	if got := ids(ps.ContainerStatuses); !slices.Equal(got, []string{"a-log-0", "a-app-1", "a-app-0"}) {
		t.Errorf("containers %v, want newest first", got)
	}
	if got := ids(ps.ActiveContainerStatuses); !slices.Equal(got, []string{"a-log-0", "a-app-1"}) {
		t.Errorf("active containers %v, want the newest sandbox's only", got)
	}
	byID := map[string]*container.Status{}
	for _, cs := range ps.ContainerStatuses {
		byID[cs.ID] = cs
	}
	old, cur, log := byID["a-app-0"], byID["a-app-1"], byID["a-log-0"]
	if cur.Name != "app" || cur.SandboxID != "sa1" || cur.State != container.StateRunning || cur.Hash != 0x1f || cur.RestartCount != 1 {
		t.Errorf("a-app-1: %+v", cur)
	}
	if cur.Image != testImage || cur.ImageRef != "registry.local/app@sha256:abc" {
		t.Errorf("a-app-1 image %q, ref %q", cur.Image, cur.ImageRef)
	}
	if !cur.StartedAt.Equal(time.Unix(0, at(11)+1)) || !cur.FinishedAt.IsZero() {
		t.Errorf("a-app-1 started %v, finished %v", cur.StartedAt, cur.FinishedAt)
	}
	if log.Hash != 0xabc || log.RestartCount != 4 || log.ExitCode != 1 || log.Reason != "Error" {
		t.Errorf("a-log-0: %+v", log)
	}
	if old.Message != "exit: config missing" {
		t.Errorf("a-app-0 message %q, want the termination message file's", old.Message)
	}
	if log.Message != "" {
		t.Errorf("a-log-0 message %q, want none (no file)", log.Message)
	}
	if !old.FinishedAt.Equal(time.Unix(0, at(1)+int64(time.Second))) {
		t.Errorf("a-app-0 finished %v", old.FinishedAt)
	}

	ps, err = h.m.GetPodStatus(h.ctx, "uid-none", "gone", "default")
	if err != nil || len(ps.SandboxStatuses)+len(ps.ContainerStatuses) != 0 || ps.ActiveContainerStatuses != nil {
		t.Errorf("unknown pod: %+v, %v", ps, err)
	}
}

// As upstream, the termination message file is appended to the runtime's own message.
func TestGetPodStatusRuntimeAndFileMessages(t *testing.T) {
	h := newHarness(t)
	seedSandbox(h, "s", "uid-a", 0, true, at(0), "10.88.0.7")
	seedContainer(h, seeded{id: "c", sandbox: "s", uid: "uid-a", name: "app", state: exited, created: at(1), restarts: "0", message: "from the runtime"})
	h.vol.termMsgs = map[string]string{"app/0": "from the file"}
	ps, err := h.m.GetPodStatus(h.ctx, "uid-a", "web", "default")
	if err != nil {
		t.Fatal(err)
	}
	if got := ps.ContainerStatuses[0].Message; got != "from the runtime: from the file" {
		t.Errorf("message %q", got)
	}
}

func TestGetPodStatusIPs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		seed    func(h *harness)
		wantIPs []string
	}{
		{"newest ready", func(h *harness) {
			seedSandbox(h, "s0", "uid-a", 0, false, at(0), "10.88.0.1")
			seedSandbox(h, "s1", "uid-a", 1, true, at(1), "10.88.0.2")
		}, []string{"10.88.0.2"}},
		{"newest not ready, older ready: none", func(h *harness) {
			seedSandbox(h, "s0", "uid-a", 0, true, at(0), "10.88.0.1")
			seedSandbox(h, "s1", "uid-a", 1, false, at(1), "10.88.0.2")
		}, nil},
		{"host network: no IP", func(h *harness) {
			seedSandbox(h, "s0", "uid-a", 0, true, at(0))
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			tc.seed(h)
			ps, err := h.m.GetPodStatus(h.ctx, "uid-a", "web", "default")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ps.IPs, tc.wantIPs) {
				t.Errorf("IPs %v, want %v", ps.IPs, tc.wantIPs)
			}
		})
	}
}

func TestGetPodStatusErrors(t *testing.T) {
	notFound := status.Error(codes.NotFound, "removed since the listing")
	for _, tc := range []struct {
		name    string
		call    string
		err     error
		wantErr bool
	}{
		{"sandbox listing", "ListPodSandbox", errors.New("down"), true},
		{"container listing", "ListContainers", errors.New("down"), true},
		{"sandbox status", "PodSandboxStatus", errors.New("down"), true},
		{"container status", "ContainerStatus", errors.New("down"), true},
		{"sandbox removed meanwhile", "PodSandboxStatus", notFound, false},
		{"container removed meanwhile", "ContainerStatus", notFound, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			seedSandbox(h, "s", "uid-a", 0, true, at(0), "10.88.0.7")
			seedContainer(h, seeded{id: "c", sandbox: "s", uid: "uid-a", name: "app", state: running, created: at(1), restarts: "0"})
			h.rt.InjectError(tc.call, tc.err)
			ps, err := h.m.GetPodStatus(h.ctx, types.UID("uid-a"), "web", "default")
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want an error: %t", err, tc.wantErr)
			}
			if !tc.wantErr && len(ps.SandboxStatuses)+len(ps.ContainerStatuses) != 1 {
				t.Errorf("the removed object is not left out: %+v", ps)
			}
		})
	}
}

// Regression: upstream's GetPodStatus takes the active sandbox (whose containers are
// ActiveContainerStatuses) only when the newest sandbox is ready, as plan.Input and
// status.activeContainers document; nodelet takes the newest sandbox even when it is not
// ready, so a dead sandbox's containers still count as "active" (initialized) in the status.
func TestGetPodStatusNoActiveContainersInNotReadySandbox(t *testing.T) {
	h := newHarness(t)
	seedSandbox(h, "s0", "uid-a", 0, false, at(0), "10.88.0.1")
	seedContainer(h, seeded{id: "c", sandbox: "s0", uid: "uid-a", name: "app", state: exited, created: at(1), restarts: "0"})
	ps, err := h.m.GetPodStatus(h.ctx, "uid-a", "web", "default")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps.ActiveContainerStatuses) != 0 {
		t.Errorf("active containers %d, want none: the newest sandbox is not ready", len(ps.ActiveContainerStatuses))
	}
}
