package podsync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/podmanager"
	"github.com/nodelet/nodelet/internal/podworkers"
	"github.com/nodelet/nodelet/internal/prober"
	"github.com/nodelet/nodelet/internal/runtime"
	"github.com/nodelet/nodelet/internal/status"
	"github.com/nodelet/nodelet/internal/statusmanager"
)

type fakeRuntime struct {
	result     runtime.SyncResult
	lastProbes runtime.ProbeView
	synced     int
	killed     []int64
	after      *container.PodStatus
	killErr    error
}

var _ Runtime = (*fakeRuntime)(nil)

func (f *fakeRuntime) SyncPod(_ context.Context, _ *v1.Pod, _ *container.PodStatus, probes runtime.ProbeView) runtime.SyncResult {
	f.synced++
	f.lastProbes = probes
	return f.result
}
func (f *fakeRuntime) KillPod(_ context.Context, _ *v1.Pod, _ *container.PodStatus, g *int64) error {
	f.killed = append(f.killed, *g)
	return f.killErr
}
func (f *fakeRuntime) GetPodStatus(context.Context, types.UID, string, string) (*container.PodStatus, error) {
	return f.after, nil
}

// fakeProbes reports every container with a readiness probe as not ready, nothing else.
type fakeProbes struct{ asked map[string]string }

var _ Probes = (*fakeProbes)(nil)

func (f *fakeProbes) Results(_ *v1.Pod, ids map[string]string) prober.Results {
	f.asked = ids
	return prober.Results{Ready: map[string]bool{}, LivenessFailed: map[string]bool{"c": true}}
}

func pod() *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u"},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{Name: "c", Image: "busybox"}}}}
}

func running(state container.State, exit int) *container.PodStatus {
	return &container.PodStatus{ID: "u", ContainerStatuses: []*container.Status{{ID: "1", Name: "c", State: state, ExitCode: exit,
		StartedAt: time.Unix(10, 0), FinishedAt: time.Unix(20, 0)}}}
}

func TestSyncPod(t *testing.T) {
	pm := podmanager.New()
	p := pod()
	pm.AddOrUpdate(p)
	sm := statusmanager.New(pm)
	rt := &fakeRuntime{result: runtime.SyncResult{Waiting: map[string]status.WaitingReason{"c": {Reason: "ErrImagePull", Message: "no such image"}}, Err: errors.New("pull failed")}}
	probes := &fakeProbes{}
	s := New(Config{HostIPs: []string{"192.0.2.1"}}, rt, sm, probes, clocktesting.NewFakeClock(time.Unix(100, 0)))

	terminal, err := s.SyncPod(context.Background(), 0, p, &container.PodStatus{ID: "u"})
	if terminal || err == nil || rt.synced != 1 {
		t.Fatalf("first sync: terminal %v err %v synced %d", terminal, err, rt.synced)
	}
	st, _ := sm.GetPodStatus("u")
	if w := st.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ErrImagePull" || w.Message != "no such image" {
		t.Fatalf("the waiting reason of the sync is not in the status: %+v", st.ContainerStatuses[0].State)
	}
	if st.HostIP != "192.0.2.1" || st.Phase != v1.PodPending {
		t.Errorf("status: hostIP %q phase %s", st.HostIP, st.Phase)
	}
	if got := sm.Pods(); len(got) != 1 || got[0].Status.Phase != v1.PodPending {
		t.Errorf("status manager's pods: %+v", got)
	}

	if !rt.lastProbes.LivenessFailed["c"] {
		t.Error("the prober's liveness result did not reach the runtime")
	}
	rt.result = runtime.SyncResult{}
	terminal, err = s.SyncPod(context.Background(), 0, p, running(container.StateExited, 3))
	if probes.asked["c"] != "1" {
		t.Errorf("asked the prober about %v, want the current container 1", probes.asked)
	}
	if !terminal || err != nil || rt.synced != 1 {
		t.Fatalf("a finished pod: terminal %v err %v, and the runtime must not be synced (synced %d)", terminal, err, rt.synced)
	}
	st, _ = sm.GetPodStatus("u")
	if st.Phase != v1.PodFailed {
		t.Errorf("phase %s, want Failed", st.Phase)
	}
}

