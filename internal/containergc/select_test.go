package containergc

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// fakePods is upstream's fakePodStateProvider: removed pods' content and terminated pods'
// runtime may go.
type fakePods struct{ removed, terminated sets.Set[types.UID] }

func (f fakePods) ShouldPodContentBeRemoved(uid types.UID) bool { return f.removed.Has(uid) }
func (f fakePods) ShouldPodRuntimeBeRemoved(uid types.UID) bool { return f.terminated.Has(uid) }

var _ PodState = fakePods{}

func labels(pod string) map[string]string {
	return map[string]string{container.PodUIDLabel: "uid-" + pod, container.PodNameLabel: pod, container.PodNamespaceLabel: "default"}
}

// ctr is upstream's makeGCContainer: container name of pod, instance attempt, created at
// created (ns since the epoch).
func ctr(pod, name string, attempt int, created int64, state runtimeapi.ContainerState) *runtimeapi.Container {
	l := labels(pod)
	l[container.ContainerNameLabel] = name
	return &runtimeapi.Container{Id: fmt.Sprintf("%s-%s-%d", pod, name, attempt), PodSandboxId: "sb-" + pod,
		Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: uint32(attempt)}, State: state, CreatedAt: created, Labels: l}
}

func exited(pod, name string, attempt int, created int64) *runtimeapi.Container {
	return ctr(pod, name, attempt, created, runtimeapi.ContainerState_CONTAINER_EXITED)
}

func containerIDs(cs []*runtimeapi.Container, idx []int) []string {
	out := []string{}
	for _, i := range idx {
		out = append(out, cs[i].Id)
	}
	return out
}

