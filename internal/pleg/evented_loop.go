package pleg

import (
	"cmp"
	"context"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// run is the Evented PLEG's one loop: it relists first, then, until ctx ends, relists when due at
// each tick, inspects the pods events named, serves waiting pod workers, and follows the stream's
// openings and failures. Everything that touches the runtime happens here, one thing at a time.
func (e *Evented) run(ctx context.Context, ticker clock.Ticker) {
	defer ticker.Stop()
	logger := klog.FromContext(ctx)
	var s loopState
	s = e.relist(ctx, logger, s)
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
			if relistDue(s, e.clock.Now(), e.timing) {
				s = e.relist(ctx, logger, s)
			}
			e.serveWaiting(ctx)
		case c := <-e.changes:
			s = e.follow(ctx, logger, s, c)
		case <-e.wake:
			s = e.inspectPending(ctx, logger, s)
		case <-e.cache.Waits():
			e.serveWaiting(ctx)
		}
	}
}

// relist runs a full relist and records it, telling the operator when it made the stream up.
func (e *Evented) relist(ctx context.Context, logger klog.Logger, s loopState) loopState {
	start, ok := e.generic.relist(ctx)
	next := afterRelist(s, start, ok, e.timing)
	if next.stream == streamUp && s.stream != streamUp {
		e.up.Store(true)
		logger.Info("EventedPLEG: container event stream is up; relisting only as a safety net",
			"relistPeriod", e.timing.safetyPeriod)
	}
	return next
}

// follow applies a stream opening or failure. A stream that breaks after it was up may have lost
// events: relist at once, then every RelistPeriod until a new stream has caught up.
func (e *Evented) follow(ctx context.Context, logger klog.Logger, s loopState, c streamChange) loopState {
	if c.err == nil {
		logger.V(2).Info("EventedPLEG: container event stream opened; trusting it after the next relist")
		return connected(s, c.at)
	}
	wasUp := s.stream == streamUp
	s = broken(s)
	if wasUp {
		e.up.Store(false)
		e.upUntil.Store(&c.at)
	}
	switch {
	case unsupported(c.err):
		logger.Info("EventedPLEG: the container runtime does not serve CRI container events "+
			"(GetContainerEvents is unimplemented; containerd 1.7 and later serve them); relisting instead",
			"relistPeriod", e.timing.period, "retryIn", c.retryIn, "err", c.err)
	case wasUp:
		logger.Error(c.err, "EventedPLEG: container event stream broke; relisting until it reconnects. "+
			"If this repeats, check the container runtime's health and logs",
			"relistPeriod", e.timing.period, "retryIn", c.retryIn)
	default:
		logger.V(2).Info("EventedPLEG: container event stream unavailable; relisting until it reconnects",
			"relistPeriod", e.timing.period, "retryIn", c.retryIn, "err", c.err)
	}
	if wasUp {
		s = e.relist(ctx, logger, s)
	}
	return s
}

// inspectPending inspects, once each, the pods events named since the last call. An event that
// named no pod is matched to a pod by its container ID; if none has it, a full relist finds it.
func (e *Evented) inspectPending(ctx context.Context, logger klog.Logger, s loopState) loopState {
	p := e.takePending()
	relistAll := false
	for id := range p.orphans {
		if uid, ok := e.generic.podOf(id); ok {
			if _, named := p.pods[uid]; !named {
				p.pods[uid] = podName{}
			}
			continue
		}
		logger.V(4).Info("EventedPLEG: event for an unknown container without its pod; relisting", "containerID", id)
		relistAll = true
	}
	if relistAll {
		s = e.relist(ctx, logger, s)
	}
	for _, uid := range slices.SortedFunc(maps.Keys(p.pods), func(a, b types.UID) int { return cmp.Compare(a, b) }) {
		e.generic.relistPod(ctx, uid, p.pods[uid].name, p.pods[uid].namespace)
	}
	return s
}

// serveWaiting inspects the pods that pod workers wait on (Cache.GetNewerThan) and that the cache
// cannot answer yet: while the stream is up, the cache's global timestamp moves only every
// SafetyRelistPeriod, so without this a worker whose sync changed nothing (hence no event) would
// wait that long; while it is not up yet (the first RelistPeriod after start, or after a break),
// a worker would wait for the next relist, up to RelistPeriod (a pod written at start-up waited
// 0.4 s in the benchmark). The inspection's timestamp is taken after the worker's wait began, so
// it releases the worker with a status that includes everything its last sync did. A worker
// waiting past the current time is left for the next tick.
func (e *Evented) serveWaiting(ctx context.Context) {
	now := e.clock.Now()
	waiting := e.cache.Waiting()
	uids := make([]types.UID, 0, len(waiting))
	for uid, minTime := range waiting {
		if now.After(minTime) {
			uids = append(uids, uid)
		}
	}
	slices.SortFunc(uids, func(a, b types.UID) int { return cmp.Compare(a, b) })
	for _, uid := range uids {
		e.generic.relistPod(ctx, uid, "", "")
	}
}