func TestSyncTerminatingPod(t *testing.T) {
	pm := podmanager.New()
	p := pod()
	p.Spec.RestartPolicy = v1.RestartPolicyAlways
	sm := statusmanager.New(pm)
	rt := &fakeRuntime{after: running(container.StateRunning, 0)}
	s := New(Config{}, rt, sm, &fakeProbes{}, clocktesting.NewFakeClock(time.Unix(100, 0)))
	if err := s.SyncTerminatingPod(context.Background(), p, running(container.StateRunning, 0), 7, podworkers.Failure{}); err == nil {
		t.Fatal("a container still running after the kill must be an error, so the worker retries")
	}
	if len(rt.killed) != 1 || rt.killed[0] != 7 {
		t.Fatalf("KillPod grace %v, want [7]", rt.killed)
	}
	rt.after = running(container.StateExited, 137)
	if err := s.SyncTerminatingPod(context.Background(), p, running(container.StateRunning, 0), 7, podworkers.Failure{}); err != nil {
		t.Fatal(err)
	}
	st, _ := sm.GetPodStatus("u")
	if term := st.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 137 {
		t.Errorf("final container state %+v", st.ContainerStatuses[0].State)
	}
	if err := s.SyncTerminatedPod(context.Background(), p, rt.after); err != nil {
		t.Fatal(err)
	}
	if st, _ := sm.GetPodStatus("u"); st.Phase != v1.PodFailed {
		t.Errorf("terminated pod (restartPolicy Always, killed) phase %s, want Failed", st.Phase)
	}
}

