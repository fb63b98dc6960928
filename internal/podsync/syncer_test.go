package podsync

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/checkpoint"
	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/kuberuntime"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/podmanager"
	"github.com/nodelet/nodelet/internal/podworkers"
	"github.com/nodelet/nodelet/internal/prober/probeview"
	"github.com/nodelet/nodelet/internal/status"
	"github.com/nodelet/nodelet/internal/statusmanager"
)

// The syncer's side: it gathers a step's inputs, calls the runtime, stores each decided status
// once, and keeps the pod's State itself (Statuses has no read method to read it back from).

type fakeRuntime struct {
	result     kuberuntime.SyncResult
	lastProbes probeview.View
	synced     int
	killed     []int64
	after      *container.PodStatus
	killErr    error
	// storedAtSync is how many statuses were stored when the runtime was last synced.
	storedAtSync int
	statuses     *fakeStatuses
}

var _ Runtime = (*fakeRuntime)(nil)

func (f *fakeRuntime) SyncPod(_ context.Context, _ *v1.Pod, _ *container.PodStatus, probes probeview.View) kuberuntime.SyncResult {
	f.synced++
	f.lastProbes = probes
	if f.statuses != nil {
		f.storedAtSync = len(f.statuses.stored)
	}
	return f.result
}
func (f *fakeRuntime) KillPod(_ context.Context, _ *v1.Pod, _ *container.PodStatus, g *int64) error {
	f.killed = append(f.killed, *g)
	return f.killErr
}
func (f *fakeRuntime) GetPodStatus(context.Context, types.UID, string, string) (*container.PodStatus, error) {
	return f.after, nil
}

// fakeStatuses records every stored status.
type fakeStatuses struct{ stored []v1.PodStatus }

var _ Statuses = (*fakeStatuses)(nil)

func (f *fakeStatuses) SetPodStatus(_ *v1.Pod, st v1.PodStatus) { f.stored = append(f.stored, st) }

func (f *fakeStatuses) last(t *testing.T) v1.PodStatus {
	t.Helper()
	if len(f.stored) == 0 {
		t.Fatal("no status stored")
	}
	return f.stored[len(f.stored)-1]
}

// fakeProbes reports container c's liveness probe as failed (unless view is set), and records
// what it was asked.
type fakeProbes struct {
	asked []map[string]string
	view  probeview.View
}

var _ Probes = (*fakeProbes)(nil)

func (f *fakeProbes) Results(_ *v1.Pod, ids map[string]string) probeview.View {
	f.asked = append(f.asked, ids)
	if f.view.LivenessFailed == nil {
		f.view = probeview.View{Ready: map[string]bool{}, LivenessFailed: map[string]bool{"c": true}}
	}
	return f.view
}

type fixture struct {
	rt       *fakeRuntime
	statuses *fakeStatuses
	probes   *fakeProbes
	s        *Syncer
}

func newFixture(result kuberuntime.SyncResult) *fixture {
	st := &fakeStatuses{}
	f := &fixture{rt: &fakeRuntime{result: result, statuses: st}, statuses: st, probes: &fakeProbes{}}
	f.s = mustNew(nil, Config{HostIPs: []string{"192.0.2.1"}}, Deps{Runtime: f.rt, Statuses: st, Probes: f.probes, Clock: clocktesting.NewFakeClock(t0)})
	return f
}

