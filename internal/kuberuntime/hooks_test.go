package kuberuntime

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/kuberuntime/runtimetest"
	"github.com/nodelet/nodelet/internal/lifecycle"
)

// The lifecycle runner is the manager's hook runner; the fake ExecSync is what it execs with.
var (
	_ HookRunner       = (*lifecycle.Runner)(nil)
	_ lifecycle.Execer = (*runtimetest.FakeExec)(nil)
)

// withHooks makes the harness run hooks with the real runner over the fake ExecSync.
func withHooks(h *harness) *runtimetest.FakeExec {
	exec := runtimetest.NewFakeExec(h.rt)
	h.m.deps.Hooks = lifecycle.New(h.clock, exec)
	return exec
}

func postStart(name string, h v1.LifecycleHandler) podOpt {
	return withContainer(name, func(c *v1.Container) {
		if c.Lifecycle == nil {
			c.Lifecycle = &v1.Lifecycle{}
		}
		c.Lifecycle.PostStart = &h
	})
}

func preStop(name string, h v1.LifecycleHandler) podOpt {
	return withContainer(name, func(c *v1.Container) {
		if c.Lifecycle == nil {
			c.Lifecycle = &v1.Lifecycle{}
		}
		c.Lifecycle.PreStop = &h
	})
}

func execHook(cmd ...string) v1.LifecycleHandler {
	return v1.LifecycleHandler{Exec: &v1.ExecAction{Command: cmd}}
}

func sleepHook(seconds int64) v1.LifecycleHandler {
	return v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: seconds}}
}

// exitWith answers every command with the output and the exit code.
func exitWith(stdout, stderr string, code int32) func(context.Context, runtimetest.ExecCall) ([]byte, []byte, int32, error) {
	return func(context.Context, runtimetest.ExecCall) ([]byte, []byte, int32, error) {
		return []byte(stdout), []byte(stderr), code, nil
	}
}

// taking makes every command take d on the fake clock.
func (h *harness) taking(d time.Duration) func(context.Context, runtimetest.ExecCall) ([]byte, []byte, int32, error) {
	return func(context.Context, runtimetest.ExecCall) ([]byte, []byte, int32, error) {
		h.clock.Step(d)
		return nil, nil, 0, nil
	}
}

// reasons lists the reasons of the recorded events but the image's (Pulled...), in order.
func (r *fakeRecorder) reasons() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.reason != "Pulled" && e.reason != "Pulling" {
			out = append(out, e.reason)
		}
	}
	return out
}

// hookServer is an HTTP server on 127.0.0.1 that records the paths it is asked for.
type hookServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newHookServer(t *testing.T) *hookServer {
	s := &hookServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *hookServer) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.paths)
}

func (s *hookServer) port() int32 {
	_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
	n, _ := strconv.Atoi(p)
	return int32(n)
}

func TestPostStartHook(t *testing.T) {
	h := newHarness(t)
	exec := withHooks(h)
	pod := newPod(postStart("app", execHook("touch", "/ready")))
	h.mustSync(pod)
	id := containerID(pod, "app", 0)
	if calls := exec.Calls(); len(calls) != 1 || calls[0].ID != id || !slices.Equal(calls[0].Cmd, []string{"touch", "/ready"}) {
		t.Fatalf("ExecSync calls %+v, want touch /ready in %s", calls, id)
	}
	calls := h.rt.GetCalls()
	if slices.Index(calls, "StartContainer") > slices.Index(calls, "ExecSync") {
		t.Errorf("the hook ran before the container started: %v", calls)
	}
	if got, want := h.rec.reasons(), []string{"Created", "Started"}; !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	if got := h.started(pod); !slices.Equal(got, []string{"app"}) {
		t.Errorf("running %v, want app", got)
	}
}

