package plan

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/prober/probeview"
)

// sb is the ID of the default sandbox: one, ready, attempt 0, with an IP, pod network.
const sb = "sb1"

// ---- pods ----

type podOpt func(*v1.Pod)

func newPod(opts ...podOpt) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec:       v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func spec(name string) v1.Container {
	return v1.Container{Name: name, Image: "registry.local/" + name + ":1"}
}

// mains appends main containers.
func mains(names ...string) podOpt {
	return func(p *v1.Pod) {
		for _, n := range names {
			p.Spec.Containers = append(p.Spec.Containers, spec(n))
		}
	}
}

// inits appends regular init containers.
func inits(names ...string) podOpt {
	return func(p *v1.Pod) {
		for _, n := range names {
			p.Spec.InitContainers = append(p.Spec.InitContainers, spec(n))
		}
	}
}

// sidecar appends a restartable init container; probes name "startup" and/or "liveness".
func sidecar(name string, probes ...string) podOpt {
	return func(p *v1.Pod) {
		c := spec(name)
		always := v1.ContainerRestartPolicyAlways
		c.RestartPolicy = &always
		for _, pr := range probes {
			probe := &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
			switch pr {
			case "startup":
				c.StartupProbe = probe
			case "liveness":
				c.LivenessProbe = probe
			default:
				panic("unknown probe " + pr)
			}
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
}

func ephemeral(names ...string) podOpt {
	return func(p *v1.Pod) {
		for _, n := range names {
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers,
				v1.EphemeralContainer{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: n, Image: "debug:1"}})
		}
	}
}

func policy(rp v1.RestartPolicy) podOpt { return func(p *v1.Pod) { p.Spec.RestartPolicy = rp } }

func hostNetwork() podOpt { return func(p *v1.Pod) { p.Spec.HostNetwork = true } }

func deleting() podOpt {
	return func(p *v1.Pod) {
		ts := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		p.DeletionTimestamp = &ts
	}
}

// ctrPolicy sets a main container's container-level restart policy and rules.
func ctrPolicy(name string, rp v1.ContainerRestartPolicy, rules ...v1.ContainerRestartRule) podOpt {
	return func(p *v1.Pod) {
		for i := range p.Spec.Containers {
			if p.Spec.Containers[i].Name == name {
				p.Spec.Containers[i].RestartPolicy = &rp
				p.Spec.Containers[i].RestartPolicyRules = rules
			}
		}
	}
}

// ---- sandboxes ----

type sbxOpt func(*runtimeapi.PodSandboxStatus)

func sandbox(id string, ready bool, attempt uint32, opts ...sbxOpt) *runtimeapi.PodSandboxStatus {
	state := runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	if ready {
		state = runtimeapi.PodSandboxState_SANDBOX_READY
	}
	s := &runtimeapi.PodSandboxStatus{
		Id:       id,
		State:    state,
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "default", Uid: "uid-web", Attempt: attempt},
		Network:  &runtimeapi.PodSandboxNetworkStatus{Ip: "10.0.0.7"},
		Linux: &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{
			Options: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD}}},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

func noIP(s *runtimeapi.PodSandboxStatus) { s.Network.Ip = "" }

func nodeNetNS(s *runtimeapi.PodSandboxStatus) {
	s.Linux.Namespaces.Options.Network = runtimeapi.NamespaceMode_NODE
}

// noSandbox, as tc.sandboxes, means the runtime has none (nil means the default one).
var noSandbox = []*runtimeapi.PodSandboxStatus{}

// ---- containers ----

// ctr describes one runtime container; its hash is that of the spec container of the same name
// unless changed.
type ctr struct {
	name    string
	state   container.State
	exit    int
	reason  string
	stale   bool // from an older sandbox: not in ActiveContainerStatuses, ID "old-<name>"
	changed bool // created from another spec: hash differs
}

func running(name string) ctr { return ctr{name: name, state: container.StateRunning} }
func exited(name string, code int) ctr {
	return ctr{name: name, state: container.StateExited, exit: code}
}
func created(name string) ctr  { return ctr{name: name, state: container.StateCreated} }
func unknown(name string) ctr  { return ctr{name: name, state: container.StateUnknown} }
func (c ctr) old() ctr         { c.stale = true; return c }
func (c ctr) hashChanged() ctr { c.changed = true; return c }
func (c ctr) oom() ctr         { c.reason = "OOMKilled"; return c }

func (c ctr) id() string {
	if c.stale {
		return "old-" + c.name
	}
	return "id-" + c.name
}

// ---- cases ----

type tc struct {
	name      string
	pod       *v1.Pod
	sandboxes []*runtimeapi.PodSandboxStatus // nil: sandbox(sb, ready, 0)
	ctrs      []ctr                          // newest first
	allActive bool                           // pass ActiveContainerStatuses nil (fallback)

	liveFailed, startupOK, startupFailed []string

	want Plan // KillInfo.Container is filled in by the runner from Name
}