// SyncPod stores one status per sync, after the runtime acted; the runtime gets the prober's
// view as the prober gave it; a finished pod is not synced with the runtime.
func TestSyncPodApplies(t *testing.T) {
	pullErr := kuberuntime.SyncResult{Waiting: waitingFor(kuberuntime.ReasonErrImagePull, "no such image"), Err: errors.New("pull failed")}
	for _, tc := range []struct {
		name     string
		pod      *v1.Pod
		ps       *container.PodStatus
		result   kuberuntime.SyncResult
		terminal bool
		wantErr  bool
		synced   int
		check    func(t *testing.T, st v1.PodStatus)
	}{
		{name: "a waiting reason shows in the status stored by the same sync", pod: podOf(v1.RestartPolicyNever), ps: &container.PodStatus{ID: "u"},
			result: pullErr, wantErr: true, synced: 1,
			check: func(t *testing.T, st v1.PodStatus) {
				wantWaiting(t, st, kuberuntime.ReasonErrImagePull, "no such image")
				if st.HostIP != "192.0.2.1" || st.Phase != v1.PodPending {
					t.Errorf("hostIP %q phase %s", st.HostIP, st.Phase)
				}
			}},
		{name: "a running pod", pod: podOf(v1.RestartPolicyAlways), ps: inSandbox(instance("1", container.StateRunning, 0, 10)), synced: 1,
			check: func(t *testing.T, st v1.PodStatus) { wantPhase(t, st, v1.PodRunning, "") }},
		{name: "a finished pod: stored, the runtime not synced", pod: podOf(v1.RestartPolicyNever), ps: running(container.StateExited, 3),
			result: pullErr, terminal: true,
			check: func(t *testing.T, st v1.PodStatus) { wantPhase(t, st, v1.PodFailed, "") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(tc.result)
			terminal, err := f.s.SyncPod(context.Background(), podworkers.SyncPodSync, tc.pod, tc.ps)
			if terminal != tc.terminal || (err != nil) != tc.wantErr || f.rt.synced != tc.synced {
				t.Fatalf("terminal %v err %v synced %d; want %v, an error: %v, synced %d", terminal, err, f.rt.synced, tc.terminal, tc.wantErr, tc.synced)
			}
			if len(f.statuses.stored) != 1 || f.rt.storedAtSync != 0 {
				t.Errorf("stored %d statuses (%d before the runtime), want one, after it", len(f.statuses.stored), f.rt.storedAtSync)
			}
			if len(f.probes.asked) != 1 || !reflect.DeepEqual(f.probes.asked[0], currentIDs(tc.ps)) {
				t.Errorf("asked the prober %v, want once about %v", f.probes.asked, currentIDs(tc.ps))
			}
			if tc.synced > 0 && !reflect.DeepEqual(f.rt.lastProbes, f.probes.view) {
				t.Errorf("the runtime got %+v, want the prober's %+v", f.rt.lastProbes, f.probes.view)
			}
			tc.check(t, f.statuses.last(t))
		})
	}
}

// The pod's State goes from one sync to the next in the syncer: the reasons of the last sync
// still show before the runtime reports again, and the status manager is only written.
func TestSyncPodKeepsTheStateBetweenSyncs(t *testing.T) {
	f := newFixture(kuberuntime.SyncResult{Waiting: waitingFor(kuberuntime.ReasonImagePullBackOff, "back-off")})
	p := podOf(v1.RestartPolicyAlways)
	ps := &container.PodStatus{ID: "u"}
	for range 2 {
		if _, err := f.s.SyncPod(context.Background(), podworkers.SyncPodSync, p, ps); err != nil {
			t.Fatal(err)
		}
		wantWaiting(t, f.statuses.last(t), kuberuntime.ReasonImagePullBackOff, "back-off")
	}
	if got := f.s.states["u"].Waiting; !sameWaiting(got, waitingFor(kuberuntime.ReasonImagePullBackOff, "back-off")) {
		t.Errorf("state's reasons %v", got)
	}
	f.rt.result = kuberuntime.SyncResult{}
	if _, err := f.s.SyncPod(context.Background(), podworkers.SyncPodSync, p, ps); err != nil {
		t.Fatal(err)
	}
	wantWaiting(t, f.statuses.last(t), status.ReasonContainerCreating, "")
	if len(f.statuses.stored) != 3 {
		t.Errorf("stored %d statuses in 3 syncs", len(f.statuses.stored))
	}
}

