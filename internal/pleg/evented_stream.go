package pleg

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// errStreamClosed stands for a stream that ended without an error.
var errStreamClosed = errors.New("container event stream closed by the runtime")

// readStream opens the event stream, reports its openings and failures to the loop, and reopens
// it after reconnectDelay, until ctx ends. Events go to e.received, for noteEvents.
func (e *Evented) readStream(ctx context.Context) {
	var delay time.Duration
	for {
		var openedAt time.Time
		err := e.stream.GetContainerEvents(ctx, e.received, func(runtimeapi.RuntimeService_GetContainerEventsClient) {
			openedAt = e.clock.Now()
			if e.metrics != nil {
				e.metrics.StreamConnected()
			}
			e.report(ctx, streamChange{at: openedAt})
		})
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errStreamClosed
		}
		if e.metrics != nil {
			e.metrics.StreamFailed()
		}
		lived := time.Duration(-1)
		if !openedAt.IsZero() {
			lived = e.clock.Since(openedAt)
		}
		delay = reconnectDelay(err, delay, lived, e.timing)
		e.report(ctx, streamChange{at: e.clock.Now(), err: err, retryIn: delay})
		select {
		case <-ctx.Done():
			return
		case <-e.clock.After(delay):
		}
	}
}

// report hands a stream change to the loop.
func (e *Evented) report(ctx context.Context, c streamChange) {
	select {
	case e.changes <- c:
	case <-ctx.Done():
	}
}

// noteEvents notes every event received until ctx ends. It never waits for the runtime, so the
// stream is always drained.
func (e *Evented) noteEvents(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-e.received:
			e.note(ev)
		}
	}
}

// note records that the pod the event names is to be inspected, and wakes the loop. Nothing
// else of the event is used (but its creation time, for the latency metric): the event may be
// late, duplicated or out of order, and only a fresh inspection says what the pod is now.
func (e *Evented) note(ev *runtimeapi.ContainerEventResponse) {
	if ev == nil {
		return
	}
	if e.metrics != nil && ev.GetCreatedAt() > 0 {
		e.metrics.ObserveEventLatency(max(0, e.clock.Now().Sub(time.Unix(0, ev.GetCreatedAt()))))
	}
	uid, name, namespace := eventPod(ev)
	e.pendingMu.Lock()
	switch {
	case uid != "":
		if name == "" && namespace == "" {
			name, namespace = e.pending.pods[uid].name, e.pending.pods[uid].namespace
		}
		e.pending.pods[uid] = podName{name: name, namespace: namespace}
	case ev.GetContainerId() != "":
		e.pending.orphans[ev.GetContainerId()] = struct{}{}
	}
	e.pendingMu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// takePending returns and clears what events asked for.
func (e *Evented) takePending() pending {
	e.pendingMu.Lock()
	defer e.pendingMu.Unlock()
	p := e.pending
	e.pending = pending{pods: map[types.UID]podName{}, orphans: map[string]struct{}{}}
	return p
}
