package pleg

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
)

// Defaults of the Evented PLEG. The safety relist values are upstream's (pkg/kubelet/kubelet.go:
// eventedPlegRelistPeriod, eventedPlegRelistThreshold).
const (
	DefaultSafetyRelistPeriod    = 5 * time.Minute
	DefaultSafetyRelistThreshold = 10 * time.Minute
	DefaultInitialBackoff        = time.Second
	DefaultMaxBackoff            = 30 * time.Second
	DefaultUnsupportedRetry      = 5 * time.Minute
	// eventBuffer is the capacity of the channel the runtime client delivers events on
	// (upstream's eventedPLEGContainerEventsChannelCapacity).
	eventBuffer = 1000
)

// EventStream is the runtime's container event stream, with the signature of cri-api's
// RuntimeService.GetContainerEvents (*cri.Client implements it): it delivers events on ch until
// the stream breaks or ctx ends, and returns why; it calls connected once the stream is open.
type EventStream interface {
	GetContainerEvents(ctx context.Context, ch chan *runtimeapi.ContainerEventResponse,
		connected func(runtimeapi.RuntimeService_GetContainerEventsClient)) error
}

// EventedConfig configures an Evented PLEG. Config is the relisting underneath, as for New:
// Runtime and Cache are required; RelistPeriod and RelistThreshold are the fallback used while
// the stream is not up. Stream is required; zero values elsewhere take the defaults.
type EventedConfig struct {
	Config
	// Stream is the runtime's container event stream.
	Stream EventStream
	// SafetyRelistPeriod is the time between full relists while the stream is up;
	// DefaultSafetyRelistPeriod if zero.
	SafetyRelistPeriod time.Duration
	// SafetyRelistThreshold is how long after the start of the last successful relist Healthy
	// turns false while the stream is up; DefaultSafetyRelistThreshold if zero.
	SafetyRelistThreshold time.Duration
	// InitialBackoff and MaxBackoff bound the wait before reopening a stream that failed;
	// DefaultInitialBackoff and DefaultMaxBackoff if zero.
	InitialBackoff, MaxBackoff time.Duration
	// UnsupportedRetry is the wait before trying again a runtime that does not implement the
	// stream; DefaultUnsupportedRetry if zero.
	UnsupportedRetry time.Duration
	// StreamMetrics receives the stream's measurements; none are recorded if nil.
	StreamMetrics StreamMetrics
}

// Evented is the evented PLEG: container events from the runtime make it inspect the pod they
// name at once, and a slow relist (SafetyRelistPeriod) stays as a safety net. When the runtime
// does not serve the stream, or the stream breaks, it relists every RelistPeriod, as Generic,
// until a reopened stream has caught up. The package documentation says why the cache it feeds
// never gives a pod worker a status older than the worker's last sync, whatever the events do.
type Evented struct {
	generic *Generic
	cache   *Cache
	clock   clock.WithTicker
	stream  EventStream
	timing  timing
	metrics StreamMetrics

	startOnce sync.Once
	// received carries events from the runtime client to the goroutine that notes them.
	received chan *runtimeapi.ContainerEventResponse
	// changes carries the stream's openings and failures to the loop.
	changes chan streamChange
	// wake tells the loop that pending has work (capacity 1: signals coalesce).
	wake chan struct{}

	pendingMu sync.Mutex
	pending   pending

	// For Healthy, written by the loop: whether the stream is up, and when it last stopped being up.
	up      atomic.Bool
	upUntil atomic.Pointer[time.Time]
}

// pending is what events asked the loop to inspect, coalesced per pod.
type pending struct {
	pods map[types.UID]podName
	// orphans are the IDs of containers whose events named no pod.
	orphans map[string]struct{}
}

type podName struct{ name, namespace string }

// streamChange is a stream opening (err nil) or failure, from the stream goroutine to the loop.
type streamChange struct {
	at      time.Time
	err     error
	retryIn time.Duration
}

