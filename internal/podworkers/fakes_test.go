package podworkers

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/container"
)

var (
	_ Syncer   = (*fakeSyncer)(nil)
	_ Cache    = (*fakeCache)(nil)
	_ Requeuer = (*fakeRequeuer)(nil)
)

const (
	kindSync        = "sync"
	kindTerminating = "terminating"
	kindTerminated  = "terminated"
)

// call is one Syncer call: its kind, the pod's UID and generation, the update type (SyncPod)
// and the grace period (SyncTerminatingPod).
type call struct {
	kind       string
	uid        types.UID
	gen        int64
	updateType UpdateType
	grace      int64
}

func syncCall(uid string, t UpdateType, gen int64) call {
	return call{kind: kindSync, uid: types.UID(uid), gen: gen, updateType: t}
}

func terminatingCall(uid string, gen, grace int64) call {
	return call{kind: kindTerminating, uid: types.UID(uid), gen: gen, grace: grace}
}

func terminatedCall(uid string, gen int64) call {
	return call{kind: kindTerminated, uid: types.UID(uid), gen: gen}
}

// fakeSyncer records calls. Calls of a held kind block until a value is sent on release (or
// their context is cancelled, unless ignoreCancel).
type fakeSyncer struct {
	release chan struct{}

	mu           sync.Mutex
	calls        []call
	cancelled    int
	hold         map[string]bool
	ignoreCancel bool
	errs         map[string][]error // returned in order, per kind
	terminal     bool               // SyncPod reports the pod terminal
	clock        *clocktesting.FakeClock
	step         time.Duration // the clock moves on by step during each call
}

func newFakeSyncer() *fakeSyncer {
	return &fakeSyncer{release: make(chan struct{}), hold: map[string]bool{}, errs: map[string][]error{}}
}

func (f *fakeSyncer) setHold(kind string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hold[kind] = on
}

func (f *fakeSyncer) failNext(kind string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs[kind] = append(f.errs[kind], err)
}

func (f *fakeSyncer) do(ctx context.Context, c call) error {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	held, ignore := f.hold[c.kind], f.ignoreCancel
	if f.clock != nil {
		f.clock.Step(f.step)
	}
	var err error
	if errs := f.errs[c.kind]; len(errs) > 0 {
		err, f.errs[c.kind] = errs[0], errs[1:]
	}
	f.mu.Unlock()
	if !held {
		return err
	}
	done := ctx.Done()
	if ignore {
		done = nil
	}
	select {
	case <-f.release:
		return err
	case <-done:
		f.mu.Lock()
		f.cancelled++
		f.mu.Unlock()
		return ctx.Err()
	}
}

func (f *fakeSyncer) SyncPod(ctx context.Context, t UpdateType, pod *v1.Pod, _ *container.PodStatus) (bool, error) {
	err := f.do(ctx, call{kind: kindSync, uid: pod.UID, gen: pod.Generation, updateType: t})
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.terminal && err == nil, err
}

func (f *fakeSyncer) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, _ *container.PodStatus, grace int64, _ Failure) error {
	return f.do(ctx, call{kind: kindTerminating, uid: pod.UID, gen: pod.Generation, grace: grace})
}

func (f *fakeSyncer) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, _ *container.PodStatus) error {
	return f.do(ctx, call{kind: kindTerminated, uid: pod.UID, gen: pod.Generation})
}

func (f *fakeSyncer) wantCalls(t *testing.T, want ...call) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !reflect.DeepEqual(f.calls, want) && !(len(f.calls) == 0 && len(want) == 0) {
		t.Fatalf("syncer calls:\n got  %+v\n want %+v", f.calls, want)
	}
}

func (f *fakeSyncer) cancelledCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cancelled
}

// fakeCache answers at once with a view just newer than asked, and records what was asked.
type fakeCache struct {
	mu       sync.Mutex
	minTimes []time.Time
	errs     []error
}

func (c *fakeCache) GetNewerThan(ctx context.Context, uid types.UID, minTime time.Time) (*container.PodStatus, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.minTimes = append(c.minTimes, minTime)
	if len(c.errs) > 0 {
		err := c.errs[0]
		c.errs = c.errs[1:]
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &container.PodStatus{ID: uid, TimeStamp: minTime.Add(time.Nanosecond)}, nil
}

func (c *fakeCache) asked() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.minTimes...)
}

type requeue struct {
	uid   types.UID
	after time.Duration
}

type fakeRequeuer struct {
	mu       sync.Mutex
	requeues []requeue
}

func (r *fakeRequeuer) Enqueue(uid types.UID, after time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requeues = append(r.requeues, requeue{uid, after})
}

func (r *fakeRequeuer) wantRequeues(t *testing.T, want ...requeue) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !reflect.DeepEqual(r.requeues, want) && !(len(r.requeues) == 0 && len(want) == 0) {
		t.Fatalf("requeues:\n got  %+v\n want %+v", r.requeues, want)
	}
}

// harness is pod workers wired to fakes, with a 1m resync and a 10s back-off.
type harness struct {
	metrics  fakeMetrics
	pw       *PodWorkers
	syncer   *fakeSyncer
	cache    *fakeCache
	requeuer *fakeRequeuer
	clock    *clocktesting.FakeClock
}

func newHarness(jitter float64) *harness {
	h := &harness{syncer: newFakeSyncer(), cache: &fakeCache{}, requeuer: &fakeRequeuer{},
		clock: clocktesting.NewFakeClock(t0)}
	h.pw = mustNew(Config{Clock: h.clock, ResyncInterval: time.Minute, BackOffPeriod: 10 * time.Second, JitterFactor: jitter},
		Deps{Syncer: h.syncer, Cache: h.cache, Requeuer: h.requeuer, Metrics: &h.metrics})
	return h
}

// fakeMetrics records the operation of each timed sync.
type fakeMetrics struct {
	mu  sync.Mutex
	ops []string
}

var _ Metrics = (*fakeMetrics)(nil)

func (f *fakeMetrics) ObservePodWorker(op string, _ time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, op)
}

func (f *fakeMetrics) observed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ops...)
}

// mustNew is New with dependencies known to be complete.
func mustNew(cfg Config, deps Deps) *PodWorkers {
	pw, err := New(cfg, deps)
	if err != nil {
		panic(err)
	}
	return pw
}
