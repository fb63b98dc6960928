package statusmanager

import (
	"context"
	"errors"
	"github.com/nodelet/nodelet/internal/fakekube"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/podconfig"
)

// fakeMirrors is a MirrorLookup keyed by the static pod's full name.
type fakeMirrors map[string]*v1.Pod

var _ MirrorLookup = fakeMirrors{}

func (f fakeMirrors) MirrorFor(static *v1.Pod) (*v1.Pod, bool) {
	m, ok := f[podconfig.FullName(static)]
	return m, ok
}

// fakeDeletion says which pods could still have running containers.
type fakeDeletion struct {
	mu      sync.Mutex
	running map[types.UID]bool
}

var _ DeletionSafety = (*fakeDeletion)(nil)

func (f *fakeDeletion) CouldHaveRunningContainers(uid types.UID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.running[uid]
}

func (f *fakeDeletion) set(uid types.UID, running bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running[uid] = running
}

// mutableDesired is a DesiredPods whose pods the test changes, as the watch does.
type mutableDesired struct {
	mu   sync.Mutex
	pods []*v1.Pod
}

func (d *mutableDesired) Pods() []*v1.Pod {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]*v1.Pod(nil), d.pods...)
}

func (d *mutableDesired) set(pods ...*v1.Pod) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pods = pods
}

// serverPod is a pod as the API server holds it.
func serverPod(name string, uid types.UID) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: uid},
		Spec:   v1.PodSpec{NodeName: "n1", RestartPolicy: v1.RestartPolicyAlways, Containers: []v1.Container{{Name: "c"}}},
		Status: v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue}}}}
}

// localPod is the pod as the sync loop has it: the server's, with the source annotation.
func localPod(server *v1.Pod, source string) *v1.Pod {
	p := server.DeepCopy()
	p.Annotations = map[string]string{podconfig.ConfigSourceAnnotationKey: source}
	return p
}

type harness struct {
	client   *fake.Clientset
	desired  *mutableDesired
	statuses *Manager
	deletion *fakeDeletion
	mirrors  fakeMirrors
	sync     *APISync
}

