package pleg

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
)

// The pure decisions of the Evented PLEG: when to relist, what the stream's state becomes, how
// long to wait before reconnecting, whether it is healthy, and which pod an event is about.

// streamState is what the Evented PLEG knows of the container event stream.
type streamState int

const (
	// streamDown: no stream; relist every RelistPeriod, reconnect after a back-off.
	streamDown streamState = iota
	// streamConnecting: a stream is open but not yet trusted (the runtime subscribes only once
	// the request reaches it); keep relisting every RelistPeriod. The first relist that succeeds
	// and starts at least one RelistPeriod after the stream opened catches up with whatever
	// happened while it was down, and makes it up.
	streamConnecting
	// streamUp: the stream is trusted; relist only every SafetyRelistPeriod.
	streamUp
)

func (s streamState) String() string {
	switch s {
	case streamConnecting:
		return "connecting"
	case streamUp:
		return "up"
	default:
		return "down"
	}
}

// timing is an Evented PLEG's configuration of time, defaults applied.
type timing struct {
	period, safetyPeriod       time.Duration // relist periods: fallback, while the stream is up
	threshold, safetyThreshold time.Duration // health thresholds: fallback, while the stream is up
	initialBackoff, maxBackoff time.Duration // reconnect back-off
	unsupportedRetry           time.Duration // reconnect delay after Unimplemented
}

// loopState is the Evented loop's view of the stream and of its last relist.
type loopState struct {
	stream      streamState
	connectedAt time.Time // when the current stream opened
	lastStart   time.Time // start of the last relist, zero before the first
	lastOK      bool      // whether its listing succeeded
}

// relistDue reports whether the loop relists at this tick (ticks come every t.period): always
// unless the stream is up and the last relist succeeded, then once t.safetyPeriod has passed.
func relistDue(s loopState, now time.Time, t timing) bool {
	if s.stream != streamUp || !s.lastOK || s.lastStart.IsZero() {
		return true
	}
	return now.Sub(s.lastStart) >= t.safetyPeriod
}

// afterRelist records a relist that started at start, and promotes a connecting stream to up if
// the relist succeeded and started at least t.period after the stream opened (see
// streamConnecting).
func afterRelist(s loopState, start time.Time, ok bool, t timing) loopState {
	s.lastStart, s.lastOK = start, ok
	if s.stream == streamConnecting && ok && !start.Before(s.connectedAt.Add(t.period)) {
		s.stream = streamUp
	}
	return s
}

// connected records a stream that opened at at.
func connected(s loopState, at time.Time) loopState {
	s.stream, s.connectedAt = streamConnecting, at
	return s
}

// broken records the end of the stream.
func broken(s loopState) loopState {
	s.stream, s.connectedAt = streamDown, time.Time{}
	return s
}

// reconnectDelay is the wait before opening the stream again after err ended it (or prevented
// it): t.unsupportedRetry if the runtime does not implement GetContainerEvents (containerd
// before 1.7); t.initialBackoff after a first failure or after a stream that lived at least
// t.maxBackoff (it was healthy: start the back-off over); otherwise the previous delay doubled, at
// most t.maxBackoff. lived is how long the stream was open, negative if it never opened.
func reconnectDelay(err error, prev, lived time.Duration, t timing) time.Duration {
	switch {
	case unsupported(err):
		return t.unsupportedRetry
	case prev <= 0 || lived >= t.maxBackoff:
		return t.initialBackoff
	default:
		return min(2*prev, t.maxBackoff)
	}
}

// unsupported reports whether err says the runtime does not implement the stream.
func unsupported(err error) bool {
	return grpcstatus.Code(err) == codes.Unimplemented
}

// health is the Evented PLEG's Healthy: no successful relist yet is unhealthy; while the stream is
// up, the last successful relist must be within t.safetyThreshold; otherwise within t.threshold
// of the later of the last successful relist and the moment the stream stopped being up (until
// then the stream kept the cache current).
func health(now time.Time, lastRelist *time.Time, up bool, upUntil time.Time, t timing) error {
	if lastRelist == nil {
		return errors.New("pleg has yet to be successful")
	}
	active, threshold := *lastRelist, t.threshold
	if up {
		threshold = t.safetyThreshold
	} else if upUntil.After(active) {
		active = upUntil
	}
	if elapsed := now.Sub(active); elapsed > threshold {
		return fmt.Errorf("pleg was last seen active %v ago; threshold is %v", elapsed, threshold)
	}
	return nil
}

// eventPod names the pod a container event is about: its UID and, when known, name and
// namespace, from the sandbox status's Kubernetes labels, else its metadata, else a container
// status's labels. The UID is empty when the event names no pod (the runtime sends a nil sandbox
// status when the sandbox is gone); the event's container ID then has to be looked up.
func eventPod(e *runtimeapi.ContainerEventResponse) (uid types.UID, name, namespace string) {
	if sb := e.GetPodSandboxStatus(); sb != nil {
		l, m := sb.GetLabels(), sb.GetMetadata()
		if uid := l[container.PodUIDLabel]; uid != "" {
			return types.UID(uid), l[container.PodNameLabel], l[container.PodNamespaceLabel]
		}
		if m.GetUid() != "" {
			return types.UID(m.GetUid()), m.GetName(), m.GetNamespace()
		}
	}
	for _, c := range e.GetContainersStatuses() {
		l := c.GetLabels()
		if uid := l[container.PodUIDLabel]; uid != "" {
			return types.UID(uid), l[container.PodNameLabel], l[container.PodNamespaceLabel]
		}
	}
	return "", "", ""
}