func TestPostStartHookUsesThePodIP(t *testing.T) {
	h := newHarness(t)
	withHooks(h)
	h.rt.SetPodIPs("127.0.0.1")
	srv := newHookServer(t)
	pod := newPod(postStart("app", v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/started", Port: intstr.FromInt32(srv.port())}}))
	h.mustSync(pod)
	if got := srv.got(); !slices.Equal(got, []string{"/started"}) {
		t.Errorf("the hook server was asked for %v, want /started", got)
	}
}

// Upstream: a failed postStart hook kills the container (reason and message
// FailedPostStartHook) and the start fails with PostStartHookError and the hook's message;
// the container then restarts per the restart policy, with the crash back-off.
func TestPostStartHookFailure(t *testing.T) {
	h := newHarness(t)
	exec := withHooks(h)
	exec.OnExec = exitWith("out", "boom", 1)
	pod := newPod(postStart("app", execHook("sh", "-c", "exit 1")))
	res := h.sync(pod)
	ce := containerError(t, res)
	wantMsg := `Exec lifecycle hook ([sh -c exit 1]) for Container "app" in Pod "web_default(uid-1)" failed - error: command 'sh -c exit 1' exited with 1: boom, message: "outboom"`
	if ce.Reason != ReasonPostStartHookError || ce.Message != wantMsg {
		t.Errorf("error %s: %q, want %s: %q", ce.Reason, ce.Message, ReasonPostStartHookError, wantMsg)
	}
	if w := res.Waiting["app"]; w.Reason != ReasonPostStartHookError || w.Message != wantMsg {
		t.Errorf("waiting %+v", w)
	}
	if got, want := h.rec.reasons(), []string{"Created", "Started", "FailedPostStartHook", "Killing"}; !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	if got := h.rec.messages("FailedPostStartHook"); !slices.Equal(got, []string{"PostStartHook failed"}) {
		t.Errorf("FailedPostStartHook %q: upstream leaves the hook's output out of the event", got)
	}
	if got := h.rec.messages("Killing"); !slices.Equal(got, []string{"FailedPostStartHook"}) {
		t.Errorf("Killing %q, want FailedPostStartHook", got)
	}
	id := containerID(pod, "app", 0)
	if stops := h.rt.Stops(); len(stops) != 1 || stops[0].ID != id || stops[0].Timeout != 30 {
		t.Errorf("stops %+v, want %s with the pod's 30 s", stops, id)
	}
	if st := h.state(id); st != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Errorf("container %s is %s after its postStart hook failed", id, st)
	}

	// restartPolicy Always: restarted at once, then CrashLoopBackOff.
	if ce := containerError(t, h.sync(pod)); ce.Reason != ReasonPostStartHookError {
		t.Errorf("second start: %v", ce)
	}
	if n := len(exec.Calls()); n != 2 || h.restartAnnotation(containerID(pod, "app", 1)) != "1" {
		t.Errorf("%d hook runs, want the restarted container's too", n)
	}
	if ce := containerError(t, h.sync(pod)); ce.Reason != ReasonCrashLoopBackOff {
		t.Errorf("third sync: %v, want CrashLoopBackOff", ce)
	}

	t.Run("restartPolicy Never", func(t *testing.T) {
		h := newHarness(t)
		withHooks(h).OnExec = exitWith("", "", 2)
		pod := newPod(postStart("app", execHook("false")), restartPolicy(v1.RestartPolicyNever))
		h.sync(pod)
		h.sync(pod)
		if n := h.rt.CallCount("CreateContainer"); n != 1 {
			t.Errorf("%d containers created, want 1: the pod does not restart it", n)
		}
	})
}

func TestHooksWithoutARunner(t *testing.T) {
	h := newHarness(t) // Deps.Hooks unset
	pod := newPod(postStart("app", execHook("false")), preStop("app", sleepHook(10)))
	h.mustSync(pod)
	if err := h.m.KillPod(h.ctx, pod, h.status(pod), nil); err != nil {
		t.Fatal(err)
	}
	if stops := h.rt.Stops(); stops[0].Timeout != 30 {
		t.Errorf("stopped with %d s, want the whole 30 s", stops[0].Timeout)
	}
}

// Upstream: the hook runs first, bounded by the grace period; the whole seconds it took come out
// of the grace period StopContainer gets, which stays at least 2 s.
func TestPreStopExecGracePeriod(t *testing.T) {
	for _, tc := range []struct {
		name     string
		took     time.Duration
		deletion *int64
		override *int64
		want     int64
		ran      bool
	}{
		{name: "5 s of 30", took: 5 * time.Second, want: 25, ran: true},
		{name: "whole seconds: 5.9 s of 30", took: 5900 * time.Millisecond, want: 25, ran: true},
		{name: "29 s of 30: the 2 s minimum", took: 29 * time.Second, want: 2, ran: true},
		{name: "longer than the grace period", took: 45 * time.Second, want: 2, ran: true},
		{name: "deletion grace period", took: 3 * time.Second, deletion: i64(10), want: 7, ran: true},
		{name: "override", took: 3 * time.Second, override: i64(12), want: 9, ran: true},
		{name: "no grace period: no hook", override: i64(0), want: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			exec := withHooks(h)
			exec.OnExec = h.taking(tc.took)
			pod := newPod(preStop("app", execHook("nginx", "-s", "quit")))
			h.mustSync(pod)
			pod.DeletionGracePeriodSeconds = tc.deletion
			h.rt.ResetCalls()
			if err := h.m.KillPod(h.ctx, pod, h.status(pod), tc.override); err != nil {
				t.Fatal(err)
			}
			calls := h.rt.GetCalls()
			if ran := slices.Contains(calls, "ExecSync"); ran != tc.ran {
				t.Fatalf("hook ran: %v, want %v (calls %v)", ran, tc.ran, calls)
			}
			if tc.ran && slices.Index(calls, "ExecSync") > slices.Index(calls, "StopContainer") {
				t.Errorf("the hook ran after StopContainer: %v", calls)
			}
			if stops := h.rt.Stops(); stops[0].ID != containerID(pod, "app", 0) || stops[0].Timeout != tc.want {
				t.Errorf("stops %+v, want the container with %d s", stops, tc.want)
			}
			if h.rec.has("FailedPreStopHook") {
				t.Errorf("FailedPreStopHook for a hook that succeeded")
			}
		})
	}
}

