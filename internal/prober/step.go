package prober

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

// kind is a probe's type (upstream's probeType).
type kind int8

const (
	liveness kind = iota
	readiness
	startup
)

var kinds = [...]kind{liveness, readiness, startup}

// String is the word upstream puts in events: "Liveness probe failed: ...".
func (k kind) String() string {
	switch k {
	case liveness:
		return "Liveness"
	case readiness:
		return "Readiness"
	case startup:
		return "Startup"
	}
	return "UNKNOWN"
}

// initial is the result a worker stores when it first sees a container instance (upstream's
// worker.initialValue): not ready, alive, not started yet.
func (k kind) initial() result {
	switch k {
	case readiness:
		return failure
	case liveness:
		return success
	}
	return unknown
}

// result is a stored probe result, upstream's results.Result.
type result int8

const (
	unknown result = iota - 1
	success
	failure
)

func (r result) String() string {
	switch r {
	case success:
		return "Success"
	case failure:
		return "Failure"
	}
	return "UNKNOWN"
}

// probeResult is what a runner reports, upstream's probe.Result.
type probeResult string

const (
	probeSuccess probeResult = "success"
	// probeWarning is a success with something to say (a redirect to another host).
	probeWarning probeResult = "warning"
	probeFailure probeResult = "failure"
	probeUnknown probeResult = "unknown"
)

// outcome is one run of a probe: its result, its output, and the error that kept it from
// giving an answer at all (then the result is thrown away, as upstream).
type outcome struct {
	Result probeResult
	Output string
	Err    error
}

// Event reasons, upstream's events.ContainerUnhealthy and events.ContainerProbeWarning.
const (
	ReasonUnhealthy    = "Unhealthy"
	ReasonProbeWarning = "ProbeWarning"
)

// event is a container event to record.
type event struct {
	Type, Reason, Fmt string
	Args              []any
}

func (e event) Message() string { return fmt.Sprintf(e.Fmt, e.Args...) }

// kubeletRestartGrace: a container that was running this long before the manager started was
// there before nodelet (re)started; upstream's kubeletRestartGracePeriod.
const kubeletRestartGrace = 10 * time.Second

// state is one worker's memory. The first four fields are its settings; ContainerID,
// HasResult and Result are what it publishes (upstream's results cache entry for the
// container it probes); the rest is the threshold bookkeeping of upstream's worker.
type state struct {
	Kind                               kind
	InitialDelaySeconds                int32
	SuccessThreshold, FailureThreshold int32
	ContainerID                        string // as the status gives it, e.g. containerd://abc
	HasResult                          bool
	Result                             result
	LastResult                         result // the last probe's result (zero: success, as upstream)
	ResultRun                          int    // how many probes in a row gave LastResult
	OnHold                             bool   // liveness failed or startup decided: wait for a new instance
}

// newState returns the state of a new worker for probe p, with the API defaults for the
// settings the manifest left at zero.
func newState(k kind, p *v1.Probe) state {
	s := state{Kind: k, InitialDelaySeconds: p.InitialDelaySeconds, SuccessThreshold: p.SuccessThreshold,
		FailureThreshold: p.FailureThreshold}
	if s.SuccessThreshold <= 0 {
		s.SuccessThreshold = 1
	}
	if s.FailureThreshold <= 0 {
		s.FailureThreshold = 3
	}
	return s
}

// observation is what a worker saw on one tick: the pod's status as the status manager holds
// it, reduced to what the decision needs, and (on the second call of a tick) the probe's
// outcome.
type observation struct {
	Now          time.Time
	ManagerStart time.Time
	PodKnown     bool // the status manager has a status for the pod
	PodFinished  bool // its phase is Succeeded or Failed
	Deleting     bool // the pod has a deletion timestamp
	Sidecar      bool // the container is a restartable init container

	ContainerID string // of the container's newest instance; "" before it was created
	Running     bool
	StartedAt   time.Time // of the running instance
	Terminated  bool
	WillRestart bool // a terminated instance will be replaced
	Started     bool // the status says the container has started (its startup probe passed)

	Probe *outcome // nil until the worker ran the probe that step asked for
}