func newHarness(t *testing.T, clk clock.WithTicker, objects ...runtime.Object) *harness {
	t.Helper()
	h := &harness{client: fake.NewClientset(objects...), desired: &mutableDesired{},
		deletion: &fakeDeletion{running: map[types.UID]bool{}}, mirrors: fakeMirrors{}}
	h.statuses = New(h.desired)
	var err error
	h.sync, err = NewAPISync(APISyncConfig{}, APISyncDeps{Client: fakekube.Core(h.client), Statuses: h.statuses,
		Mirrors: h.mirrors, Deletion: h.deletion, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// verbs returns the API calls made since the last call, as "verb name[/subresource]".
func (h *harness) verbs() []string {
	var out []string
	for _, a := range h.client.Actions() {
		s := a.GetVerb()
		if n, ok := a.(interface{ GetName() string }); ok {
			s += " " + n.GetName()
		}
		if a.GetSubresource() != "" {
			s += "/" + a.GetSubresource()
		}
		out = append(out, s)
	}
	h.client.ClearActions()
	return out
}

func (h *harness) server(t *testing.T, name string) *v1.Pod {
	t.Helper()
	p, err := h.client.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.client.ClearActions()
	return p
}

func ready(phase v1.PodPhase, ready v1.ConditionStatus) v1.PodStatus {
	return v1.PodStatus{Phase: phase, PodIP: "10.0.0.5", Conditions: []v1.PodCondition{
		{Type: v1.PodReady, Status: ready}, {Type: v1.ContainersReady, Status: ready}, {Type: v1.PodScheduled, Status: v1.ConditionTrue}}}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAPISyncPatchesOnlyOnChange(t *testing.T) {
	ctx := context.Background()
	srv := serverPod("a", "ua")
	h := newHarness(t, clocktesting.NewFakeClock(t0), srv)
	local := localPod(srv, podconfig.APISource)
	h.desired.set(local)

	h.statuses.SetPodStatus(local, ready(v1.PodRunning, v1.ConditionFalse))
	h.sync.syncBatch(ctx, false)
	if got := h.verbs(); !equal(got, []string{"get a", "patch a/status"}) {
		t.Fatalf("first status: %v", got)
	}
	if got := h.server(t, "a"); got.Status.Phase != v1.PodRunning || got.Status.PodIP != "10.0.0.5" {
		t.Fatalf("server status %+v", got.Status)
	}
	h.sync.syncBatch(ctx, false)
	h.statuses.SetPodStatus(local, ready(v1.PodRunning, v1.ConditionFalse)) // the same again: no new version
	h.sync.syncBatch(ctx, false)
	if got := h.verbs(); len(got) != 0 {
		t.Fatalf("nothing changed, yet: %v", got)
	}
	// The periodic pass sees the watch's copy equal to what the kubelet has: nothing to do.
	h.desired.set(localPod(h.server(t, "a"), podconfig.APISource))
	h.sync.syncBatch(ctx, true)
	if got := h.verbs(); len(got) != 0 {
		t.Fatalf("periodic pass with nothing to do: %v", got)
	}
	// Someone overwrote the status: the periodic pass writes the kubelet's again.
	over := h.server(t, "a")
	over.Status.Phase = v1.PodPending
	h.desired.set(localPod(over, podconfig.APISource))
	if _, err := h.client.CoreV1().Pods("ns").UpdateStatus(ctx, over, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.client.ClearActions()
	h.sync.syncBatch(ctx, true)
	if got := h.verbs(); !equal(got, []string{"get a", "patch a/status"}) {
		t.Fatalf("overwritten status: %v", got)
	}
	if got := h.server(t, "a"); got.Status.Phase != v1.PodRunning {
		t.Errorf("phase %s after the periodic pass", got.Status.Phase)
	}
	// A new version whose content the API has already: read, not patched.
	h.statuses.SetPodStatus(local, ready(v1.PodRunning, v1.ConditionTrue))
	if _, err := h.client.CoreV1().Pods("ns").UpdateStatus(ctx, func() *v1.Pod {
		p := h.server(t, "a")
		p.Status = mergeStatus(p, p.Status, ready(v1.PodRunning, v1.ConditionTrue), false, t0)
		return p
	}(), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.client.ClearActions()
	h.sync.syncBatch(ctx, false)
	if got := h.verbs(); !equal(got, []string{"get a"}) {
		t.Fatalf("already up to date: %v", got)
	}
}

func TestAPISyncSkipsARecreatedPod(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, clocktesting.NewFakeClock(t0), serverPod("a", "new-uid"))
	local := localPod(serverPod("a", "old-uid"), podconfig.APISource)
	h.desired.set(local)
	h.statuses.SetPodStatus(local, ready(v1.PodRunning, v1.ConditionTrue))
	h.sync.syncBatch(ctx, false)
	if got := h.verbs(); !equal(got, []string{"get a"}) {
		t.Fatalf("a pod recreated under the same name was written: %v", got)
	}
	if got := h.server(t, "a"); got.Status.Phase != v1.PodPending {
		t.Errorf("the new pod's status was changed: %s", got.Status.Phase)
	}
	h.sync.syncBatch(ctx, true)
	if got := h.verbs(); len(got) != 0 {
		t.Errorf("retried the recreated pod: %v", got)
	}
}

func TestAPISyncNeverWritesAnOlderVersion(t *testing.T) {
	ctx := context.Background()
	srv := serverPod("a", "ua")
	h := newHarness(t, clocktesting.NewFakeClock(t0), srv)
	local := localPod(srv, podconfig.APISource)
	h.desired.set(local)
	h.statuses.SetPodStatus(local, ready(v1.PodRunning, v1.ConditionFalse))
	stale := h.statuses.Versioned()[0]
	h.statuses.SetPodStatus(local, ready(v1.PodRunning, v1.ConditionTrue))
	if v := h.statuses.Versioned()[0].Version; v != stale.Version+1 {
		t.Fatalf("version %d after a change from %d", v, stale.Version)
	}
	h.sync.syncBatch(ctx, false)
	h.verbs()
	// A batch that read the statuses before the newer one was set finishes late.
	h.sync.syncOne(ctx, work{Versioned: stale, target: local})
	if got := h.verbs(); len(got) != 0 {
		t.Fatalf("an older status was written over a newer one: %v", got)
	}
	if c := byType(h.server(t, "a").Status.Conditions)[v1.PodReady]; c.Status != v1.ConditionTrue {
		t.Errorf("Ready %+v", c)
	}
}

func TestAPISyncKeepsConditionsOfOthers(t *testing.T) {
	ctx := context.Background()
	srv := serverPod("a", "ua")
	srv.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gate}}
	srv.Status.Conditions = append(srv.Status.Conditions, v1.PodCondition{Type: gate, Status: v1.ConditionTrue})
	h := newHarness(t, clocktesting.NewFakeClock(t0), srv)
	local := localPod(srv, podconfig.APISource)
	h.desired.set(local)
	h.statuses.SetPodStatus(local, ready(v1.PodRunning, v1.ConditionTrue)) // no gate condition in it
	h.sync.syncBatch(ctx, false)
	c := byType(h.server(t, "a").Status.Conditions)
	if c[gate].Status != v1.ConditionTrue || c[v1.PodReady].Status != v1.ConditionTrue || c[v1.PodScheduled].Status != v1.ConditionTrue {
		t.Errorf("conditions after the patch: %+v", c)
	}
}

func TestAPISyncWritesStaticPodsThroughTheirMirror(t *testing.T) {
	ctx := context.Background()
	mirror := serverPod("s-n1", "mirror-uid")
	mirror.Annotations = map[string]string{podconfig.ConfigMirrorAnnotationKey: "h"}
	h := newHarness(t, clocktesting.NewFakeClock(t0), mirror)
	static := localPod(serverPod("s-n1", "static-uid"), podconfig.FileSource)
	h.desired.set(static)
	h.statuses.SetPodStatus(static, ready(v1.PodSucceeded, v1.ConditionFalse))
	h.sync.syncBatch(ctx, true)
	if got := h.verbs(); len(got) != 0 {
		t.Fatalf("a static pod without a mirror was written: %v", got)
	}

	h.mirrors["s-n1_ns"] = mirror
	h.sync.syncBatch(ctx, false)
	if got := h.verbs(); !equal(got, []string{"get s-n1", "patch s-n1/status"}) {
		t.Fatalf("through the mirror: %v", got)
	}
	got := h.server(t, "s-n1")
	if got.Status.Phase != v1.PodSucceeded {
		t.Errorf("mirror phase %s", got.Status.Phase)
	}
	// A mirror pod is never deleted by the status sync, even when finished and being deleted.
	now := metav1.NewTime(t0)
	got.DeletionTimestamp = &now
	h.mirrors["s-n1_ns"] = got
	h.sync.syncBatch(ctx, true)
	for _, v := range h.verbs() {
		if v == "delete s-n1" {
			t.Fatal("the status sync deleted a mirror pod")
		}
	}
	// The mirror was recreated (new UID); the status goes to the new one.
	delete(h.mirrors, "s-n1_ns")
	if err := h.client.CoreV1().Pods("ns").Delete(ctx, "s-n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fresh := serverPod("s-n1", "mirror-uid-2")
	fresh.Annotations = mirror.Annotations
	if _, err := h.client.CoreV1().Pods("ns").Create(ctx, fresh, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.mirrors["s-n1_ns"] = fresh
	h.client.ClearActions()
	h.sync.syncBatch(ctx, false)
	if got := h.verbs(); !equal(got, []string{"get s-n1", "patch s-n1/status"}) {
		t.Fatalf("a new mirror pod gets the status: %v", got)
	}
}

func TestAPISyncDeletesAFinishedPod(t *testing.T) {
	ctx := context.Background()
	srv := serverPod("a", "ua")
	now := metav1.NewTime(t0)
	srv.DeletionTimestamp, srv.DeletionGracePeriodSeconds = &now, new(int64(30))
	srv.Status.Phase = v1.PodRunning
	h := newHarness(t, clocktesting.NewFakeClock(t0), srv)
	var deletes []metav1.DeleteOptions
	h.client.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		deletes = append(deletes, a.(k8stesting.DeleteActionImpl).GetDeleteOptions())
		return false, nil, nil
	})
	local := localPod(srv, podconfig.APISource)
	h.desired.set(local)
	h.deletion.set("ua", true)

	// Killed, but the worker has not confirmed the containers stopped: the phase is held back.
	h.statuses.SetPodStatus(local, ready(v1.PodFailed, v1.ConditionFalse))
	h.sync.syncBatch(ctx, false)
	if got := h.verbs(); !equal(got, []string{"get a", "patch a/status"}) {
		t.Fatalf("while containers could run: %v", got)
	}
	if got := h.server(t, "a"); got.Status.Phase != v1.PodRunning {
		t.Fatalf("phase %s written while containers could run", got.Status.Phase)
	}
	// The containers stopped; the final status (the same) is set again: written and deleted
	// at once, not at the next periodic pass.
	h.deletion.set("ua", false)
	h.statuses.SetPodStatus(local, ready(v1.PodFailed, v1.ConditionFalse))
	h.sync.syncBatch(ctx, false)
	if got := h.verbs(); !equal(got, []string{"get a", "patch a/status", "delete a"}) {
		t.Fatalf("after termination: %v", got)
	}
	if len(deletes) != 1 || deletes[0].GracePeriodSeconds == nil || *deletes[0].GracePeriodSeconds != 0 ||
		deletes[0].Preconditions == nil || deletes[0].Preconditions.UID == nil || *deletes[0].Preconditions.UID != "ua" {
		t.Fatalf("delete options %+v", deletes)
	}
}

func TestAPISyncRetriesAFailedDeletion(t *testing.T) {
	ctx := context.Background()
	srv := serverPod("a", "ua")
	now := metav1.NewTime(t0)
	srv.DeletionTimestamp = &now
	srv.Status.Phase = v1.PodSucceeded
	h := newHarness(t, clocktesting.NewFakeClock(t0), srv)
	fail := true
	h.client.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if fail {
			return true, nil, errors.New("etcdserver: request timed out")
		}
		return false, nil, nil
	})
	local := localPod(srv, podconfig.APISource)
	h.desired.set(local)
	h.statuses.SetPodStatus(local, srv.Status)
	h.sync.syncBatch(ctx, false)
	if got := h.verbs(); !equal(got, []string{"get a", "delete a"}) {
		t.Fatalf("first attempt: %v", got)
	}
	fail = false
	h.sync.syncBatch(ctx, true)
	if got := h.verbs(); !equal(got, []string{"get a", "delete a"}) {
		t.Fatalf("retry: %v", got)
	}
	if _, err := h.client.CoreV1().Pods("ns").Get(ctx, "a", metav1.GetOptions{}); err == nil {
		t.Error("the pod is still there")
	}
}

func TestAPISyncCatchesUpAfterAnOutage(t *testing.T) {
	ctx := context.Background()
	srv := serverPod("a", "ua")
	h := newHarness(t, clocktesting.NewFakeClock(t0), srv, serverPod("b", "ub"))
	down := true
	h.client.PrependReactor("*", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if down {
			return true, nil, errors.New("dial tcp 10.0.0.1:6443: connect: connection refused")
		}
		return false, nil, nil
	})
	a, b := localPod(srv, podconfig.APISource), localPod(serverPod("b", "ub"), podconfig.APISource)
	h.desired.set(a, b)
	h.statuses.SetPodStatus(a, ready(v1.PodRunning, v1.ConditionFalse))
	h.statuses.SetPodStatus(b, ready(v1.PodRunning, v1.ConditionFalse))
	h.sync.syncBatch(ctx, false)
	h.statuses.SetPodStatus(a, ready(v1.PodRunning, v1.ConditionTrue))
	h.sync.syncBatch(ctx, false)
	if got := h.verbs(); len(got) != 4 {
		t.Fatalf("during the outage each pod is tried once per pass: %v", got)
	}
	down = false
	if n := h.sync.syncBatch(ctx, true); n != 2 {
		t.Fatalf("the periodic pass after the outage synced %d pods, want 2", n)
	}
	if c := byType(h.server(t, "a").Status.Conditions)[v1.PodReady]; c.Status != v1.ConditionTrue {
		t.Errorf("pod a has Ready %+v, want the latest status", c)
	}
	if h.server(t, "b").Status.Phase != v1.PodRunning {
		t.Error("pod b was not caught up")
	}
}