// TestDeadContainers has upstream's TestContainerGC cases (kuberuntime_gc_test.go), with the
// containers that remain given by index.
func TestDeadContainers(t *testing.T) {
	now := t0.UnixNano()
	def := Policy{MinAge: time.Hour, MaxPerPodContainer: 2, MaxContainers: 6}
	for _, tc := range []struct {
		name       string
		containers []*runtimeapi.Container
		policy     *Policy
		scope      Scope
		remain     []int
	}{
		{"all containers go when the node-wide limit is 0",
			[]*runtimeapi.Container{exited("foo", "bar", 0, 0)},
			&Policy{MinAge: time.Minute, MaxPerPodContainer: 1, MaxContainers: 0}, Scope{AllSourcesReady: true}, nil},
		{"the node-wide limit holds without a per-container limit",
			[]*runtimeapi.Container{exited("foo", "bar", 4, 4), exited("foo", "bar", 3, 3), exited("foo", "bar", 2, 2), exited("foo", "bar", 1, 1), exited("foo", "bar", 0, 0)},
			&Policy{MinAge: time.Minute, MaxPerPodContainer: -1, MaxContainers: 4}, Scope{AllSourcesReady: true}, []int{0, 1, 2, 3}},
		{"no limits: nothing goes",
			[]*runtimeapi.Container{exited("foo", "bar", 2, 2), exited("foo", "bar", 1, 1), exited("foo", "bar", 0, 0)},
			&Policy{MinAge: time.Minute, MaxPerPodContainer: -1, MaxContainers: -1}, Scope{AllSourcesReady: true}, []int{0, 1, 2}},
		{"containers younger than MinAge stay",
			[]*runtimeapi.Container{exited("foo", "bar", 2, now), exited("foo", "bar", 1, now), exited("foo", "bar", 0, now)},
			nil, Scope{AllSourcesReady: true}, []int{0, 1, 2}},
		{"the oldest go over the per-container limit",
			[]*runtimeapi.Container{exited("foo", "bar", 2, 2), exited("foo", "bar", 1, 1), exited("foo", "bar", 0, 0)},
			nil, Scope{AllSourcesReady: true}, []int{0, 1}},
		{"running containers stay and do not count",
			[]*runtimeapi.Container{exited("foo", "bar", 2, 2), exited("foo", "bar", 1, 1), ctr("foo", "bar", 0, 0, runtimeapi.ContainerState_CONTAINER_RUNNING)},
			nil, Scope{AllSourcesReady: true}, []int{0, 1, 2}},
		{"within the limits nothing goes",
			[]*runtimeapi.Container{exited("foo", "bar", 1, 1), exited("foo", "bar", 0, 0)},
			nil, Scope{AllSourcesReady: true}, []int{0, 1}},
		{"the per-container limit is per pod and container name",
			[]*runtimeapi.Container{exited("foo", "bar", 2, 2), exited("foo", "bar", 1, 1), exited("foo", "bar", 0, 0),
				exited("foo1", "baz", 2, 2), exited("foo1", "baz", 1, 1), exited("foo1", "baz", 0, 0),
				exited("foo2", "bar", 2, 2), exited("foo2", "bar", 1, 1), exited("foo2", "bar", 0, 0)},
			nil, Scope{AllSourcesReady: true}, []int{0, 1, 3, 4, 6, 7}},
		{"over the node-wide limit every container keeps its share",
			[]*runtimeapi.Container{exited("foo", "bar", 1, 1), exited("foo", "bar", 0, 0), exited("foo1", "bar1", 1, 1), exited("foo1", "bar1", 0, 0),
				exited("foo2", "bar2", 1, 1), exited("foo2", "bar2", 0, 0), exited("foo3", "bar3", 1, 1), exited("foo3", "bar3", 0, 0),
				exited("foo4", "bar4", 1, 1), exited("foo4", "bar4", 0, 0)},
			nil, Scope{AllSourcesReady: true}, []int{0, 2, 4, 6, 8}},
		{"then the oldest on the node go",
			[]*runtimeapi.Container{exited("foo", "bar", 2, 2), exited("foo", "bar", 1, 1), exited("foo1", "bar1", 2, 2), exited("foo1", "bar1", 1, 1),
				exited("foo2", "bar2", 1, 1), exited("foo3", "bar3", 0, 0), exited("foo4", "bar4", 1, 1), exited("foo5", "bar5", 0, 0),
				exited("foo6", "bar6", 2, 2), exited("foo7", "bar7", 1, 1)},
			nil, Scope{AllSourcesReady: true}, []int{0, 2, 4, 6, 8, 9}},
		{"EvictNonDeletedPods empties terminated pods",
			[]*runtimeapi.Container{exited("foo", "bar", 2, 2), exited("foo", "bar", 1, 1), exited("foo1", "bar1", 2, 2), exited("foo1", "bar1", 1, 1),
				exited("running", "bar2", 1, 1), ctr("foo3", "bar3", 0, 0, runtimeapi.ContainerState_CONTAINER_RUNNING)},
			nil, Scope{AllSourcesReady: true, EvictNonDeletedPods: true}, []int{4, 5}},
		{"deleted pods lose all their containers older than MinAge",
			[]*runtimeapi.Container{exited("foo", "bar", 1, 1), exited("foo", "bar", 0, 0),
				exited("deleted", "bar1", 2, now), exited("deleted", "bar1", 1, 1), exited("deleted", "bar1", 0, 0)},
			nil, Scope{AllSourcesReady: true}, []int{0, 1, 2}},
		{"deleted pods keep their containers until every source is ready",
			[]*runtimeapi.Container{exited("deleted", "bar1", 0, 0)},
			nil, Scope{EvictNonDeletedPods: true}, []int{0}},
		{"created and unknown containers are dead",
			[]*runtimeapi.Container{ctr("foo", "bar", 2, 2, runtimeapi.ContainerState_CONTAINER_CREATED), ctr("foo", "bar", 1, 1, runtimeapi.ContainerState_CONTAINER_UNKNOWN), exited("foo", "bar", 0, 0)},
			nil, Scope{AllSourcesReady: true}, []int{0, 1}},
		{"containers without nodelet's pod UID label are not nodelet's",
			[]*runtimeapi.Container{{Id: "foreign", State: runtimeapi.ContainerState_CONTAINER_EXITED, Metadata: &runtimeapi.ContainerMetadata{Name: "x"}}},
			&Policy{MaxPerPodContainer: 0, MaxContainers: 0}, Scope{AllSourcesReady: true, EvictNonDeletedPods: true}, []int{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods := fakePods{removed: sets.New[types.UID](), terminated: sets.New[types.UID]()}
			for _, c := range tc.containers {
				uid := types.UID(c.Labels[container.PodUIDLabel])
				if c.Labels[container.PodNameLabel] == "deleted" {
					pods.removed.Insert(uid)
				}
				if c.Labels[container.PodNameLabel] != "running" {
					pods.terminated.Insert(uid)
				}
			}
			p := def
			if tc.policy != nil {
				p = *tc.policy
			}
			in := slices.Clone(tc.containers)
			got := DeadContainers(tc.containers, pods, p, tc.scope, t0)
			if !slices.EqualFunc(in, tc.containers, func(a, b *runtimeapi.Container) bool { return a == b }) {
				t.Error("DeadContainers reordered its input")
			}
			removed := sets.New[string]()
			for _, c := range got {
				removed.Insert(c.ID)
			}
			var remain []string
			for _, c := range tc.containers {
				if !removed.Has(c.Id) {
					remain = append(remain, c.Id)
				}
			}
			if want := containerIDs(tc.containers, tc.remain); !slices.Equal(remain, want) {
				t.Errorf("remain %v, want %v", remain, want)
			}
			if len(got) != removed.Len() {
				t.Errorf("a container was chosen twice: %v", got)
			}
		})
	}
}