// A pod deleted before its container ever started (its image cannot be pulled) still ends in a
// terminal phase, so the API server is told it may forget the pod.
func TestSyncTerminatedPodNeverStarted(t *testing.T) {
	sm := statusmanager.New(podmanager.New())
	p := pod()
	p.Spec.RestartPolicy = v1.RestartPolicyAlways
	s := New(Config{}, &fakeRuntime{}, sm, &fakeProbes{}, clocktesting.NewFakeClock(time.Unix(100, 0)))
	if err := s.SyncTerminatedPod(context.Background(), p, &container.PodStatus{ID: "u"}); err != nil {
		t.Fatal(err)
	}
	st, _ := sm.GetPodStatus("u")
	if st.Phase != v1.PodFailed {
		t.Errorf("phase %s, want Failed", st.Phase)
	}
	if term := st.ContainerStatuses[0].State.Terminated; term == nil || term.Reason != status.ReasonContainerStatusUnknown || term.ExitCode != 137 {
		t.Errorf("container state %+v, want terminated ContainerStatusUnknown 137", st.ContainerStatuses[0].State)
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
// at once, as upstream); a failure is retried with the pod's final status already recorded.
func TestSyncTerminatedPodReleasesVolumes(t *testing.T) {
	sm := statusmanager.New(podmanager.New())
	vols := &fakeVolumes{err: errors.New("device busy")}
	s := New(Config{}, &fakeRuntime{}, sm, &fakeProbes{}, clocktesting.NewFakeClock(time.Unix(100, 0))).WithVolumes(vols)
	if err := s.SyncTerminatedPod(context.Background(), pod(), &container.PodStatus{ID: "u"}); err == nil || !strings.Contains(err.Error(), "device busy") {
		t.Fatalf("err = %v, want the teardown's", err)
	}
	if st, _ := sm.GetPodStatus("u"); st.Phase != v1.PodFailed {
		t.Errorf("final status not recorded before the teardown: %s", st.Phase)
	}
	vols.err = nil
	if err := s.SyncTerminatedPod(context.Background(), pod(), &container.PodStatus{ID: "u"}); err != nil {
		t.Fatal(err)
	}
	if len(vols.tornDown) != 2 || vols.tornDown[1] != "u" {
		t.Errorf("torn down %v", vols.tornDown)
	}
}

// A kill with a failure (an eviction) shows the pod Failed with the reason, message and
// DisruptionTarget condition while it stops.
func TestSyncTerminatingPodFailure(t *testing.T) {
	sm := statusmanager.New(podmanager.New())
	p := pod()
	rt := &fakeRuntime{after: running(container.StateExited, 137)}
	s := New(Config{}, rt, sm, &fakeProbes{}, clocktesting.NewFakeClock(time.Unix(100, 0)))
	if err := s.SyncTerminatingPod(context.Background(), p, running(container.StateRunning, 0), 1,
		podworkers.Failure{Reason: "Evicted", Message: "The node was low on resource: memory. ", DisruptionTarget: true}); err != nil {
		t.Fatal(err)
	}
	st, _ := sm.GetPodStatus("u")
	if st.Phase != v1.PodFailed || st.Reason != "Evicted" || st.Message != "The node was low on resource: memory. " {
		t.Errorf("status %s %q %q", st.Phase, st.Reason, st.Message)
	}
	var dt *v1.PodCondition
	for i := range st.Conditions {
		if st.Conditions[i].Type == v1.DisruptionTarget {
			dt = &st.Conditions[i]
		}
	}
	if dt == nil || dt.Status != v1.ConditionTrue || dt.Reason != v1.PodReasonTerminationByKubelet || dt.Message != st.Message {
		t.Errorf("DisruptionTarget %+v", dt)
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

func TestSyncPodKeepsTheMirrorPodOfStaticPods(t *testing.T) {
	withSource := func(source string, mods ...func(*v1.Pod)) *v1.Pod {
		p := pod()
		p.Spec.RestartPolicy = v1.RestartPolicyAlways
		p.Annotations = map[string]string{podconfig.ConfigSourceAnnotationKey: source}
		for _, m := range mods {
			m(p)
		}
		return p
	}
	deleting := func(p *v1.Pod) { now := metav1.NewTime(time.Unix(50, 0)); p.DeletionTimestamp = &now }
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		ps   *container.PodStatus
		want string
	}{
		{"static pod: before the runtime sync", withSource(podconfig.FileSource), &container.PodStatus{ID: "u"}, "[p@0]"},
		{"pod from the API server", withSource(podconfig.APISource), &container.PodStatus{ID: "u"}, "[]"},
		{"static pod being deleted", withSource(podconfig.HTTPSource, deleting), &container.PodStatus{ID: "u"}, "[]"},
		{"finished static pod", withSource(podconfig.FileSource, func(p *v1.Pod) { p.Spec.RestartPolicy = v1.RestartPolicyNever }),
			running(container.StateExited, 0), "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &fakeRuntime{}
			mirrors := &fakeMirrors{rt: rt, err: errors.New("forbidden")}
			s := New(Config{}, rt, statusmanager.New(podmanager.New()), &fakeProbes{}, clocktesting.NewFakeClock(time.Unix(100, 0))).WithMirrors(mirrors)
			_, err := s.SyncPod(context.Background(), 0, tc.pod, tc.ps)
			if err != nil {
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

// kubelet_pod_start_duration_seconds: observed once, when the pod turns Running, from the time
// its source first delivered it.
func TestPodStartDurationObservedOnceWhenRunning(t *testing.T) {
	pm := podmanager.New()
	p := pod()
	p.Spec.RestartPolicy = v1.RestartPolicyAlways
	p.Annotations = map[string]string{podconfig.ConfigFirstSeenAnnotationKey: time.Unix(97, 500_000_000).Format(time.RFC3339Nano)}
	pm.AddOrUpdate(p)
	sm := statusmanager.New(pm)
	m := &fakeStartMetrics{}
	s := New(Config{}, &fakeRuntime{}, sm, &fakeProbes{}, clocktesting.NewFakeClock(time.Unix(100, 0))).WithMetrics(m)

	if _, err := s.SyncPod(context.Background(), 0, p, &container.PodStatus{ID: "u"}); err != nil {
		t.Fatal(err)
	}
	if len(m.observed) != 0 {
		t.Fatalf("a pending pod was observed: %v", m.observed)
	}
	for range 2 {
		if _, err := s.SyncPod(context.Background(), 0, p, running(container.StateRunning, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if len(m.observed) != 1 || m.observed[0] != 2500*time.Millisecond {
		t.Errorf("observed %v, want one 2.5s", m.observed)
	}
}