// Run writes on a signalled change without waiting for the period, and every period.
func TestAPISyncRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := serverPod("a", "ua")
		h := newHarness(t, clock.RealClock{}, srv)
		local := localPod(srv, podconfig.APISource)
		h.desired.set(local)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); h.sync.Run(ctx) }()
		defer func() { cancel(); <-done }()

		h.statuses.SetPodStatus(local, ready(v1.PodRunning, v1.ConditionFalse))
		synctest.Wait()
		if got := h.verbs(); !equal(got, []string{"get a", "patch a/status"}) {
			t.Fatalf("on change: %v", got)
		}
		// Someone else overwrites the status; the next periodic pass restores it.
		p := h.server(t, "a")
		p.Status.PodIP = "192.0.2.9"
		if _, err := h.client.CoreV1().Pods("ns").UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		h.desired.set(localPod(p, podconfig.APISource))
		h.client.ClearActions()
		time.Sleep(DefaultSyncPeriod)
		synctest.Wait()
		if got := h.server(t, "a").Status.PodIP; got != "10.0.0.5" {
			t.Errorf("pod IP %q after the periodic pass, want the kubelet's", got)
		}
	})
}

func TestNewAPISyncRequiresItsDependencies(t *testing.T) {
	if _, err := NewAPISync(APISyncConfig{}, APISyncDeps{}); err == nil {
		t.Fatal("no error without dependencies")
	}
}