// The real status manager accepts what the syncer stores and serves it to its readers.
func TestSyncPodStoresInTheStatusManager(t *testing.T) {
	pm := podmanager.New()
	p := podOf(v1.RestartPolicyAlways)
	pm.AddOrUpdate(p)
	sm := statusmanager.New(pm)
	s := mustNew(t, Config{}, Deps{Runtime: &fakeRuntime{result: kuberuntime.SyncResult{Waiting: waitingFor(kuberuntime.ReasonCrashLoopBackOff, "back-off")}}, Statuses: sm, Probes: &fakeProbes{}, Clock: clocktesting.NewFakeClock(t0)})
	if _, err := s.SyncPod(context.Background(), podworkers.SyncPodSync, p, inSandbox(instance("1", container.StateExited, 1, 10))); err != nil {
		t.Fatal(err)
	}
	got := sm.Pods()
	if len(got) != 1 || got[0].Status.Phase != v1.PodRunning {
		t.Fatalf("status manager's pods: %+v", got)
	}
	wantWaiting(t, got[0].Status, kuberuntime.ReasonCrashLoopBackOff, "back-off")
}

func TestSyncTerminatingPod(t *testing.T) {
	f := newFixture(kuberuntime.SyncResult{})
	p := podOf(v1.RestartPolicyAlways)
	f.rt.after = running(container.StateRunning, 0)
	if err := f.s.SyncTerminatingPod(context.Background(), p, running(container.StateRunning, 0), 7, podworkers.Failure{}); err == nil {
		t.Fatal("a container still running after the kill must be an error, so the worker retries")
	}
	if len(f.rt.killed) != 1 || f.rt.killed[0] != 7 || len(f.statuses.stored) != 0 {
		t.Fatalf("KillPod grace %v, want [7]; stored %d, want none", f.rt.killed, len(f.statuses.stored))
	}
	f.rt.after = running(container.StateExited, 137)
	if err := f.s.SyncTerminatingPod(context.Background(), p, running(container.StateRunning, 0), 7, podworkers.Failure{}); err != nil {
		t.Fatal(err)
	}
	if len(f.statuses.stored) != 1 {
		t.Errorf("stored %d statuses, want one", len(f.statuses.stored))
	}
	if term := cstatus(t, f.statuses.last(t)).State.Terminated; term == nil || term.ExitCode != 137 {
		t.Errorf("final container state %+v", cstatus(t, f.statuses.last(t)).State)
	}
	if err := f.s.SyncTerminatedPod(context.Background(), p, f.rt.after); err != nil {
		t.Fatal(err)
	}
	wantPhase(t, f.statuses.last(t), v1.PodFailed, "")
	if len(f.statuses.stored) != 2 || len(f.s.states) != 0 {
		t.Errorf("stored %d statuses, want 2; states left %v", len(f.statuses.stored), f.s.states)
	}
}

// A kill with a failure (an eviction) stores the Failed status before the kill, so that it
// shows while the pod stops, and the stopped pod's status after it, still Failed.
func TestSyncTerminatingPodFailure(t *testing.T) {
	f := newFixture(kuberuntime.SyncResult{})
	f.rt.after = running(container.StateExited, 137)
	failure := podworkers.Failure{Reason: "Evicted", Message: "The node was low on resource: memory. ", DisruptionTarget: true}
	if err := f.s.SyncTerminatingPod(context.Background(), pod(), running(container.StateRunning, 0), 1, failure); err != nil {
		t.Fatal(err)
	}
	if len(f.statuses.stored) != 2 {
		t.Fatalf("stored %d statuses, want before and after the kill", len(f.statuses.stored))
	}
	for i, st := range f.statuses.stored {
		wantPhase(t, st, v1.PodFailed, "Evicted")
		if dt := condition(st, v1.DisruptionTarget); dt == nil || dt.Status != v1.ConditionTrue || dt.Message != failure.Message {
			t.Errorf("status %d: DisruptionTarget %+v", i, dt)
		}
	}
	if cstatus(t, f.statuses.stored[0]).State.Running == nil || cstatus(t, f.statuses.stored[1]).State.Terminated == nil {
		t.Errorf("container states %+v then %+v, want running then terminated", cstatus(t, f.statuses.stored[0]).State, cstatus(t, f.statuses.stored[1]).State)
	}
}

type fakeVolumes struct {
	tornDown []types.UID
	err      error
}

var _ Volumes = (*fakeVolumes)(nil)