func TestDeadContainersOrderAndDetails(t *testing.T) {
	pods := fakePods{removed: sets.New[types.UID]("uid-gone"), terminated: sets.New[types.UID]("uid-gone")}
	cs := []*runtimeapi.Container{
		exited("app", "web", 3, 30), exited("gone", "c", 0, 5), exited("app", "web", 1, 10), exited("app", "web", 2, 20),
		exited("gone", "c", 1, 6), ctr("app", "side", 0, 1, runtimeapi.ContainerState_CONTAINER_UNKNOWN),
		exited("app", "side", 1, 2),
	}
	got := DeadContainers(cs, pods, Policy{MaxPerPodContainer: 1, MaxContainers: -1}, Scope{AllSourcesReady: true}, t0)
	want := []Container{
		{ID: "gone-c-0", PodUID: "uid-gone", PodName: "gone", PodNamespace: "default", Name: "c", CreatedAt: time.Unix(0, 5), Reason: ReasonPodGone},
		{ID: "gone-c-1", PodUID: "uid-gone", PodName: "gone", PodNamespace: "default", Name: "c", CreatedAt: time.Unix(0, 6), Reason: ReasonPodGone},
		{ID: "app-side-0", PodUID: "uid-app", PodName: "app", PodNamespace: "default", Name: "side", CreatedAt: time.Unix(0, 1), Unknown: true, Reason: ReasonPerContainer},
		{ID: "app-web-1", PodUID: "uid-app", PodName: "app", PodNamespace: "default", Name: "web", CreatedAt: time.Unix(0, 10), Reason: ReasonPerContainer},
		{ID: "app-web-2", PodUID: "uid-app", PodName: "app", PodNamespace: "default", Name: "web", CreatedAt: time.Unix(0, 20), Reason: ReasonPerContainer},
	}
	if !slices.Equal(got, want) {
		t.Errorf("DeadContainers =\n%+v\nwant (gone pods first, then by pod and container, oldest first)\n%+v", got, want)
	}

	// Over the node-wide limit the share goes first, then the oldest on the node.
	got = DeadContainers([]*runtimeapi.Container{exited("a", "c", 1, 1), exited("a", "c", 2, 2), exited("b", "c", 3, 3), exited("b", "c", 4, 4)},
		pods, Policy{MaxPerPodContainer: -1, MaxContainers: 1}, Scope{AllSourcesReady: true}, t0)
	var ids, reasons []string
	for _, c := range got {
		ids, reasons = append(ids, c.ID), append(reasons, c.Reason)
	}
	if want := []string{"a-c-1", "b-c-3", "a-c-2"}; !slices.Equal(ids, want) || slices.ContainsFunc(reasons, func(r string) bool { return r != ReasonNodeWideLimit }) {
		t.Errorf("node-wide limit removed %v (%v), want %v", ids, reasons, want)
	}
}

