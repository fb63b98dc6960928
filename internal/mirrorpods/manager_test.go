package mirrorpods

import (
	"context"
	"errors"
	"fmt"
	"github.com/nodelet/nodelet/internal/fakekube"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/podconfig"
)

type harness struct {
	client  *fake.Clientset
	clock   *clocktesting.FakeClock
	m       *Manager
	nodeUID types.UID
	mu      sync.Mutex
	changes [][]types.NamespacedName
	deletes []metav1.DeleteOptions
}

// newHarness runs a Manager against a fake API server that, like the real one, gives each
// created pod a fresh UID.
func newHarness(t *testing.T, objects ...runtime.Object) *harness {
	t.Helper()
	h := &harness{client: fake.NewClientset(objects...), clock: clocktesting.NewFakeClock(t0), nodeUID: "node-uid"}
	n := 0
	h.client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		n++
		a.(k8stesting.CreateAction).GetObject().(*v1.Pod).UID = types.UID(fmt.Sprintf("created-%d", n))
		return false, nil, nil
	})
	h.client.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		h.deletes = append(h.deletes, a.(k8stesting.DeleteActionImpl).GetDeleteOptions())
		return false, nil, nil
	})
	var err error
	h.m, err = New(Config{NodeName: "n1", OnChange: func(names []types.NamespacedName) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.changes = append(h.changes, names)
	}}, Deps{Client: fakekube.Core(h.client), NodeUID: func() types.UID { return h.nodeUID }, Clock: h.clock})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) takeChanges() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := fmt.Sprint(h.changes)
	h.changes = nil
	return out
}

// verbs returns the API calls made since the last call.
func (h *harness) verbs() []string {
	var out []string
	for _, a := range h.client.Actions() {
		s := a.GetVerb()
		if n, ok := a.(interface{ GetName() string }); ok && n.GetName() != "" {
			s += " " + n.GetName()
		}
		out = append(out, s)
	}
	h.client.ClearActions()
	return out
}

// watch shows the Manager what the API server holds now, as the API source does.
func (h *harness) watch(t *testing.T) {
	t.Helper()
	list, err := h.client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.client.ClearActions()
	var mirrors []*v1.Pod
	for i := range list.Items {
		if podconfig.IsMirrorPod(&list.Items[i]) {
			mirrors = append(mirrors, &list.Items[i])
		}
	}
	h.m.SetMirrorPods(mirrors)
}

func (h *harness) get(t *testing.T, name string) *v1.Pod {
	t.Helper()
	p, err := h.client.CoreV1().Pods("kube-system").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.client.ClearActions()
	return p
}

func eq(a []string, b ...string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func TestSyncCreatesTheMirrorPod(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	s := static("etcd-n1", "h1")
	if err := h.m.Sync(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got := h.verbs(); len(got) != 0 {
		t.Fatalf("created before the first view of the API server's pods: %v", got)
	}
	h.watch(t)
	if got := h.takeChanges(); got != "[[kube-system/etcd-n1]]" {
		t.Fatalf("the waiting static pod was not reported once the view arrived: %s", got)
	}
	if err := h.m.Sync(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got := h.verbs(); !eq(got, "create") {
		t.Fatalf("calls %v, want a create", got)
	}
	m := h.get(t, "etcd-n1")
	if m.Annotations[podconfig.ConfigMirrorAnnotationKey] != "h1" || m.OwnerReferences[0].UID != "node-uid" {
		t.Errorf("mirror pod %+v", m.ObjectMeta)
	}
	if got, ok := h.m.MirrorFor(s); !ok || got.UID != m.UID {
		t.Errorf("MirrorFor before the watch shows it: %v %v", got, ok)
	}
	// Synced again before the watch shows the new mirror pod: no second create.
	if err := h.m.Sync(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got := h.verbs(); len(got) != 0 {
		t.Errorf("second sync: %v", got)
	}
	h.watch(t)
	if got := h.takeChanges(); got != "[]" {
		t.Errorf("the watch showing our own mirror pod is not a change: %s", got)
	}
	if got, ok := h.m.MirrorFor(s); !ok || got.UID != m.UID {
		t.Errorf("MirrorFor after the watch: %v %v", got, ok)
	}
}

func TestSyncWaitsForTheNodeUID(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	h.nodeUID = ""
	h.watch(t)
	s := static("etcd-n1", "h1")
	if err := h.m.Sync(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got := h.verbs(); len(got) != 0 {
		t.Fatalf("created without the node's UID: %v", got)
	}
	h.nodeUID = "node-uid"
	h.m.RetryPending()
	if got := h.takeChanges(); got != "[[kube-system/etcd-n1]]" {
		t.Fatalf("RetryPending reported %s", got)
	}
	h.m.RetryPending()
	if got := h.takeChanges(); got != "[]" {
		t.Errorf("reported twice: %s", got)
	}
}

func TestSyncReplacesAnOutdatedMirrorPod(t *testing.T) {
	for _, tc := range []struct {
		name string
		old  *v1.Pod
	}{
		{"outdated", mirror("etcd-n1", "h0", "old")},
		{"being deleted", mirror("etcd-n1", "h1", "old", deleting)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			h := newHarness(t, tc.old)
			h.watch(t)
			h.takeChanges()
			if err := h.m.Sync(ctx, static("etcd-n1", "h1")); err != nil {
				t.Fatal(err)
			}
			if got := h.verbs(); !eq(got, "delete etcd-n1", "create") {
				t.Fatalf("calls %v", got)
			}
			if d := h.deletes[0]; d.GracePeriodSeconds == nil || *d.GracePeriodSeconds != 0 || d.Preconditions == nil || *d.Preconditions.UID != "old" {
				t.Errorf("delete options %+v", d)
			}
			if m := h.get(t, "etcd-n1"); m.UID == "old" || m.Annotations[podconfig.ConfigMirrorAnnotationKey] != "h1" {
				t.Errorf("mirror pod after the sync: %s %v", m.UID, m.Annotations)
			}
			h.watch(t)
			if got := h.takeChanges(); got != "[]" {
				t.Errorf("the replacement was reported as a change: %s", got)
			}
		})
	}
}

func TestSyncDoesNotCreateWhenAnotherMirrorTookTheName(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, mirror("etcd-n1", "h0", "old"))
	h.watch(t)
	h.client.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(v1.Resource("pods"), "etcd-n1", errors.New("Precondition failed: UID in precondition: old, UID in object meta: newer"))
	})
	if err := h.m.Sync(ctx, static("etcd-n1", "h1")); err != nil {
		t.Fatal(err)
	}
	if got := h.verbs(); !eq(got, "delete etcd-n1") {
		t.Errorf("calls %v, want the delete only", got)
	}
}

func TestSyncReportsFailures(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	h.watch(t)
	h.client.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(v1.Resource("pods"), "etcd-n1", errors.New(`node "n1" can only create pods with an owner reference set to itself`))
	})
	if err := h.m.Sync(ctx, static("etcd-n1", "h1")); err == nil || !apierrors.IsForbidden(err) {
		t.Fatalf("err %v, want the Forbidden error", err)
	}
	// A refusal waits for the next periodic sync; a transient failure (an API server outage) is
	// retried through RetryPending.
	h.m.RetryPending()
	if got := h.takeChanges(); got != "[]" {
		t.Fatalf("RetryPending after a refusal reported %s", got)
	}
	h.client.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	})
	if err := h.m.Sync(ctx, static("etcd-n1", "h1")); err == nil {
		t.Fatal("no error while the API server is unreachable")
	}
	h.m.RetryPending()
	if got := h.takeChanges(); got != "[[kube-system/etcd-n1]]" {
		t.Errorf("RetryPending after a transient failure reported %s", got)
	}
	api := static("web", "h1")
	api.Annotations[podconfig.ConfigSourceAnnotationKey] = podconfig.APISource
	h.verbs()
	if err := h.m.Sync(ctx, api); err != nil || len(h.verbs()) != 0 {
		t.Errorf("a pod from the API server got a mirror pod: %v", err)
	}
}