func (f *fakeVolumes) TearDownVolumes(uid types.UID) error {
	f.tornDown = append(f.tornDown, uid)
	return f.err
}

// A terminated pod's volumes are released (an evicted pod's emptyDir frees its memory and disk
// at once, as upstream); a failure is retried with the pod's final status already recorded and
// its State kept, which is forgotten once the release succeeds.
func TestSyncTerminatedPodReleasesVolumes(t *testing.T) {
	f := newFixture(kuberuntime.SyncResult{})
	vols := &fakeVolumes{err: errors.New("device busy")}
	f.s.deps.Volumes = vols
	if err := f.s.SyncTerminatedPod(context.Background(), pod(), &container.PodStatus{ID: "u"}); err == nil || !strings.Contains(err.Error(), "device busy") {
		t.Fatalf("err = %v, want the teardown's", err)
	}
	wantPhase(t, f.statuses.last(t), v1.PodFailed, "")
	if _, kept := f.s.states["u"]; !kept {
		t.Error("the state was forgotten before the pod was done with")
	}
	vols.err = nil
	if err := f.s.SyncTerminatedPod(context.Background(), pod(), &container.PodStatus{ID: "u"}); err != nil {
		t.Fatal(err)
	}
	if len(vols.tornDown) != 2 || vols.tornDown[1] != "u" || len(f.s.states) != 0 {
		t.Errorf("torn down %v, states %v", vols.tornDown, f.s.states)
	}
}

// fakeMirrors records the pods it was asked to sync, and what the runtime had done by then.
type fakeMirrors struct {
	rt     *fakeRuntime
	synced []string
	err    error
}

var _ Mirrors = (*fakeMirrors)(nil)

func (f *fakeMirrors) Sync(_ context.Context, static *v1.Pod) error {
	f.synced = append(f.synced, fmt.Sprintf("%s@%d", static.Name, f.rt.synced))
	return f.err
}

// The mirror pod is synced before the runtime when the step says so; its failure does not fail
// the pod's sync.
func TestSyncPodKeepsTheMirrorPodOfStaticPods(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		ps   *container.PodStatus
		want string
	}{
		{"static pod: before the runtime sync", podOf(v1.RestartPolicyAlways, fromSource(podconfig.FileSource)), &container.PodStatus{ID: "u"}, "[p@0]"},
		{"pod from the API server", podOf(v1.RestartPolicyAlways, fromSource(podconfig.APISource)), &container.PodStatus{ID: "u"}, "[]"},
		{"finished static pod", podOf(v1.RestartPolicyNever, fromSource(podconfig.FileSource)), running(container.StateExited, 0), "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(kuberuntime.SyncResult{})
			mirrors := &fakeMirrors{rt: f.rt, err: errors.New("forbidden")}
			f.s.deps.Mirrors = mirrors
			if _, err := f.s.SyncPod(context.Background(), podworkers.SyncPodSync, tc.pod, tc.ps); err != nil {
				t.Fatalf("a mirror pod failure failed the pod's sync: %v", err)
			}
			if got := fmt.Sprint(mirrors.synced); got != tc.want {
				t.Errorf("mirror syncs %s, want %s", got, tc.want)
			}
		})
	}
}

type fakeStartMetrics struct{ observed []time.Duration }

var _ StartMetrics = (*fakeStartMetrics)(nil)

func (f *fakeStartMetrics) ObservePodStart(d time.Duration) { f.observed = append(f.observed, d) }

