package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/kuberuntime/plan"
	"github.com/nodelet/nodelet/internal/kuberuntime/runtimetest"
)

func TestGracePeriod(t *testing.T) {
	probe := func(liveness, startup *int64) *v1.Container {
		c := ctr("app", testImage)
		c.LivenessProbe = &v1.Probe{TerminationGracePeriodSeconds: liveness}
		c.StartupProbe = &v1.Probe{TerminationGracePeriodSeconds: startup}
		return &c
	}
	podWith := func(termination, deletion *int64) *v1.Pod {
		p := newPod()
		p.Spec.TerminationGracePeriodSeconds = termination
		p.DeletionGracePeriodSeconds = deletion
		return p
	}
	for _, tc := range []struct {
		name     string
		pod      *v1.Pod
		c        *v1.Container
		reason   string
		override *int64
		want     int64
	}{
		{"pod's terminationGracePeriodSeconds", podWith(i64(45), nil), nil, "", nil, 45},
		{"unset: 30 s", podWith(nil, nil), nil, "", nil, 30},
		{"deletionGracePeriodSeconds wins", podWith(i64(45), i64(10)), nil, "", nil, 10},
		{"at least 2 s", podWith(i64(0), nil), nil, "", nil, 2},
		{"1 s becomes 2 s", podWith(i64(1), nil), nil, "", nil, 2},
		{"liveness kill: the probe's period", podWith(i64(45), nil), probe(i64(5), i64(7)), plan.ReasonLivenessProbe, nil, 5},
		{"startup kill: the probe's period", podWith(i64(45), nil), probe(i64(5), i64(7)), plan.ReasonStartupProbe, nil, 7},
		{"liveness kill, probe without a period", podWith(i64(45), nil), probe(nil, i64(7)), plan.ReasonLivenessProbe, nil, 45},
		{"liveness kill, container without probes", podWith(i64(45), nil), &v1.Container{Name: "app"}, plan.ReasonLivenessProbe, nil, 45},
		{"probe period at least 2 s", podWith(i64(45), nil), probe(i64(1), nil), plan.ReasonLivenessProbe, nil, 2},
		{"other reason: the pod's period", podWith(i64(45), nil), probe(i64(5), i64(7)), plan.ReasonDefinitionChanged, nil, 45},
		{"override wins", podWith(i64(45), i64(10)), probe(i64(5), nil), plan.ReasonLivenessProbe, i64(20), 20},
		{"override at least 2 s", podWith(i64(45), nil), nil, "", i64(0), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := GracePeriod(tc.pod, tc.c, tc.reason, tc.override); got != tc.want {
				t.Errorf("GracePeriod = %d, want %d", got, tc.want)
			}
		})
	}
}

// runningPodWithSidecars starts a pod with sidecars s1, s2 and main containers m1, m2.
func runningPodWithSidecars(h *harness) *v1.Pod {
	h.t.Helper()
	pod := newPod(sidecars("s1", "s2"), mains("m1", "m2"))
	for range 3 { // s1, then s2, then the mains
		h.mustSync(pod)
	}
	if got := h.started(pod); !slices.Equal(got, []string{"m1", "m2", "s1", "s2"}) {
		h.t.Fatalf("running %v", got)
	}
	return pod
}

func stopIDs(stops []runtimetest.StopCall) []string {
	var out []string
	for _, s := range stops {
		out = append(out, s.ID)
	}
	return out
}