func TestOnChangeReportsDisappearedAndChangedMirrors(t *testing.T) {
	h := newHarness(t)
	a, b := mirror("a", "h1", "ma"), mirror("b", "h1", "mb")
	h.m.SetMirrorPods([]*v1.Pod{a, b})
	if got := h.takeChanges(); got != "[[kube-system/a kube-system/b]]" {
		t.Fatalf("first view: %s", got)
	}
	running := a.DeepCopy()
	running.Status.Phase = v1.PodRunning
	h.m.SetMirrorPods([]*v1.Pod{running, b})
	if got := h.takeChanges(); got != "[]" {
		t.Errorf("a status change was reported: %s", got)
	}
	gone := b.DeepCopy()
	deleting(gone)
	h.m.SetMirrorPods([]*v1.Pod{running, gone})
	h.m.SetMirrorPods([]*v1.Pod{running})
	if got := h.takeChanges(); got != "[[kube-system/b] [kube-system/b]]" {
		t.Errorf("deletion then disappearance: %s", got)
	}
}

func TestCreatedMirrorIsForgottenWhenTheWatchNeverShowsIt(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	h.watch(t)
	s := static("etcd-n1", "h1")
	if err := h.m.Sync(ctx, s); err != nil {
		t.Fatal(err)
	}
	// Someone deletes it before the watch ever shows it (a relist merged both events).
	if err := h.client.CoreV1().Pods("kube-system").Delete(ctx, "etcd-n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.watch(t)
	if _, ok := h.m.MirrorFor(s); !ok {
		t.Fatal("the mirror pod just created was dropped by a view that predates it")
	}
	h.clock.Step(CreatedTTL + time.Second)
	h.watch(t)
	if _, ok := h.m.MirrorFor(s); ok {
		t.Fatal("a created mirror pod the watch never showed is trusted forever")
	}
	if got := h.takeChanges(); got != "[[kube-system/etcd-n1]]" {
		t.Errorf("its loss was not reported: %s", got)
	}
}

func TestHousekeepDeletesOrphans(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, mirror("a", "h1", "ma"), mirror("b", "h1", "mb"), mirror("c", "h1", "mc"))
	h.watch(t)
	api := static("c", "h1")
	api.Annotations[podconfig.ConfigSourceAnnotationKey] = podconfig.APISource // not a static pod
	h.m.Housekeep(ctx, func() []*v1.Pod { return []*v1.Pod{static("a", "h1"), api} })
	got := h.verbs()
	if !eq(got, "delete b", "delete c") && !eq(got, "delete c", "delete b") {
		t.Fatalf("calls %v, want the mirror pods b and c deleted", got)
	}
	for _, d := range h.deletes {
		if d.Preconditions == nil || d.Preconditions.UID == nil || (*d.Preconditions.UID != "mb" && *d.Preconditions.UID != "mc") {
			t.Errorf("delete without the mirror's UID as precondition: %+v", d)
		}
	}
	h.client.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	if err := h.m.DeleteOrphans(ctx, map[types.NamespacedName]bool{}); err == nil {
		t.Error("a failed delete was not reported")
	}
}

func TestNewRequiresItsDependencies(t *testing.T) {
	if _, err := New(Config{}, Deps{}); err == nil {
		t.Fatal("no error without dependencies")
	}
}