// NewEvented returns an Evented PLEG that does nothing until Start.
func NewEvented(cfg EventedConfig) (*Evented, error) {
	if cfg.Stream == nil {
		return nil, errors.New("pleg: Stream is required")
	}
	g, err := New(cfg.Config)
	if err != nil {
		return nil, err
	}
	t := timing{
		period:           g.period,
		threshold:        g.threshold,
		safetyPeriod:     cmp.Or(cfg.SafetyRelistPeriod, DefaultSafetyRelistPeriod),
		safetyThreshold:  cmp.Or(cfg.SafetyRelistThreshold, DefaultSafetyRelistThreshold),
		initialBackoff:   cmp.Or(cfg.InitialBackoff, DefaultInitialBackoff),
		maxBackoff:       cmp.Or(cfg.MaxBackoff, DefaultMaxBackoff),
		unsupportedRetry: cmp.Or(cfg.UnsupportedRetry, DefaultUnsupportedRetry),
	}
	switch {
	case t.safetyPeriod < 0 || t.safetyThreshold < 0 || t.initialBackoff < 0 || t.maxBackoff < 0 || t.unsupportedRetry < 0:
		return nil, fmt.Errorf("pleg: negative SafetyRelistPeriod (%v), SafetyRelistThreshold (%v), InitialBackoff (%v), MaxBackoff (%v) or UnsupportedRetry (%v)",
			t.safetyPeriod, t.safetyThreshold, t.initialBackoff, t.maxBackoff, t.unsupportedRetry)
	case t.safetyPeriod < t.period:
		return nil, fmt.Errorf("pleg: SafetyRelistPeriod (%v) is shorter than RelistPeriod (%v)", t.safetyPeriod, t.period)
	case t.maxBackoff < t.initialBackoff:
		return nil, fmt.Errorf("pleg: MaxBackoff (%v) is shorter than InitialBackoff (%v)", t.maxBackoff, t.initialBackoff)
	}
	return &Evented{
		generic:  g,
		cache:    cfg.Cache,
		clock:    g.clock,
		stream:   cfg.Stream,
		timing:   t,
		metrics:  cfg.StreamMetrics,
		received: make(chan *runtimeapi.ContainerEventResponse, eventBuffer),
		changes:  make(chan streamChange),
		wake:     make(chan struct{}, 1),
		pending:  pending{pods: map[types.UID]podName{}, orphans: map[string]struct{}{}},
	}, nil
}

// Start relists at once, opens the stream, and runs until ctx ends. Only the first call does
// anything. The loop's ticker is created before Start returns, so a fake clock stepped afterwards
// always reaches it.
func (e *Evented) Start(ctx context.Context) {
	e.startOnce.Do(func() {
		ticker := e.clock.NewTicker(e.timing.period)
		go e.run(ctx, ticker)
		go e.readStream(ctx)
		go e.noteEvents(ctx)
	})
}

// Watch returns the channel events are sent on. There is one channel: one consumer.
func (e *Evented) Watch() <-chan *Event {
	return e.generic.Watch()
}

// Healthy reports an error if no relist has succeeded yet; while the stream is up, if the last
// successful relist started more than SafetyRelistThreshold ago; otherwise if it, and the moment
// the stream stopped being up, are more than RelistThreshold ago.
func (e *Evented) Healthy() (bool, error) {
	var upUntil time.Time
	if u := e.upUntil.Load(); u != nil {
		upUntil = *u
	}
	if err := health(e.clock.Now(), e.generic.relistTime.Load(), e.up.Load(), upUntil, e.timing); err != nil {
		return false, err
	}
	return true, nil
}

// StreamUp reports whether the container event stream is up and trusted, so that the relist runs
// only every SafetyRelistPeriod.
func (e *Evented) StreamUp() bool {
	return e.up.Load()
}

// RequestReinspect makes the pod's next inspection (by an event, a waiting worker or a relist)
// send PodSync for it if nothing else, as Generic's.
func (e *Evented) RequestReinspect(uid types.UID) {
	e.generic.RequestReinspect(uid)
}

// DroppedEvents is the number of events discarded because the Watch channel was full.
func (e *Evented) DroppedEvents() uint64 {
	return e.generic.DroppedEvents()
}