func TestKillPodOrder(t *testing.T) {
	h := newHarness(t)
	pod := runningPodWithSidecars(h)
	pod.Spec.TerminationGracePeriodSeconds = i64(20)
	ps := h.status(pod)
	h.rt.ResetCalls()
	if err := h.m.KillPod(h.ctx, pod, ps, nil); err != nil {
		t.Fatal(err)
	}
	stops := h.rt.Stops()
	ids := stopIDs(stops)
	if len(ids) != 5 {
		t.Fatalf("stops %v, want 4 containers and the sandbox", ids)
	}
	mainsFirst := ids[:2]
	slices.Sort(mainsFirst)
	want := []string{containerID(pod, "m1", 0), containerID(pod, "m2", 0)}
	if !slices.Equal(mainsFirst, want) {
		t.Errorf("first stopped %v, want the main containers %v", ids[:2], want)
	}
	if want := []string{containerID(pod, "s2", 0), containerID(pod, "s1", 0), sandboxID(pod, 0)}; !slices.Equal(ids[2:], want) {
		t.Errorf("then %v, want the sidecars in reverse order, then the sandbox: %v", ids[2:], want)
	}
	for _, s := range stops[:4] {
		if s.Timeout != 20 {
			t.Errorf("%s stopped with %d s, want the pod's 20 s", s.ID, s.Timeout)
		}
	}
	if !stops[4].Sandbox {
		t.Errorf("the last stop is not the sandbox")
	}
	if n := len(h.rec.messages("Killing")); n != 4 {
		t.Errorf("%d Killing events, want 4", n)
	}
	for _, cs := range h.status(pod).ContainerStatuses {
		if cs.State != container.StateExited {
			t.Errorf("%s is %s after KillPod", cs.Name, cs.State)
		}
	}
}

func TestKillPodGracePeriods(t *testing.T) {
	for _, tc := range []struct {
		name                string
		termination, delete *int64
		override            *int64
		want                int64
	}{
		{"the pod's period", i64(30), nil, nil, 30},
		{"minimum 2 s", i64(1), nil, nil, 2},
		{"deletion period", i64(30), i64(5), nil, 5},
		{"override", i64(30), nil, i64(12), 12},
		{"override of 1 s: 2 s", i64(30), nil, i64(1), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			pod := newPod(mains("app", "log"))
			h.mustSync(pod)
			pod.Spec.TerminationGracePeriodSeconds, pod.DeletionGracePeriodSeconds = tc.termination, tc.delete
			h.rt.ResetCalls()
			if err := h.m.KillPod(h.ctx, pod, h.status(pod), tc.override); err != nil {
				t.Fatal(err)
			}
			stops := h.rt.Stops()
			if len(stops) != 3 {
				t.Fatalf("stops %+v", stops)
			}
			for _, s := range stops[:2] {
				if s.Timeout != tc.want {
					t.Errorf("%s stopped with %d s, want %d", s.ID, s.Timeout, tc.want)
				}
			}
		})
	}
}

func TestKillPodSkipsExitedContainers(t *testing.T) {
	h := newHarness(t)
	pod := newPod(mains("app", "job"), restartPolicy(v1.RestartPolicyOnFailure))
	h.mustSync(pod)
	h.exit(containerID(pod, "job", 0), 0)
	h.rt.ResetCalls()
	if err := h.m.KillPod(h.ctx, pod, h.status(pod), nil); err != nil {
		t.Fatal(err)
	}
	if got, want := stopIDs(h.rt.Stops()), []string{containerID(pod, "app", 0), sandboxID(pod, 0)}; !slices.Equal(got, want) {
		t.Errorf("stops %v, want %v", got, want)
	}
}

func TestKillPodOrphan(t *testing.T) {
	for _, tc := range []struct {
		name     string
		override *int64
		want     int64
	}{
		{"minimum", nil, 2},
		{"longer override", i64(15), 15},
		{"shorter override", i64(1), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			pod := newPod(sidecars("proxy"))
			h.mustSync(pod)
			h.mustSync(pod)
			h.rt.ResetCalls()
			if err := h.m.KillPod(h.ctx, nil, h.status(pod), tc.override); err != nil {
				t.Fatal(err)
			}
			stops := h.rt.Stops()
			if len(stops) != 3 {
				t.Fatalf("stops %+v", stops)
			}
			for _, s := range stops[:2] {
				if s.Timeout != tc.want {
					t.Errorf("%s stopped with %d s, want %d", s.ID, s.Timeout, tc.want)
				}
			}
			if h.rec.has("Killing") {
				t.Errorf("Killing events for a pod nobody knows: %v", h.rec.messages("Killing"))
			}
		})
	}
}

