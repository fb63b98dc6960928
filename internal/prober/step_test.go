package prober

import (
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// held is a state that already holds result r for instance "containerd://a".
func held(k kind, r result, lastRun int, mut ...func(*state)) state {
	s := state{Kind: k, SuccessThreshold: 1, FailureThreshold: 3, ContainerID: "containerd://a",
		HasResult: true, Result: r, LastResult: r, ResultRun: lastRun}
	if k == readiness {
		s.SuccessThreshold = 2
	}
	for _, f := range mut {
		f(&s)
	}
	return s
}

// running is an observation of instance a, running since t0, started, now at t0+10s.
func running(mut ...func(*observation)) observation {
	o := observation{Now: t0.Add(10 * time.Second), ManagerStart: t0, PodKnown: true,
		ContainerID: "containerd://a", Running: true, StartedAt: t0, Started: true}
	for _, f := range mut {
		f(&o)
	}
	return o
}

func probed(r probeResult, out string) func(*observation) {
	return func(o *observation) { o.Probe = &outcome{Result: r, Output: out} }
}

func TestStep(t *testing.T) {
	fresh := func(k kind) state { return state{Kind: k, SuccessThreshold: 1, FailureThreshold: 3} }
	cases := []struct {
		name  string
		in    state
		obs   observation
		want  state
		v     verdict
		event string // the event's message, "" for none
	}{
		{name: "no status for the pod: wait", in: fresh(liveness),
			obs: running(func(o *observation) { o.PodKnown = false }), want: fresh(liveness)},
		{name: "pod finished: exit", in: held(liveness, success, 1),
			obs: running(func(o *observation) { o.PodFinished = true }), want: held(liveness, success, 1), v: verdict{Stop: true}},
		{name: "container not created: wait", in: fresh(readiness),
			obs: running(func(o *observation) { o.ContainerID = "" }), want: fresh(readiness)},
		{name: "first sight, readiness starts not ready", in: fresh(readiness), obs: running(),
			want: state{Kind: readiness, SuccessThreshold: 1, FailureThreshold: 3, ContainerID: "containerd://a", HasResult: true, Result: failure},
			v:    verdict{Changed: true, Probe: true}},
		{name: "first sight, liveness starts alive", in: fresh(liveness), obs: running(),
			want: held(liveness, success, 0), v: verdict{Changed: true, Probe: true}},
		{name: "first sight, startup starts unknown and probes until started", in: fresh(startup),
			obs:  running(func(o *observation) { o.Started = false }),
			want: state{Kind: startup, SuccessThreshold: 1, FailureThreshold: 3, ContainerID: "containerd://a", HasResult: true, Result: unknown},
			v:    verdict{Changed: true, Probe: true}},
		{name: "first sight of a container older than the manager: no initial result", in: fresh(readiness),
			obs:  running(func(o *observation) { o.StartedAt = t0.Add(-time.Hour) }),
			want: state{Kind: readiness, SuccessThreshold: 1, FailureThreshold: 3, ContainerID: "containerd://a"}, v: verdict{Probe: true}},
		{name: "sidecar started before the manager: startup seeded as succeeded", in: fresh(startup),
			obs:  running(func(o *observation) { o.StartedAt, o.Sidecar = t0.Add(-time.Hour), true }),
			want: state{Kind: startup, SuccessThreshold: 1, FailureThreshold: 3, ContainerID: "containerd://a", HasResult: true, Result: success},
			v:    verdict{Changed: true}},
		{name: "same instance named without its scheme is not new", in: held(liveness, success, 1),
			obs: running(func(o *observation) { o.ContainerID = "a" }), want: held(liveness, success, 1), v: verdict{Probe: true}},
		{name: "on hold: no probe", in: held(liveness, failure, 0, func(s *state) { s.OnHold = true }), obs: running(),
			want: held(liveness, failure, 0, func(s *state) { s.OnHold = true })},
		{name: "new instance: hold lifted, counters and result reset", in: held(liveness, failure, 2, func(s *state) { s.OnHold = true }),
			obs:  running(func(o *observation) { o.ContainerID = "containerd://b" }),
			want: held(liveness, success, 0, func(s *state) { s.ContainerID = "containerd://b" }), v: verdict{Changed: true, Probe: true}},
		{name: "waiting container: failure, keep going", in: held(readiness, success, 2),
			obs:  running(func(o *observation) { o.Running = false }),
			want: held(readiness, failure, 2, func(s *state) { s.LastResult = success }), v: verdict{Changed: true}},
		{name: "terminated, will restart: keep going", in: held(readiness, failure, 1),
			obs:  running(func(o *observation) { o.Running, o.Terminated, o.WillRestart = false, true, true }),
			want: held(readiness, failure, 1)},
		{name: "terminated for good: exit", in: held(liveness, success, 1),
			obs:  running(func(o *observation) { o.Running, o.Terminated = false, true }),
			want: held(liveness, failure, 1, func(s *state) { s.LastResult = success }), v: verdict{Changed: true, Stop: true}},
		{name: "deleting: liveness reports success and exits", in: held(liveness, failure, 0),
			obs:  running(func(o *observation) { o.Deleting = true }),
			want: held(liveness, success, 0, func(s *state) { s.LastResult = failure }), v: verdict{Changed: true, Stop: true}},
		{name: "deleting: readiness goes on", in: held(readiness, success, 2),
			obs: running(func(o *observation) { o.Deleting = true }), want: held(readiness, success, 2), v: verdict{Probe: true}},
		{name: "within the initial delay: no probe", in: held(liveness, success, 0, func(s *state) { s.InitialDelaySeconds = 11 }),
			obs: running(), want: held(liveness, success, 0, func(s *state) { s.InitialDelaySeconds = 11 })},
		{name: "initial delay over: probe", in: held(liveness, success, 0, func(s *state) { s.InitialDelaySeconds = 10 }),
			obs: running(), want: held(liveness, success, 0, func(s *state) { s.InitialDelaySeconds = 10 }), v: verdict{Probe: true}},
		{name: "not started: liveness waits", in: held(liveness, success, 0),
			obs: running(func(o *observation) { o.Started = false }), want: held(liveness, success, 0)},
		{name: "started: startup waits", in: held(startup, success, 0), obs: running(), want: held(startup, success, 0)},
		{name: "failure below threshold: counted, event, result stands", in: held(liveness, success, 0),
			obs:  running(probed(probeFailure, "boom")),
			want: held(liveness, success, 1, func(s *state) { s.LastResult = failure }), event: "Liveness probe failed: boom"},
		{name: "third failure in a row: liveness failed, on hold", in: held(liveness, success, 2, func(s *state) { s.LastResult = failure }),
			obs:  running(probed(probeFailure, "boom")),
			want: held(liveness, failure, 0, func(s *state) { s.OnHold = true }), v: verdict{Changed: true}, event: "Liveness probe failed: boom"},
		{name: "readiness failure at threshold: unchanged, no hold", in: held(readiness, failure, 2),
			obs: running(probed(probeFailure, "nope")), want: held(readiness, failure, 3), event: "Readiness probe failed: nope"},
		{name: "readiness first success of two: not yet", in: held(readiness, failure, 3),
			obs: running(probed(probeSuccess, "")), want: held(readiness, failure, 1, func(s *state) { s.LastResult = success })},
		{name: "readiness second success: ready", in: held(readiness, failure, 1, func(s *state) { s.LastResult = success }),
			obs: running(probed(probeSuccess, "")), want: held(readiness, success, 2), v: verdict{Changed: true}},
		{name: "warning is a success with an event", in: held(readiness, success, 2),
			obs: running(probed(probeWarning, "Probe terminated redirects")), want: held(readiness, success, 3),
			event: "Readiness probe warning: Probe terminated redirects"},
		{name: "unknown without error is a silent failure", in: held(liveness, success, 1),
			obs: running(probed(probeUnknown, "")), want: held(liveness, success, 1, func(s *state) { s.LastResult = failure })},
		{name: "error: event, result thrown away", in: held(liveness, success, 2, func(s *state) { s.LastResult = failure }),
			obs: running(func(o *observation) {
				o.Probe = &outcome{Result: probeUnknown, Err: errors.New(`couldn't find port "web"`)}
			}),
			want:  held(liveness, success, 2, func(s *state) { s.LastResult = failure }),
			event: `Liveness probe errored and resulted in unknown state: couldn't find port "web"`},
		{name: "startup success: started, on hold", in: held(startup, unknown, 0, func(s *state) { s.LastResult = success }),
			obs:  running(func(o *observation) { o.Started = false }, probed(probeSuccess, "")),
			want: held(startup, success, 0, func(s *state) { s.OnHold = true }), v: verdict{Changed: true}},
		{name: "startup failure at threshold: failed, on hold", in: held(startup, unknown, 2, func(s *state) { s.LastResult = failure }),
			obs:  running(func(o *observation) { o.Started = false }, probed(probeFailure, "no")),
			want: held(startup, failure, 0, func(s *state) { s.OnHold = true }), v: verdict{Changed: true}, event: "Startup probe failed: no"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, v := step(tc.in, tc.obs)
			if got != tc.want {
				t.Errorf("state\n got %+v\nwant %+v", got, tc.want)
			}
			ev := v.Event
			v.Event = nil
			if v != tc.v {
				t.Errorf("verdict %+v, want %+v", v, tc.v)
			}
			switch {
			case ev == nil && tc.event != "":
				t.Errorf("no event, want %q", tc.event)
			case ev != nil && ev.Message() != tc.event:
				t.Errorf("event %q, want %q", ev.Message(), tc.event)
			case ev != nil && (ev.Type != "Warning" || (ev.Reason != ReasonUnhealthy && ev.Reason != ReasonProbeWarning)):
				t.Errorf("event %s/%s", ev.Type, ev.Reason)
			}
		})
	}
}

func TestStepWarningReason(t *testing.T) {
	_, v := step(held(readiness, success, 2), running(probed(probeWarning, "x")))
	if v.Event == nil || v.Event.Reason != ReasonProbeWarning {
		t.Fatalf("event %+v, want reason %s", v.Event, ReasonProbeWarning)
	}
	_, v = step(held(readiness, success, 2), running(probed(probeFailure, "x")))
	if v.Event == nil || v.Event.Reason != ReasonUnhealthy {
		t.Fatalf("event %+v, want reason %s", v.Event, ReasonUnhealthy)
	}
}

func TestNewStateDefaults(t *testing.T) {
	s := newState(readiness, &v1.Probe{})
	if s.SuccessThreshold != 1 || s.FailureThreshold != 3 {
		t.Errorf("defaults %+v", s)
	}
}

func TestNormaliseID(t *testing.T) {
	for in, want := range map[string]string{"containerd://abc": "abc", "abc": "abc", "": "", "cri-o://x": "x"} {
		if got := normaliseID(in); got != want {
			t.Errorf("normaliseID(%q) = %q, want %q", in, got, want)
		}
	}
}