func set(names []string) map[string]bool {
	if names == nil {
		return nil
	}
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

func findSpec(p *v1.Pod, name string) *v1.Container {
	for i := range p.Spec.InitContainers {
		if p.Spec.InitContainers[i].Name == name {
			return &p.Spec.InitContainers[i]
		}
	}
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == name {
			return &p.Spec.Containers[i]
		}
	}
	for i := range p.Spec.EphemeralContainers {
		if p.Spec.EphemeralContainers[i].Name == name {
			return (*v1.Container)(&p.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		}
	}
	return nil
}

func (c tc) input() Input {
	sandboxes := c.sandboxes
	if sandboxes == nil {
		sandboxes = []*runtimeapi.PodSandboxStatus{sandbox(sb, true, 0)}
	}
	st := &container.PodStatus{ID: c.pod.UID, Name: c.pod.Name, Namespace: c.pod.Namespace, SandboxStatuses: sandboxes}
	active := []*container.Status{}
	for _, x := range c.ctrs {
		s := &container.Status{ID: x.id(), Name: x.name, State: x.state, ExitCode: x.exit, Reason: x.reason}
		if sp := findSpec(c.pod, x.name); sp != nil {
			s.Image = sp.Image
			s.Hash = container.HashContainer(sp)
		}
		if x.changed {
			s.Hash++
		}
		st.ContainerStatuses = append(st.ContainerStatuses, s)
		if !x.stale {
			active = append(active, s)
		}
	}
	if c.allActive {
		active = nil
	}
	return Input{
		Pod: c.pod, Status: st, ActiveContainerStatuses: active,
		Probes: probeview.View{LivenessFailed: set(c.liveFailed), Started: set(c.startupOK), StartupFailed: set(c.startupFailed)},
	}
}

func runCases(t *testing.T, cases []tc) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Fatalf("duplicate case name %q", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			in := c.input()
			podBefore := in.Pod.DeepCopy()
			got := ComputePodActions(in)

			want := c.want
			if want.ContainersToKill != nil {
				kills := map[string]KillInfo{}
				for id, k := range want.ContainersToKill {
					k.Container = findSpec(c.pod, k.Name)
					if k.Container == nil {
						t.Fatalf("bad case: no container %q in the pod", k.Name)
					}
					kills[id] = k
				}
				want.ContainersToKill = kills
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("plan mismatch\n got: %v\nwant: %v%s", got, want, killDiff(got, want))
			}
			checkInvariants(t, in, got)

			if again := ComputePodActions(c.input()); !reflect.DeepEqual(again, got) {
				t.Errorf("not deterministic: %v, then %v", got, again)
			}
			if !reflect.DeepEqual(podBefore, in.Pod) {
				t.Error("ComputePodActions modified the pod")
			}
		})
	}
}

func killDiff(got, want Plan) string {
	if reflect.DeepEqual(got.ContainersToKill, want.ContainersToKill) {
		return ""
	}
	s := "\nkills got:"
	for id, k := range got.ContainersToKill {
		s += fmt.Sprintf("\n  %s: %s %q %q", id, k.Name, k.Reason, k.Message)
	}
	s += "\nkills want:"
	for id, k := range want.ContainersToKill {
		s += fmt.Sprintf("\n  %s: %s %q %q", id, k.Name, k.Reason, k.Message)
	}
	return s
}

// checkInvariants holds for every plan, whatever the case expects.
func checkInvariants(t *testing.T, in Input, p Plan) {
	t.Helper()
	if p.CreateSandbox && !p.KillPod {
		t.Error("CreateSandbox without KillPod")
	}
	if p.KillPod && p.ContainersToKill != nil {
		t.Error("ContainersToKill listed although KillPod kills everything")
	}
	for _, l := range []struct {
		name string
		idx  []int
		n    int
	}{
		{"InitContainersToStart", p.InitContainersToStart, len(in.Pod.Spec.InitContainers)},
		{"ContainersToStart", p.ContainersToStart, len(in.Pod.Spec.Containers)},
		{"EphemeralContainersToStart", p.EphemeralContainersToStart, len(in.Pod.Spec.EphemeralContainers)},
	} {
		if !slices.IsSorted(l.idx) || len(slices.Compact(slices.Clone(l.idx))) != len(l.idx) {
			t.Errorf("%s %v is not strictly increasing", l.name, l.idx)
		}
		for _, i := range l.idx {
			if i < 0 || i >= l.n {
				t.Errorf("%s index %d out of range", l.name, i)
			}
		}
	}
	regular := 0
	for _, i := range p.InitContainersToStart {
		if !isRestartableInitContainer(&in.Pod.Spec.InitContainers[i]) {
			regular++
		}
	}
	if regular > 1 {
		t.Errorf("more than one regular init container to start: %v", p.InitContainersToStart)
	}
	for id, k := range p.ContainersToKill {
		if k.Container == nil || k.Container.Name != k.Name || k.Message == "" {
			t.Errorf("kill %s: incomplete %+v", id, k)
		}
		found := false
		for _, s := range in.Status.ContainerStatuses {
			found = found || (s.ID == id && s.Name == k.Name)
		}
		if !found {
			t.Errorf("kill %s: no such container of %s", id, k.Name)
		}
	}
}