// The exec is bounded by the grace period on the runtime's side too (its CRI timeout).
func TestPreStopExecTimeoutIsTheGracePeriod(t *testing.T) {
	h := newHarness(t)
	exec := withHooks(h)
	pod := newPod(preStop("app", execHook("drain")))
	h.mustSync(pod)
	pod.DeletionGracePeriodSeconds = i64(45)
	if err := h.m.KillPod(h.ctx, pod, h.status(pod), nil); err != nil {
		t.Fatal(err)
	}
	if calls := exec.Calls(); len(calls) != 1 || calls[0].Timeout != 45*time.Second {
		t.Errorf("ExecSync calls %+v, want one with a 45 s timeout", calls)
	}
}

// killAsync runs KillPod in a goroutine; the channel gets its error.
func (h *harness) killAsync(pod *v1.Pod, override *int64) <-chan error {
	ps := h.status(pod)
	done := make(chan error, 1)
	go func() { done <- h.m.KillPod(h.ctx, pod, ps, override) }()
	return done
}

// The preStop sleep tests run in a synctest bubble: synctest.Wait returns once KillPod waits on
// the fake clock's timers (or is done).
func TestPreStopSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		withHooks(h)
		pod := newPod(preStop("app", sleepHook(5)))
		h.mustSync(pod)
		h.rt.ResetCalls()
		done := h.killAsync(pod, nil)
		synctest.Wait()
		if n := h.clock.Waiters(); n != 2 {
			t.Fatalf("%d timers on the clock, want the grace period's and the sleep's", n)
		}
		h.clock.Step(4 * time.Second)
		synctest.Wait()
		if n := h.rt.CallCount("StopContainer"); n != 0 {
			t.Fatalf("StopContainer called %d times while the preStop sleep runs", n)
		}
		h.clock.Step(time.Second)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if stops := h.rt.Stops(); stops[0].Timeout != 25 {
			t.Errorf("stopped with %d s after a 5 s sleep of 30, want 25", stops[0].Timeout)
		}
		if h.clock.HasWaiters() {
			t.Errorf("%d timers left on the clock", h.clock.Waiters())
		}
	})
}