func TestKillPodErrors(t *testing.T) {
	h := newHarness(t)
	pod := newPod(mains("app", "log"))
	h.mustSync(pod)
	ps := h.status(pod)
	h.rt.InjectError("StopContainer", status.Error(codes.NotFound, "gone"))
	h.rt.InjectError("StopContainer", errors.New("runtime timeout"))
	err := h.m.KillPod(h.ctx, pod, ps, nil)
	if err == nil {
		t.Fatal("KillPod hid a failed stop")
	}
	if n := h.rt.CallCount("StopPodSandbox"); n != 1 {
		t.Errorf("the sandbox was stopped %d times, want 1 despite the failed container", n)
	}

	h = newHarness(t)
	h.mustSync(pod)
	h.rt.InjectError("StopPodSandbox", status.Error(codes.NotFound, "gone"))
	if err := h.m.KillPod(h.ctx, pod, h.status(pod), nil); err != nil {
		t.Errorf("a sandbox already gone is stopped: %v", err)
	}
	h.rt.InjectError("StopPodSandbox", errors.New("CNI teardown failed"))
	if err := h.rt.SetSandboxState(sandboxID(pod, 0), runtimeapi.PodSandboxState_SANDBOX_READY); err != nil {
		t.Fatal(err)
	}
	if err := h.m.KillPod(h.ctx, pod, h.status(pod), nil); err == nil {
		t.Errorf("KillPod hid a failed sandbox stop")
	}
}

func TestRemovePod(t *testing.T) {
	h := newHarness(t)
	pod := newPod(mains("app", "log"))
	h.mustSync(pod)
	ps := h.status(pod)
	if err := h.m.KillPod(h.ctx, pod, ps, nil); err != nil {
		t.Fatal(err)
	}
	h.rt.ResetCalls()
	h.rt.InjectError("RemoveContainer", status.Error(codes.NotFound, "gone"))
	if err := h.m.RemovePod(h.ctx, h.status(pod)); err != nil {
		t.Fatal(err)
	}
	if ids := h.rt.ContainerIDs(); len(ids) != 0 {
		t.Errorf("containers left: %v", ids)
	}
	if ids := h.rt.SandboxIDs(); len(ids) != 0 {
		t.Errorf("sandboxes left: %v", ids)
	}
	if !slices.Equal(h.vol.tornDown, []types.UID{pod.UID}) {
		t.Errorf("volumes torn down for %v", h.vol.tornDown)
	}

	t.Run("failed removals are reported, the rest is removed", func(t *testing.T) {
		h := newHarness(t)
		h.mustSync(pod)
		h.rt.InjectError("RemoveContainer", errors.New("device busy"))
		h.rt.InjectError("RemovePodSandbox", status.Error(codes.NotFound, "gone"))
		if err := h.m.RemovePod(h.ctx, h.status(pod)); err == nil {
			t.Error("RemovePod hid the failure")
		}
		if n := h.rt.CallCount("RemoveContainer"); n != 2 {
			t.Errorf("%d containers removed, want both tried", n)
		}
	})
	t.Run("a sandbox that cannot be stopped is not removed", func(t *testing.T) {
		h := newHarness(t)
		h.mustSync(pod)
		h.rt.InjectError("StopPodSandbox", errors.New("CNI teardown failed"))
		if err := h.m.RemovePod(h.ctx, h.status(pod)); err == nil {
			t.Error("RemovePod hid the failure")
		}
		if n := h.rt.CallCount("RemovePodSandbox"); n != 0 {
			t.Errorf("RemovePodSandbox called %d times after a failed stop", n)
		}
		if len(h.vol.tornDown) != 1 {
			t.Errorf("volumes not torn down: %v", h.vol.tornDown)
		}
	})
}