// kubelet_pod_start_duration_seconds: observed once, when the pod turns Running.
func TestPodStartDurationObservedOnceWhenRunning(t *testing.T) {
	f := newFixture(kuberuntime.SyncResult{})
	m := &fakeStartMetrics{}
	f.s.deps.Metrics = m
	p := podOf(v1.RestartPolicyAlways, seenAt(time.Unix(97, 500_000_000)))
	if _, err := f.s.SyncPod(context.Background(), podworkers.SyncPodSync, p, &container.PodStatus{ID: "u"}); err != nil {
		t.Fatal(err)
	}
	if len(m.observed) != 0 {
		t.Fatalf("a pending pod was observed: %v", m.observed)
	}
	for range 2 {
		if _, err := f.s.SyncPod(context.Background(), podworkers.SyncPodSync, p, running(container.StateRunning, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if len(m.observed) != 1 || m.observed[0] != 2500*time.Millisecond {
		t.Errorf("observed %v, want one 2.5s", m.observed)
	}
}

// mustNew is New for tests; a nil t panics on an error.
func mustNew(t testing.TB, cfg Config, deps Deps) *Syncer {
	s, err := New(cfg, deps)
	if err != nil {
		if t == nil {
			panic(err)
		}
		t.Fatal(err)
	}
	return s
}

// A pod's start time survives a restart of nodelet through the checkpoint: the first sync of
// a restored pod keeps the restored start time, which Pods then reports; a pod whose API
// status has a start time keeps that one; restored pods that have not synced are kept in
// Pods for a while, then forgotten.
func TestRestoredStartTimes(t *testing.T) {
	f := newFixture(kuberuntime.SyncResult{})
	clock := clocktesting.NewFakeClock(t0)
	f.s.deps.Clock = clock
	then := metav1.NewTime(t0.Add(-time.Hour).Truncate(time.Second))
	p := podOf(v1.RestartPolicyAlways) // UID "u"
	f.s.Restore([]checkpoint.Pod{
		{UID: p.UID, Namespace: p.Namespace, Name: p.Name, StartTime: then},
		{UID: "not-synced", Namespace: "default", Name: "later", StartTime: then},
	})
	if got := f.s.Pods(); len(got) != 2 {
		t.Fatalf("Pods before any sync = %v, want the two restored pods", got)
	}
	if _, err := f.s.SyncPod(context.Background(), podworkers.SyncPodSync, p, inSandbox(instance("1", container.StateRunning, 0, 10))); err != nil {
		t.Fatal(err)
	}
	if st := f.statuses.last(t); st.StartTime == nil || !st.StartTime.Equal(&then) {
		t.Errorf("startTime after the restart = %v, want the restored %v", st.StartTime, then)
	}
	pods := f.s.Pods()
	if len(pods) != 2 {
		t.Fatalf("Pods after the sync = %v, want the synced pod and the restored one not synced yet", pods)
	}
	for _, got := range pods {
		if !got.StartTime.Equal(&then) {
			t.Errorf("Pods: %s started at %v, want %v", got.UID, got.StartTime, then)
		}
	}
	clock.Step(restoredKept + time.Second)
	if pods := f.s.Pods(); len(pods) != 1 || pods[0].UID != p.UID || pods[0].Name != p.Name {
		t.Errorf("Pods after %v = %v, want only the synced pod %s", restoredKept, pods, p.UID)
	}

	// A pod whose status (the API server's) already has a start time keeps it.
	g := newFixture(kuberuntime.SyncResult{})
	api := metav1.NewTime(t0.Add(-time.Minute).Truncate(time.Second))
	q := podOf(v1.RestartPolicyAlways)
	q.Status.StartTime = &api
	g.s.Restore([]checkpoint.Pod{{UID: q.UID, StartTime: then}})
	if _, err := g.s.SyncPod(context.Background(), podworkers.SyncPodSync, q, inSandbox(instance("1", container.StateRunning, 0, 10))); err != nil {
		t.Fatal(err)
	}
	if st := g.statuses.last(t); st.StartTime == nil || !st.StartTime.Equal(&api) {
		t.Errorf("startTime = %v, want the API status's %v", st.StartTime, api)
	}
	// Without a checkpoint, a pod starts at its first sync.
	h := newFixture(kuberuntime.SyncResult{})
	if _, err := h.s.SyncPod(context.Background(), podworkers.SyncPodSync, podOf(v1.RestartPolicyAlways), nil); err != nil {
		t.Fatal(err)
	}
	if st := h.statuses.last(t); st.StartTime == nil || !st.StartTime.Time.Equal(t0) {
		t.Errorf("startTime without a checkpoint = %v, want the first sync's %v", st.StartTime, t0)
	}
}