func sandbox(pod string, attempt int, state runtimeapi.PodSandboxState, created int64) *runtimeapi.PodSandbox {
	return &runtimeapi.PodSandbox{Id: fmt.Sprintf("sb-%s-%d", pod, attempt), State: state, CreatedAt: created, Labels: labels(pod),
		Metadata: &runtimeapi.PodSandboxMetadata{Name: pod, Uid: "uid-" + pod, Namespace: "default", Attempt: uint32(attempt)}}
}

func inSandbox(sb *runtimeapi.PodSandbox) *runtimeapi.Container {
	return &runtimeapi.Container{Id: "c-in-" + sb.Id, PodSandboxId: sb.Id, State: runtimeapi.ContainerState_CONTAINER_EXITED}
}

// TestSandboxes has upstream's TestSandboxGC cases: pods foo1 and foo2 exist, deleted is
// removed; terminating pods are terminated.
func TestSandboxes(t *testing.T) {
	const (
		ready    = runtimeapi.PodSandboxState_SANDBOX_READY
		notReady = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	)
	for _, tc := range []struct {
		name        string
		sandboxes   []*runtimeapi.PodSandbox
		withCtrs    []int // indexes of sandboxes that hold a container
		terminating []string
		scope       Scope
		remain      []int
	}{
		{"not ready sandboxes without containers of deleted pods go",
			[]*runtimeapi.PodSandbox{sandbox("deleted", 0, notReady, 0)}, nil, nil, Scope{}, nil},
		{"ready sandboxes of deleted pods stay",
			[]*runtimeapi.PodSandbox{sandbox("deleted", 0, ready, 0)}, nil, nil, Scope{}, []int{0}},
		{"the only sandbox of an existing pod stays, ready or not",
			[]*runtimeapi.PodSandbox{sandbox("foo1", 0, ready, 0), sandbox("foo2", 0, notReady, 0)}, nil, nil, Scope{}, []int{0, 1}},
		{"older not ready sandboxes of an existing pod go",
			[]*runtimeapi.PodSandbox{sandbox("foo1", 1, notReady, 1), sandbox("foo1", 0, notReady, 0)}, nil, nil, Scope{}, []int{0}},
		{"older sandboxes with containers stay",
			[]*runtimeapi.PodSandbox{sandbox("foo1", 1, notReady, 1), sandbox("foo1", 0, notReady, 0)}, []int{1}, nil, Scope{}, []int{0, 1}},
		{"EvictNonDeletedPods: terminated pods lose their not ready sandboxes",
			[]*runtimeapi.PodSandbox{sandbox("foo1", 0, ready, 0), sandbox("foo2", 0, notReady, 0)}, nil, []string{"foo1", "foo2"},
			Scope{EvictNonDeletedPods: true}, []int{0}},
		{"a sandbox with a container stays",
			[]*runtimeapi.PodSandbox{sandbox("foo1", 0, notReady, 0)}, []int{0}, nil, Scope{}, []int{0}},
		{"many sandboxes",
			[]*runtimeapi.PodSandbox{sandbox("foo1", 1, ready, 1), sandbox("foo1", 0, notReady, 0), sandbox("foo2", 1, notReady, 1),
				sandbox("foo2", 0, notReady, 0), sandbox("deleted", 0, notReady, 0)}, []int{2}, nil, Scope{}, []int{0, 2}},
		{"the newest is kept even when an older one is ready",
			[]*runtimeapi.PodSandbox{sandbox("foo1", 0, ready, 0), sandbox("foo1", 2, notReady, 2), sandbox("foo1", 1, notReady, 1)}, nil, nil, Scope{}, []int{0, 1}},
		{"sandboxes without nodelet's pod UID label are not nodelet's",
			[]*runtimeapi.PodSandbox{{Id: "foreign", State: notReady, Metadata: &runtimeapi.PodSandboxMetadata{Uid: "uid-deleted"}}}, nil, nil, Scope{}, []int{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods := fakePods{removed: sets.New[types.UID]("uid-deleted"), terminated: sets.New[types.UID]("uid-deleted")}
			for _, p := range tc.terminating {
				pods.terminated.Insert(types.UID("uid-" + p))
			}
			var ctrs []*runtimeapi.Container
			for _, i := range tc.withCtrs {
				ctrs = append(ctrs, inSandbox(tc.sandboxes[i]))
			}
			removed := sets.New[string]()
			for _, s := range Sandboxes(tc.sandboxes, ctrs, pods, tc.scope) {
				removed.Insert(s.ID)
			}
			var remain, want []string
			for i, s := range tc.sandboxes {
				if !removed.Has(s.Id) {
					remain = append(remain, s.Id)
				}
				if slices.Contains(tc.remain, i) {
					want = append(want, s.Id)
				}
			}
			if !slices.Equal(remain, want) {
				t.Errorf("remain %v, want %v", remain, want)
			}
		})
	}
}