// A sleep longer than the grace period is cut at the grace period (a failed hook), and the
// container still gets the 2 s minimum.
func TestPreStopSleepBoundedByTheGracePeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		withHooks(h)
		pod := newPod(preStop("app", sleepHook(60)))
		h.mustSync(pod)
		pod.DeletionGracePeriodSeconds = i64(10)
		done := h.killAsync(pod, nil)
		synctest.Wait()
		if n := h.clock.Waiters(); n != 2 {
			t.Fatalf("%d timers on the clock, want the grace period's and the sleep's", n)
		}
		h.clock.Step(10 * time.Second)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if stops := h.rt.Stops(); stops[0].Timeout != 2 {
			t.Errorf("stopped with %d s, want the 2 s minimum", stops[0].Timeout)
		}
		synctest.Wait() // the hook's goroutine has recorded its failure
		if !h.rec.has("FailedPreStopHook") {
			t.Errorf("no FailedPreStopHook event: %v", h.rec.reasons())
		}
	})
}

func TestPreStopFailureStillStops(t *testing.T) {
	h := newHarness(t)
	exec := withHooks(h)
	exec.OnExec = exitWith("", "no such file", 127)
	pod := newPod(preStop("app", execHook("/drain")))
	h.mustSync(pod)
	if err := h.m.KillPod(h.ctx, pod, h.status(pod), nil); err != nil {
		t.Fatal(err)
	}
	if got := h.rec.messages("FailedPreStopHook"); !slices.Equal(got, []string{"PreStopHook failed"}) {
		t.Errorf("FailedPreStopHook events %q, want one without the hook's output, as upstream", got)
	}
	if stops := h.rt.Stops(); stops[0].ID != containerID(pod, "app", 0) || stops[0].Timeout != 30 {
		t.Errorf("stops %+v", stops)
	}
	if got := h.started(pod); len(got) != 0 {
		t.Errorf("still running: %v", got)
	}
}

// An orphan (a pod no source knows, e.g. deleted while nodelet was down) runs the preStop hook
// its container was created with, from the container's annotation, as upstream.
func TestPreStopOrphanFromAnnotation(t *testing.T) {
	h := newHarness(t)
	exec := withHooks(h)
	exec.OnExec = h.taking(time.Second)
	pod := newPod(preStop("app", execHook("nginx", "-s", "quit")))
	h.mustSync(pod)
	h.rec.events = nil
	if err := h.m.KillPod(h.ctx, nil, h.status(pod), nil); err != nil {
		t.Fatal(err)
	}
	id := containerID(pod, "app", 0)
	if calls := exec.Calls(); len(calls) != 1 || calls[0].ID != id || !slices.Equal(calls[0].Cmd, []string{"nginx", "-s", "quit"}) {
		t.Fatalf("ExecSync calls %+v, want the annotated hook in %s", calls, id)
	}
	if stops := h.rt.Stops(); stops[0].ID != id || stops[0].Timeout != 2 {
		t.Errorf("stops %+v, want %s with the orphan's 2 s", stops, id)
	}
	if got := h.rec.reasons(); len(got) != 0 {
		t.Errorf("events %v for a pod nobody knows", got)
	}

	t.Run("failed: logged, no event", func(t *testing.T) {
		h := newHarness(t)
		withHooks(h).OnExec = exitWith("", "", 1)
		h.mustSync(pod)
		h.rec.events = nil
		if err := h.m.KillPod(h.ctx, nil, h.status(pod), nil); err != nil {
			t.Fatal(err)
		}
		if got := h.rec.reasons(); len(got) != 0 || h.rt.CallCount("StopContainer") != 1 {
			t.Errorf("events %v, stops %d", got, h.rt.CallCount("StopContainer"))
		}
	})
}