func TestRemovePodByUID(t *testing.T) {
	h := newHarness(t)
	pod := newPod(mains("app", "log"))
	h.mustSync(pod)
	other := newPod()
	other.Name, other.UID = "other", "uid-2"
	h.mustSync(other)
	if err := h.m.RemovePodByUID(h.ctx, pod.UID); err != nil {
		t.Fatal(err)
	}
	for _, s := range h.rt.Stops()[:2] {
		if s.Timeout != 2 {
			t.Errorf("an orphan's container %s stopped with %d s, want 2", s.ID, s.Timeout)
		}
	}
	if got := h.rt.SandboxIDs(); !slices.Equal(got, []string{sandboxID(other, 0)}) {
		t.Errorf("sandboxes left %v, want only the other pod's", got)
	}
	if got := h.rt.ContainerIDs(); len(got) != 1 {
		t.Errorf("containers left %v, want only the other pod's", got)
	}
	h.rt.InjectError("ListPodSandbox", errors.New("runtime down"))
	if err := h.m.RemovePodByUID(h.ctx, pod.UID); err == nil {
		t.Errorf("RemovePodByUID hid a listing failure")
	}
}

// Regression: upstream's killPodWithSyncResult stops every sandbox of the pod, ready or not
// (ConvertPodStatusToRunningPod keeps them all); nodelet skips not-ready ones. A sandbox whose
// pause process died is not ready but still holds its network namespace and its CNI IP until
// StopPodSandbox tears the network down, so the IP leaks until the pod is removed.
func TestKillPodStopsNotReadySandboxes(t *testing.T) {
	h := newHarness(t)
	pod := newPod()
	h.mustSync(pod)
	if err := h.rt.SetSandboxState(sandboxID(pod, 0), runtimeapi.PodSandboxState_SANDBOX_NOTREADY); err != nil {
		t.Fatal(err)
	}
	h.rt.ResetCalls()
	h.mustSync(pod) // the sandbox changed: kill the pod, then create a new sandbox
	if got := stopIDs(h.rt.Stops()); !slices.Contains(got, sandboxID(pod, 0)) {
		t.Errorf("stops %v: the dead sandbox %s was not stopped", got, sandboxID(pod, 0))
	}
}

// Regression: upstream gives a pod's termination one grace period: sidecars wait for the main
// containers, and what the wait used is taken from their own grace period (terminationOrdering,
// waitForTurn), at least 2 s. nodelet stops each sidecar with the full period after the mains,
// so a pod whose containers ignore SIGTERM takes (1 + sidecars) × the grace period to stop.
func TestKillPodSidecarsShareTheGracePeriod(t *testing.T) {
	h := newHarness(t)
	pod := newPod(sidecars("proxy"))
	h.mustSync(pod)
	h.mustSync(pod)
	h.rt.OnStop = func(_ string, timeout int64) { h.clock.Step(time.Duration(timeout) * time.Second) } // ignores SIGTERM
	start := h.clock.Now()
	if err := h.m.KillPod(h.ctx, pod, h.status(pod), nil); err != nil {
		t.Fatal(err)
	}
	stops := h.rt.Stops()
	if len(stops) != 3 || stops[1].ID != containerID(pod, "proxy", 0) {
		t.Fatalf("stops %+v", stops)
	}
	if stops[1].Timeout != 2 {
		t.Errorf("the sidecar got %d s after the main container used the whole 30 s, want the 2 s minimum", stops[1].Timeout)
	}
	if took := h.clock.Since(start); took > 32*time.Second {
		t.Errorf("the pod took %v to stop, more than its 30 s grace period + 2 s", took)
	}
}

// fakeLogCleaner records the containers whose rotated logs were removed.
type fakeLogCleaner struct{ cleaned []string }

var _ LogCleaner = (*fakeLogCleaner)(nil)

