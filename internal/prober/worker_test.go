package prober

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func wantCalls(t *testing.T, got []probeCall, want ...time.Duration) {
	t.Helper()
	if d := sinceT0(got); !slices.Equal(d, want) {
		t.Errorf("probes at %v, want %v", d, want)
	}
}

func TestLivenessFailureThresholdHoldAndNewInstance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0)
		pod := newPod(v1.Container{Name: "app", LivenessProbe: execProbeOf("live", 2, 1, 3, 0)})
		f.statuses.set(pod.UID, runningStatus("containerd://a", t0, true))
		f.exec.setCode("live", 1)
		cur := map[string]string{"app": "containerd://a"}

		f.m.AddPod(pod)
		synctest.Wait()
		wantCalls(t, f.exec.taken(), 0)
		if n := f.updates(); n != 1 {
			t.Errorf("first sight: %d updates, want 1 (the initial result)", n)
		}
		for i := 1; i <= 2; i++ {
			if r := f.results(pod, cur); r.LivenessFailed["app"] {
				t.Fatalf("liveness failed after %d failing probes, threshold 3", i)
			}
			f.advance(2 * time.Second)
		}
		wantCalls(t, f.exec.taken(), 2*time.Second, 4*time.Second)
		if r := f.results(pod, cur); !r.LivenessFailed["app"] {
			t.Fatalf("liveness not failed after the 3rd failing probe: %+v", r)
		}
		if n := f.updates(); n != 1 {
			t.Errorf("%d updates after the 2nd and 3rd probes, want 1", n)
		}
		ev := f.rec.take()
		if len(ev) != 3 || ev[2] != "Warning Unhealthy Liveness probe failed: live says 1" {
			t.Errorf("events %q", ev)
		}

		// On hold: the container is going to be restarted; no probe until a new instance.
		f.advance(2 * time.Second)
		f.advance(2 * time.Second)
		wantCalls(t, f.exec.taken())
		if n := f.updates(); n != 0 {
			t.Errorf("%d updates while on hold", n)
		}

		// The new instance is probed afresh: alive, counters reset.
		f.statuses.set(pod.UID, runningStatus("containerd://b", t0.Add(9*time.Second), true))
		f.exec.setCode("live", 0)
		f.advance(2 * time.Second)
		calls := f.exec.taken()
		wantCalls(t, calls, 10*time.Second)
		if len(calls) == 1 && calls[0].id != "b" {
			t.Errorf("exec in %q, want the bare ID b", calls[0].id)
		}
		if r := f.results(pod, map[string]string{"app": "b"}); r.LivenessFailed["app"] || len(r.LivenessFailed) != 1 {
			t.Errorf("new instance: %+v, want alive", r.LivenessFailed)
		}
		if r := f.results(pod, cur); len(r.LivenessFailed) != 0 {
			t.Errorf("results for the old instance: %+v, want none", r.LivenessFailed)
		}
		if n := f.updates(); n != 1 {
			t.Errorf("%d updates for the new instance, want 1", n)
		}
		// One failure is below the threshold again.
		f.exec.setCode("live", 1)
		f.advance(2 * time.Second)
		if r := f.results(pod, map[string]string{"app": "b"}); r.LivenessFailed["app"] {
			t.Errorf("new instance failed after 1 probe: counters were not reset")
		}
	})
}

func TestReadinessSuccessThreshold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0)
		pod := newPod(v1.Container{Name: "app", ReadinessProbe: execProbeOf("ready", 5, 2, 3, 0)})
		f.statuses.set(pod.UID, runningStatus("containerd://a", t0, true))
		cur := map[string]string{"app": "a"}

		f.m.AddPod(pod)
		synctest.Wait()
		if r := f.results(pod, cur); r.Ready["app"] || len(r.Ready) != 1 {
			t.Fatalf("after 1 success: %+v, want not ready", r.Ready)
		}
		if n := f.updates(); n != 1 {
			t.Errorf("%d updates, want 1 (initial not ready)", n)
		}
		f.advance(5 * time.Second)
		if r := f.results(pod, cur); !r.Ready["app"] {
			t.Fatalf("after 2 successes: not ready")
		}
		if n := f.updates(); n != 1 {
			t.Errorf("%d updates on becoming ready, want 1", n)
		}
		f.advance(5 * time.Second)
		if n := f.updates(); n != 0 {
			t.Errorf("%d updates while nothing changed", n)
		}
		wantCalls(t, f.exec.taken(), 0, 5*time.Second, 10*time.Second)

		// Readiness failures never hold the worker.
		f.exec.setCode("ready", 1)
		for range 4 {
			f.advance(5 * time.Second)
		}
		if r := f.results(pod, cur); r.Ready["app"] {
			t.Errorf("ready after 4 failures")
		}
		if got := len(f.exec.taken()); got != 4 {
			t.Errorf("%d probes, want 4", got)
		}
		if ev := f.rec.take(); len(ev) != 4 || ev[0] != "Warning Unhealthy Readiness probe failed: ready says 1" {
			t.Errorf("events %q", ev)
		}
	})
}

func TestInitialDelayAndJitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0.5)
		pod := newPod(v1.Container{Name: "app", LivenessProbe: execProbeOf("live", 10, 1, 3, 15)})
		f.statuses.set(pod.UID, runningStatus("containerd://a", t0, true))
		f.m.AddPod(pod)
		synctest.Wait()
		f.advance(4 * time.Second) // the first tick waits for half a period: 5s
		if n := f.updates(); n != 0 {
			t.Errorf("worker ticked before its jitter")
		}
		f.advance(time.Second) // t=5s: first tick, but within the initial delay
		if n := f.updates(); n != 1 {
			t.Errorf("first tick: %d updates, want 1", n)
		}
		f.advance(10 * time.Second) // t=15s: initial delay over
		f.advance(10 * time.Second)
		wantCalls(t, f.exec.taken(), 15*time.Second, 25*time.Second)
	})
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0.5)
		f.clock.Step(time.Minute) // the manager has run longer than a period: no jitter
		pod := newPod(v1.Container{Name: "app", LivenessProbe: execProbeOf("live", 10, 1, 3, 0)})
		f.statuses.set(pod.UID, runningStatus("containerd://a", t0.Add(time.Minute), true))
		f.m.AddPod(pod)
		synctest.Wait()
		wantCalls(t, f.exec.taken(), time.Minute)
	})
}

func TestStartupGatesLivenessAndReadiness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0)
		pod := newPod(v1.Container{Name: "app", StartupProbe: execProbeOf("start", 1, 1, 30, 0),
			LivenessProbe: execProbeOf("live", 1, 1, 3, 0), ReadinessProbe: execProbeOf("ready", 1, 1, 3, 0)})
		f.statuses.set(pod.UID, runningStatus("containerd://a", t0, false))
		f.exec.setCode("start", 1)
		cur := map[string]string{"app": "a"}

		f.m.AddPod(pod)
		synctest.Wait()
		f.advance(time.Second)
		for _, c := range f.exec.taken() {
			if c.cmd != "start" {
				t.Errorf("%s probe ran before the container started", c.cmd)
			}
		}
		r := f.results(pod, cur)
		if r.Ready["app"] || r.Started["app"] || r.StartupFailed["app"] || r.LivenessFailed["app"] {
			t.Errorf("while starting: %+v", r)
		}
		if _, ok := r.Ready["app"]; !ok {
			t.Errorf("readiness reports nothing while starting, want false")
		}

		f.exec.setCode("start", 0)
		f.advance(time.Second)
		if r := f.results(pod, cur); !r.Started["app"] || r.StartupFailed["app"] {
			t.Fatalf("after startup success: %+v", r)
		}
		f.exec.taken()
		f.advance(time.Second)
		if c := f.exec.taken(); len(c) != 0 {
			t.Errorf("probes %+v before the status says started", c)
		}

		// The status generator marks the container started: the other probes begin.
		f.statuses.set(pod.UID, runningStatus("containerd://a", t0, true))
		f.advance(time.Second)
		var cmds []string
		for _, c := range f.exec.taken() {
			cmds = append(cmds, c.cmd)
		}
		slices.Sort(cmds)
		if !slices.Equal(cmds, []string{"live", "ready"}) {
			t.Errorf("probes after start: %v, want live and ready", cmds)
		}
		if r := f.results(pod, cur); !r.Ready["app"] {
			t.Errorf("not ready after start")
		}
	})
}

func TestStartupFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0)
		pod := newPod(v1.Container{Name: "app", StartupProbe: execProbeOf("start", 1, 1, 2, 0)})
		f.statuses.set(pod.UID, runningStatus("containerd://a", t0, false))
		f.exec.setCode("start", 1)
		f.m.AddPod(pod)
		synctest.Wait()
		f.advance(time.Second)
		r := f.results(pod, map[string]string{"app": "a"})
		if !r.StartupFailed["app"] || r.Started["app"] {
			t.Errorf("after 2 failures, threshold 2: %+v", r)
		}
		f.advance(time.Second)
		if got := len(f.exec.taken()); got != 2 {
			t.Errorf("%d probes, want 2 then hold", got)
		}
	})
}

func TestNotRunningContainer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0)
		pod := newPod(v1.Container{Name: "app", ReadinessProbe: execProbeOf("ready", 1, 1, 3, 0)})
		cur := map[string]string{"app": "a"}
		f.statuses.set(pod.UID, runningStatus("containerd://a", t0, true))
		f.m.AddPod(pod)
		synctest.Wait()
		if !f.results(pod, cur).Ready["app"] {
			t.Fatal("not ready")
		}
		f.updates()

		// Exited, to be restarted: not ready, not probed, the worker stays.
		st := runningStatus("containerd://a", t0, true)
		st.ContainerStatuses[0].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 1}}
		f.statuses.set(pod.UID, st)
		f.exec.taken()
		f.advance(time.Second)
		f.advance(time.Second)
		if f.results(pod, cur).Ready["app"] || len(f.exec.taken()) != 0 || f.updates() != 1 || f.m.workerCount() != 1 {
			t.Errorf("exited container: still ready, probed, or worker gone")
		}

		// The pod never restarts it: the worker exits and its results go.
		pod.Spec.RestartPolicy = v1.RestartPolicyNever
		f.m.AddPod(pod)
		f.advance(time.Second)
		if n := f.m.workerCount(); n != 0 {
			t.Errorf("%d workers for a container that will not run again", n)
		}
		if r := f.results(pod, cur); len(r.Ready) != 0 {
			t.Errorf("results %+v after the worker exited", r.Ready)
		}
	})
}

func TestDeletionStopsLivenessOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0)
		pod := newPod(v1.Container{Name: "app", LivenessProbe: execProbeOf("live", 1, 1, 3, 0),
			ReadinessProbe: execProbeOf("ready", 1, 1, 3, 0)})
		f.statuses.set(pod.UID, runningStatus("containerd://a", t0, true))
		f.m.AddPod(pod)
		f.m.AddPod(pod) // idempotent
		synctest.Wait()
		if n := f.m.workerCount(); n != 2 {
			t.Fatalf("%d workers, want 2", n)
		}
		deleting := pod.DeepCopy()
		deleting.DeletionTimestamp = &metav1.Time{Time: t0}
		f.m.AddPod(deleting) // handed to the existing workers
		f.exec.taken()
		f.advance(time.Second)
		f.advance(time.Second)
		var cmds []string
		for _, c := range f.exec.taken() {
			cmds = append(cmds, c.cmd)
		}
		if !slices.Equal(cmds, []string{"ready", "ready"}) || f.m.workerCount() != 1 {
			t.Errorf("probes %v with %d workers, want readiness only", cmds, f.m.workerCount())
		}
	})
}

func TestSidecarsAreProbed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0)
		always := v1.ContainerRestartPolicyAlways
		pod := newPod(v1.Container{Name: "app"})
		pod.Spec.InitContainers = []v1.Container{
			{Name: "init", ReadinessProbe: execProbeOf("init", 1, 1, 3, 0)}, // not a sidecar: ignored
			{Name: "side", RestartPolicy: &always, StartupProbe: execProbeOf("side", 1, 1, 3, 0)},
		}
		st := runningStatus("containerd://a", t0, true)
		st.InitContainerStatuses = []v1.ContainerStatus{{Name: "side", ContainerID: "containerd://s", Started: new(bool),
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}}}
		f.statuses.set(pod.UID, st)
		f.m.AddPod(pod)
		synctest.Wait()
		if n := f.m.workerCount(); n != 1 {
			t.Errorf("%d workers, want 1 (the sidecar's startup probe)", n)
		}
		if r := f.results(pod, map[string]string{"side": "s"}); !r.Started["side"] {
			t.Errorf("sidecar results %+v", r)
		}
	})
}

func TestErroredProbeIsRetriedAndIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0)
		pod := newPod(v1.Container{Name: "app", LivenessProbe: execProbeOf("live", 1, 1, 1, 0)})
		f.statuses.set(pod.UID, runningStatus("containerd://a", t0, true))
		f.exec.setErr(errors.New("container not found"))
		f.m.AddPod(pod)
		synctest.Wait()
		if got := len(f.exec.taken()); got != maxProbeRetries {
			t.Errorf("%d attempts, want %d", got, maxProbeRetries)
		}
		if r := f.results(pod, map[string]string{"app": "a"}); r.LivenessFailed["app"] {
			t.Errorf("an errored probe counted as a failure")
		}
		if ev := f.rec.take(); len(ev) != 1 || ev[0] != "Warning Unhealthy Liveness probe errored and resulted in unknown state: container not found" {
			t.Errorf("events %q", ev)
		}
	})
}

func TestResultsTriggersReadiness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0)
		pod := newPod(v1.Container{Name: "app", ReadinessProbe: execProbeOf("ready", 10, 1, 3, 0)})
		f.statuses.set(pod.UID, runningStatus("containerd://a", t0, true))
		f.exec.setCode("ready", 1)
		f.m.AddPod(pod)
		synctest.Wait()
		f.advance(3 * time.Second)
		f.m.Results(pod, map[string]string{"app": "containerd://a"}) // not ready: probe now
		synctest.Wait()
		f.advance(10 * time.Second) // the period restarts from the manual run
		wantCalls(t, f.exec.taken(), 0, 3*time.Second, 13*time.Second)

		f.exec.setCode("ready", 0)
		f.m.Results(pod, map[string]string{"app": "a"})
		synctest.Wait()
		f.m.Results(pod, map[string]string{"app": "a"}) // ready: nothing to do
		synctest.Wait()
		wantCalls(t, f.exec.taken(), 13*time.Second)
	})
}

func TestRemovePodAndStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0)
		pod := newPod(v1.Container{Name: "app", LivenessProbe: execProbeOf("live", 1, 1, 3, 0)})
		f.statuses.set(pod.UID, runningStatus("containerd://a", t0, true))
		f.m.AddPod(pod)
		synctest.Wait()
		f.m.RemovePod(pod)
		if r := f.results(pod, map[string]string{"app": "a"}); len(r.LivenessFailed) != 0 {
			t.Errorf("results after RemovePod: %+v", r)
		}
		f.exec.taken()
		f.advance(time.Second)
		if c := f.exec.taken(); len(c) != 0 {
			t.Errorf("probes after RemovePod: %+v", c)
		}

		// A probe in flight is cancelled by Stop.
		f.exec.setBlock()
		f.m.AddPod(pod)
		synctest.Wait()
		if c := f.exec.taken(); len(c) != 1 {
			t.Fatalf("%d probes in flight, want 1", len(c))
		}
		f.m.Stop()
		f.m.AddPod(pod) // ignored once stopped
		if n := f.m.workerCount(); n != 0 {
			t.Errorf("%d workers after Stop", n)
		}
	})
}

func TestUpdatesCoalesce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newNotifier()
		done := make(chan struct{})
		go n.run(done)
		for range 3 {
			n.add("a")
			n.add("b")
		}
		synctest.Wait()
		var got []string
		for len(got) < 2 {
			got = append(got, string(<-n.out))
			synctest.Wait()
		}
		select {
		case u := <-n.out:
			t.Errorf("extra update %s", u)
		default:
		}
		if !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("updates %v", got)
		}
		close(done)
	})
}

// prober_probe_total and prober_probe_duration_seconds: each probe is recorded with upstream's
// probe_type and result labels, and a stopped worker's series are dropped.
func TestProbeMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, 0)
		pod := newPod(v1.Container{Name: "app", ReadinessProbe: execProbeOf("ready", 1, 1, 3, 0)})
		f.statuses.set(pod.UID, runningStatus("containerd://a", t0, true))
		f.m.AddPod(pod)
		synctest.Wait()
		f.advance(time.Second)
		f.exec.setCode("ready", 1)
		f.advance(time.Second)
		f.m.RemovePod(pod)
		synctest.Wait()
		// Probes at 0 s and 1 s succeed, the one at 2 s fails.
		want := []string{"Readiness/web/app/successful", "Readiness/web/app/successful", "Readiness/web/app/failed", "forget Readiness/web/app"}
		if got := f.metrics.take(); !slices.Equal(got, want) {
			t.Errorf("metrics %q, want %q", got, want)
		}
	})
}