func TestSandboxesOldestFirst(t *testing.T) {
	notReady := runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	pods := fakePods{removed: sets.New[types.UID]("uid-gone"), terminated: sets.New[types.UID]()}
	got := Sandboxes([]*runtimeapi.PodSandbox{sandbox("gone", 1, notReady, 10), sandbox("gone", 0, notReady, 5), sandbox("gone", 2, notReady, 20)}, nil, pods, Scope{})
	var ids []string
	for _, s := range got {
		ids = append(ids, s.ID)
		if s.PodUID != "uid-gone" || s.PodName != "gone" || s.PodNamespace != "default" {
			t.Errorf("sandbox %+v: pod not named", s)
		}
	}
	if want := []string{"sb-gone-0", "sb-gone-1", "sb-gone-2"}; !slices.Equal(ids, want) {
		t.Errorf("removed %v, want %v", ids, want)
	}
}

func TestLogDirs(t *testing.T) {
	pods := fakePods{removed: sets.New[types.UID]("uid-gone", "uid-gone-with-sandbox", "stray"), terminated: sets.New[types.UID]()}
	names := []string{"default_app_uid-app", "default_gone_uid-gone", "kube-system_x_uid-gone-with-sandbox", "stray"}
	sandboxes := []*runtimeapi.PodSandbox{
		sandbox("app", 0, runtimeapi.PodSandboxState_SANDBOX_READY, 0),
		{Id: "by-metadata", Metadata: &runtimeapi.PodSandboxMetadata{Uid: "uid-gone-with-sandbox"}},
	}
	for _, tc := range []struct {
		name  string
		ready bool
		want  []string
	}{
		{"sources not ready: nothing goes", false, nil},
		{"the directories of pods that are gone and have no sandbox go", true, []string{"default_gone_uid-gone", "stray"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LogDirs(names, sandboxes, pods, tc.ready); !slices.Equal(got, tc.want) {
				t.Errorf("LogDirs = %v, want %v", got, tc.want)
			}
		})
	}
	if got := LogDirUID("ns_name_1234-abcd"); got != "1234-abcd" {
		t.Errorf("LogDirUID = %q", got)
	}
}

func TestPolicyValidate(t *testing.T) {
	for _, tc := range []struct {
		p  Policy
		ok bool
	}{
		{DefaultPolicy(), true},
		{Policy{MinAge: time.Minute, MaxPerPodContainer: -1, MaxContainers: -5}, true},
		{Policy{MinAge: -time.Second}, false},
	} {
		if err := tc.p.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: Validate() = %v, want ok %v", tc.p, err, tc.ok)
		}
	}
	if d := DefaultPolicy(); d != (Policy{MaxPerPodContainer: 1, MaxContainers: -1}) {
		t.Errorf("DefaultPolicy = %+v, want the kubelet's flag defaults", d)
	}
}