func (f *fakeLogCleaner) Clean(_ context.Context, id string) error {
	f.cleaned = append(f.cleaned, id)
	return errors.New("disk error") // logged; the container is removed anyway
}

// A container's rotated logs are removed with it, as upstream's removeContainerLog.
func TestRemovePodCleansRotatedLogs(t *testing.T) {
	h := newHarness(t)
	logs := &fakeLogCleaner{}
	h.m.deps.Logs = logs
	pod := newPod(mains("app", "log"))
	h.mustSync(pod)
	ps := h.status(pod)
	if err := h.m.KillPod(h.ctx, pod, ps, nil); err != nil {
		t.Fatal(err)
	}
	ps = h.status(pod)
	if err := h.m.RemovePod(h.ctx, ps); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, cs := range ps.ContainerStatuses {
		want = append(want, cs.ID)
	}
	if len(want) != 2 || !slices.Equal(logs.cleaned, want) {
		t.Errorf("cleaned %v, want %v", logs.cleaned, want)
	}
	if ids := h.rt.ContainerIDs(); len(ids) != 0 {
		t.Errorf("containers left: %v", ids)
	}
}

// A pod its worker stopped is removed without stopping anything again: each StopPodSandbox runs
// the network plugin's DEL once more (containerd), and RemovePodSandbox stops what is left. The
// removal of 30 pods made 3 StopPodSandbox calls per pod in the benchmark.
func TestRemoveStoppedPodStopsNothingAgain(t *testing.T) {
	// stoppedPod is a pod its worker ran and killed, with the runtime's call log reset.
	stoppedPod := func(t *testing.T) (*harness, *v1.Pod) {
		h := newHarness(t)
		pod := newPod(mains("app"))
		h.mustSync(pod)
		if err := h.m.KillPod(h.ctx, pod, h.status(pod), nil); err != nil {
			t.Fatal(err)
		}
		h.rt.ResetCalls()
		return h, pod
	}
	for _, byUID := range []bool{false, true} {
		t.Run(fmt.Sprintf("byUID=%v", byUID), func(t *testing.T) {
			h, pod := stoppedPod(t)
			var err error
			if byUID {
				err = h.m.RemovePodByUID(h.ctx, pod.UID)
			} else {
				err = h.m.RemovePod(h.ctx, h.status(pod))
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, call := range []string{"StopContainer", "StopPodSandbox"} {
				if n := h.rt.CallCount(call); n != 0 {
					t.Errorf("%s called %d times on a stopped pod", call, n)
				}
			}
			if n := h.rt.CallCount("RemovePodSandbox"); n != 1 {
				t.Errorf("RemovePodSandbox called %d times, want 1", n)
			}
			if ids := h.rt.SandboxIDs(); len(ids) != 0 {
				t.Errorf("sandboxes left: %v", ids)
			}
		})
	}
	// containerd 1.x refuses to remove a sandbox whose network namespace is still open (its
	// pause process died without a stop): it is stopped, and removed again.
	t.Run("a refused removal is stopped and removed again", func(t *testing.T) {
		h, pod := stoppedPod(t)
		h.rt.InjectError("RemovePodSandbox", errors.New(`sandbox network namespace "/var/run/netns/cni-1" is not fully closed`))
		if err := h.m.RemovePod(h.ctx, h.status(pod)); err != nil {
			t.Fatal(err)
		}
		got := slices.DeleteFunc(h.rt.GetCalls(), func(c string) bool { return !strings.HasSuffix(c, "PodSandbox") || strings.HasPrefix(c, "List") })
		if want := []string{"RemovePodSandbox", "StopPodSandbox", "RemovePodSandbox"}; !slices.Equal(got, want) {
			t.Errorf("sandbox calls %v, want %v", got, want)
		}
		if ids := h.rt.SandboxIDs(); len(ids) != 0 {
			t.Errorf("sandboxes left: %v", ids)
		}
	})
}