// An orphan's httpGet hook gets its named port from the ports annotation and its host from the
// pod's IP, as upstream restores them.
func TestPreStopOrphanHTTPGet(t *testing.T) {
	h := newHarness(t)
	withHooks(h)
	h.rt.SetPodIPs("127.0.0.1")
	srv := newHookServer(t)
	pod := newPod(preStop("app", v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/drain", Port: intstr.FromString("admin")}}),
		withContainer("app", func(c *v1.Container) {
			c.Ports = []v1.ContainerPort{{Name: "admin", ContainerPort: srv.port(), Protocol: v1.ProtocolTCP}}
		}))
	h.mustSync(pod)
	if err := h.m.KillPod(h.ctx, nil, h.status(pod), nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.got(); !slices.Equal(got, []string{"/drain"}) {
		t.Errorf("the hook server was asked for %v, want /drain", got)
	}
}

// Upstream runs every container's preStop hook when the pod's termination begins, sidecars'
// included; only a sidecar's stop waits for the main containers. In a synctest bubble, the
// main container's hook gives up after 5 s of the bubble's time should the sidecar's not run
// meanwhile: time passes only when everything else is blocked.
func TestPreStopOfSidecarsRunsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		exec := withHooks(h)
		pod := newPod(sidecars("proxy"), preStop("proxy", execHook("drain")), preStop("app", execHook("quit")))
		h.mustSync(pod)
		h.mustSync(pod)
		proxyID, appID := containerID(pod, "proxy", 0), containerID(pod, "app", 0)
		proxyHook := make(chan struct{})
		exec.OnExec = func(_ context.Context, call runtimetest.ExecCall) ([]byte, []byte, int32, error) {
			if call.ID == proxyID {
				close(proxyHook)
				return nil, nil, 0, nil
			}
			select { // the main container's hook waits for the sidecar's
			case <-proxyHook:
				return nil, nil, 0, nil
			case <-time.After(5 * time.Second): // the bubble's fake time
				return nil, []byte("the sidecar's hook did not run"), 1, nil
			}
		}
		h.rt.ResetCalls()
		if err := h.m.KillPod(h.ctx, pod, h.status(pod), nil); err != nil {
			t.Fatal(err)
		}
		if h.rec.has("FailedPreStopHook") {
			t.Errorf("the main container's hook ran without the sidecar's running at the same time")
		}
		if got, want := stopIDs(h.rt.Stops()), []string{appID, proxyID, sandboxID(pod, 0)}; !slices.Equal(got, want) {
			t.Errorf("stops %v, want %v", got, want)
		}
	})
}

// Upstream kills (and so runs the preStop hook of) running containers only; nodelet also stops
// a container left created by a failed start, without its hook.
func TestPreStopOnlyInRunningContainers(t *testing.T) {
	h := newHarness(t)
	exec := withHooks(h)
	pod := newPod(preStop("app", execHook("quit")))
	h.rt.InjectError("StartContainer", errors.New("exec format error"))
	h.sync(pod)
	if err := h.m.KillPod(h.ctx, pod, h.status(pod), nil); err != nil {
		t.Fatal(err)
	}
	if calls := exec.Calls(); len(calls) != 0 || h.rec.has("FailedPreStopHook") {
		t.Errorf("hook run in a created container: %+v", calls)
	}
	if stops := h.rt.Stops(); len(stops) != 2 || stops[0].ID != containerID(pod, "app", 0) {
		t.Errorf("stops %+v, want the created container, then the sandbox", stops)
	}
}
