package stats

import (
	"slices"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func sandbox(id, ns, name string, created int64, ready bool) *runtimeapi.PodSandbox {
	state := runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	if ready {
		state = runtimeapi.PodSandboxState_SANDBOX_READY
	}
	return &runtimeapi.PodSandbox{Id: id, CreatedAt: created, State: state,
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: ns, Uid: "uid-" + id}}
}

func ctr(id, sb, name string, attempt uint32, created int64, running bool) *runtimeapi.Container {
	state := runtimeapi.ContainerState_CONTAINER_EXITED
	if running {
		state = runtimeapi.ContainerState_CONTAINER_RUNNING
	}
	return &runtimeapi.Container{Id: id, PodSandboxId: sb, CreatedAt: created, State: state,
		Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt}}
}

func keys[T any](m map[string]T) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestLatestSandboxes(t *testing.T) {
	tests := []struct {
		name string
		in   []*runtimeapi.PodSandbox
		want []string
	}{
		{name: "single sandboxes are kept, ready or not", in: []*runtimeapi.PodSandbox{sandbox("a", "ns", "p1", 1, true), sandbox("b", "ns", "p2", 1, false)}, want: []string{"a", "b"}},
		{name: "the ready one of a recreated sandbox", in: []*runtimeapi.PodSandbox{sandbox("old", "ns", "p", 1, false), sandbox("new", "ns", "p", 2, true)}, want: []string{"new"}},
		{name: "the ready one even when older", in: []*runtimeapi.PodSandbox{sandbox("old", "ns", "p", 1, true), sandbox("new", "ns", "p", 2, false)}, want: []string{"old"}},
		{name: "none ready: the newest", in: []*runtimeapi.PodSandbox{sandbox("x", "ns", "p", 3, false), sandbox("y", "ns", "p", 5, false), sandbox("z", "ns", "p", 4, false)}, want: []string{"y"}},
		{name: "same name in another namespace is another pod", in: []*runtimeapi.PodSandbox{sandbox("a", "ns1", "p", 1, false), sandbox("b", "ns2", "p", 2, false)}, want: []string{"a", "b"}},
	}
	for _, tt := range tests {
		if got := keys(latestSandboxes(tt.in)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRunningContainers(t *testing.T) {
	tests := []struct {
		name string
		in   []*runtimeapi.Container
		want []string
	}{
		{name: "exited attempts are dropped", in: []*runtimeapi.Container{ctr("c0", "s", "app", 0, 1, false), ctr("c1", "s", "app", 1, 2, true)}, want: []string{"c1"}},
		{name: "two running attempts: the latest", in: []*runtimeapi.Container{ctr("c1", "s", "app", 1, 2, true), ctr("c2", "s", "app", 2, 3, true)}, want: []string{"c2"}},
		{name: "same name in two sandboxes", in: []*runtimeapi.Container{ctr("a", "s1", "app", 0, 1, true), ctr("b", "s2", "app", 0, 1, true)}, want: []string{"a", "b"}},
		{name: "nothing running", in: []*runtimeapi.Container{ctr("a", "s", "app", 0, 1, false)}, want: nil},
	}
	for _, tt := range tests {
		if got := keys(runningContainers(tt.in)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