// verdict is what a step asks of its worker besides keeping the new state.
type verdict struct {
	// Changed: the published result changed; the pod's consumers should look again.
	Changed bool
	// Probe: this tick needs the probe's outcome. Run it and call step again, from the same
	// state, with the observation's Probe set.
	Probe bool
	// Stop: the worker exits (upstream's doProbe returned false).
	Stop  bool
	Event *event
}

// normaliseID drops the runtime scheme of a container ID: "containerd://abc" is "abc".
func normaliseID(id string) string {
	if i := strings.Index(id, "://"); i >= 0 {
		return id[i+3:]
	}
	return id
}

// step is one tick of a worker: upstream's worker.doProbe as a pure function.
func step(s state, o observation) (state, verdict) {
	var v verdict
	set := func(r result) {
		if !s.HasResult || s.Result != r {
			v.Changed = true
		}
		s.HasResult, s.Result = true, r
	}

	if !o.PodKnown {
		return s, v // the pod has not been created yet, or it was already deleted
	}
	if o.PodFinished {
		v.Stop = true
		return s, v
	}
	if o.ContainerID == "" {
		return s, v // the container has not been created yet: wait for more information
	}

	if normaliseID(o.ContainerID) != normaliseID(s.ContainerID) {
		// A new instance: forget the old one's result and counters.
		s.ContainerID, s.HasResult, s.LastResult, s.ResultRun, s.OnHold = o.ContainerID, false, success, 0, false
		// A container running since before the manager started keeps "no result" rather than
		// the initial one, so that a restart of nodelet does not flip it to not ready.
		restarted := o.Running && !o.StartedAt.IsZero() && o.StartedAt.Before(o.ManagerStart.Add(-kubeletRestartGrace))
		if o.Sidecar && s.Kind == startup && o.Started {
			set(success)
		}
		if !restarted {
			set(s.Kind.initial())
		}
	}

	if s.OnHold {
		return s, v
	}

	if !o.Running {
		set(failure)
		// A terminated container that will not run again needs no worker.
		v.Stop = o.Terminated && !o.WillRestart
		return s, v
	}

	if o.Deleting && s.Kind != readiness {
		// Graceful shutdown: a quiet last result, and no more probing.
		set(success)
		v.Stop = true
		return s, v
	}

	if int32(o.Now.Sub(o.StartedAt).Seconds()) < s.InitialDelaySeconds {
		return s, v
	}

	// Startup runs until the container has started; the others only after.
	if o.Started == (s.Kind == startup) {
		return s, v
	}

	if o.Probe == nil {
		v.Probe = true
		return s, v
	}

	out := *o.Probe
	if out.Err != nil {
		v.Event = &event{v1.EventTypeWarning, ReasonUnhealthy, "%s probe errored and resulted in %s state: %s",
			[]any{s.Kind, out.Result, out.Err}}
		return s, v // the result is thrown away
	}
	r := failure
	switch out.Result {
	case probeSuccess:
		r = success
	case probeWarning:
		r = success
		v.Event = &event{v1.EventTypeWarning, ReasonProbeWarning, "%s probe warning: %s", []any{s.Kind, out.Output}}
	case probeFailure:
		v.Event = &event{v1.EventTypeWarning, ReasonUnhealthy, "%s probe failed: %s", []any{s.Kind, out.Output}}
	}

	if s.LastResult == r {
		s.ResultRun++
	} else {
		s.LastResult, s.ResultRun = r, 1
	}
	if (r == failure && s.ResultRun < int(s.FailureThreshold)) || (r == success && s.ResultRun < int(s.SuccessThreshold)) {
		return s, v // below the threshold: the published result stands
	}
	set(r)
	if (s.Kind == liveness && r == failure) || s.Kind == startup {
		// The container will be restarted (or has started): probing it again gains nothing
		// and an exec into a container being stopped can hurt.
		s.OnHold, s.ResultRun = true, 0
	}
	return s, v
}
