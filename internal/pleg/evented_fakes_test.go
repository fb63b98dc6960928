package pleg

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/cri"
)

var (
	_ EventStream   = (*fakeStream)(nil)
	_ EventStream   = (*cri.Client)(nil)
	_ Metrics       = (*fakeMetrics)(nil)
	_ StreamMetrics = (*fakeMetrics)(nil)
)

// streamOutcome scripts one GetContainerEvents call: fail before opening (openErr), or open and
// fail at the first receive (recvErr), as gRPC reports Unimplemented.
type streamOutcome struct{ openErr, recvErr error }

// fakeStream is a container event stream the test drives. Each GetContainerEvents call takes the
// next scripted outcome; once the script is exhausted it opens a session that delivers what send
// queues, until breakWith.
type fakeStream struct {
	clock   *testingclock.FakeClock
	mu      sync.Mutex
	opens   []time.Time // clock readings of the GetContainerEvents calls
	script  []streamOutcome
	session *fakeSession
}

type fakeSession struct {
	events chan *runtimeapi.ContainerEventResponse
	end    chan error
}

func (f *fakeStream) GetContainerEvents(ctx context.Context, ch chan *runtimeapi.ContainerEventResponse,
	connected func(runtimeapi.RuntimeService_GetContainerEventsClient)) error {
	f.mu.Lock()
	f.opens = append(f.opens, f.clock.Now())
	var out streamOutcome
	if len(f.script) > 0 {
		out, f.script = f.script[0], f.script[1:]
	}
	s := &fakeSession{events: make(chan *runtimeapi.ContainerEventResponse, 100), end: make(chan error, 1)}
	if out.openErr == nil && out.recvErr == nil {
		f.session = s
	}
	f.mu.Unlock()
	if out.openErr != nil {
		return out.openErr
	}
	connected(nil)
	if out.recvErr != nil {
		return out.recvErr
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-s.end:
			return err
		case e := <-s.events:
			select {
			case ch <- e:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// send delivers events on the open stream and waits until the PLEG has dealt with them.
func (f *fakeStream) send(t *testing.T, events ...*runtimeapi.ContainerEventResponse) {
	t.Helper()
	f.mu.Lock()
	s := f.session
	f.mu.Unlock()
	if s == nil {
		t.Fatal("send: no stream open")
	}
	for _, e := range events {
		s.events <- e
	}
	synctest.Wait()
}

// breakWith ends the open stream with err and waits until the PLEG has dealt with it.
func (f *fakeStream) breakWith(t *testing.T, err error) {
	t.Helper()
	f.mu.Lock()
	s := f.session
	f.session = nil
	f.mu.Unlock()
	if s == nil {
		t.Fatal("breakWith: no stream open")
	}
	s.end <- err
	synctest.Wait()
}

func (f *fakeStream) openTimes() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.opens...)
}

// fakeMetrics records every measurement.
type fakeMetrics struct {
	mu                 sync.Mutex
	relists, intervals []time.Duration
	connected, failed  int
	latencies          []time.Duration
}

func (m *fakeMetrics) ObserveRelist(d time.Duration) {
	m.do(func() { m.relists = append(m.relists, d) })
}
func (m *fakeMetrics) ObserveRelistInterval(d time.Duration) {
	m.do(func() { m.intervals = append(m.intervals, d) })
}
func (m *fakeMetrics) StreamConnected() { m.do(func() { m.connected++ }) }
func (m *fakeMetrics) StreamFailed()    { m.do(func() { m.failed++ }) }
func (m *fakeMetrics) ObserveEventLatency(d time.Duration) {
	m.do(func() { m.latencies = append(m.latencies, d) })
}

func (m *fakeMetrics) do(f func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f()
}

// eharness runs an Evented PLEG on a fake runtime, stream and clock, in a synctest bubble.
type eharness struct {
	clock   *testingclock.FakeClock
	rt      *fakeRuntime
	stream  *fakeStream
	cache   *Cache
	metrics *fakeMetrics
	pleg    *Evented
}

func newEvented(t *testing.T, script []streamOutcome, pods ...*container.Pod) *eharness {
	t.Helper()
	clk := testingclock.NewFakeClock(t0)
	h := &eharness{
		clock:   clk,
		rt:      &fakeRuntime{pods: pods, ips: map[types.UID][]string{}, statusErr: map[types.UID]error{}},
		stream:  &fakeStream{clock: clk, script: script},
		cache:   NewCache(),
		metrics: &fakeMetrics{},
	}
	p, err := NewEvented(EventedConfig{
		Config: Config{Clock: clk, Runtime: h.rt, Cache: h.cache, Metrics: h.metrics},
		Stream: h.stream, StreamMetrics: h.metrics,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.pleg = p
	return h
}

// start runs the PLEG until the test ends and waits for its first relist.
func (h *eharness) start(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	h.pleg.Start(ctx)
	synctest.Wait()
}

// up starts the PLEG and lets the stream become trusted (one relist period after it opened);
// it discards the events and calls so far.
func (h *eharness) up(t *testing.T) {
	t.Helper()
	h.start(t)
	h.step(DefaultRelistPeriod)
	if !h.pleg.StreamUp() {
		t.Fatal("stream not up one relist period after it opened")
	}
	h.received()
	h.rt.calls()
}

func (h *eharness) step(d time.Duration) {
	h.clock.Step(d)
	synctest.Wait()
}

func (h *eharness) setPods(pods ...*container.Pod) {
	h.rt.set(func(f *fakeRuntime) { f.pods = pods })
}

func (h *eharness) received() []Event {
	var out []Event
	for {
		select {
		case e := <-h.pleg.Watch():
			out = append(out, *e)
		default:
			return out
		}
	}
}

// lists returns the number of full relists (GetPods calls) so far.
func (h *eharness) lists() int {
	h.rt.mu.Lock()
	defer h.rt.mu.Unlock()
	return h.rt.listCalls
}

// cevent is a container event for a pod's container, named by the sandbox status's metadata as
// containerd does, with a payload (containers) that the PLEG must not trust.
func cevent(uid types.UID, cid string, typ runtimeapi.ContainerEventType, createdAt time.Time,
	containers ...*runtimeapi.ContainerStatus) *runtimeapi.ContainerEventResponse {
	return &runtimeapi.ContainerEventResponse{
		ContainerId: cid, ContainerEventType: typ, CreatedAt: createdAt.UnixNano(),
		PodSandboxStatus: &runtimeapi.PodSandboxStatus{
			Metadata: &runtimeapi.PodSandboxMetadata{Uid: string(uid), Name: "pod-" + string(uid), Namespace: "default"},
		},
		ContainersStatuses: containers,
	}
}

const (
	evCreated = runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT
	evStarted = runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT
	evStopped = runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT
	evDeleted = runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT
)
