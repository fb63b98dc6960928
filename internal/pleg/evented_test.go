package pleg

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
)

func (h *eharness) expect(t *testing.T, step string, want []Event, wantInspected []types.UID) {
	t.Helper()
	if got := h.received(); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: events\n got %v\nwant %v", step, got, want)
	}
	if _, got := h.rt.calls(); !reflect.DeepEqual(got, wantInspected) {
		t.Errorf("%s: inspected %v, want %v", step, got, wantInspected)
	}
}

func (h *eharness) requireLists(t *testing.T, step string, want int) {
	t.Helper()
	if got := h.lists(); got != want {
		t.Errorf("%s: %d full relists, want %d", step, got, want)
	}
}

func TestEventedRelistsOnlyAsSafetyNetOnceStreamIsUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newEvented(t, nil, pod("a", sbx("s1", running), ctr("c1", running)))
		h.start(t)
		h.expect(t, "first relist", []Event{ev("a", ContainerStarted, "c1"), ev("a", ContainerStarted, "s1")}, []types.UID{"a"})
		h.requireLists(t, "start", 1)
		if h.pleg.StreamUp() {
			t.Error("stream trusted before a relist caught up after it opened")
		}
		h.step(time.Second)
		h.requireLists(t, "one period after the stream opened: the catch-up relist", 2)
		if !h.pleg.StreamUp() {
			t.Fatal("stream not up after the catch-up relist")
		}
		h.step(298 * time.Second)
		h.step(time.Second)
		h.requireLists(t, "299s after the catch-up relist", 2)
		h.step(time.Second)
		h.requireLists(t, "300s after the catch-up relist: the safety relist", 3)
		if ok, err := h.pleg.Healthy(); !ok {
			t.Errorf("Healthy: %v", err)
		}
		h.expect(t, "nothing changed", nil, nil)
	})
}

func TestEventedInspectsThePodAnEventNamesNotItsPayload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newEvented(t, nil, pod("a", sbx("s1", running), ctr("c1", running)), pod("b", sbx("s2", running)))
		h.up(t)
		_, globalBefore := modified(h.cache, "a")

		h.setPods(pod("a", sbx("s1", running), ctr("c1", exited)), pod("b", sbx("s2", running)))
		// Every runtime call takes 300ms: the entry must carry the time before the inspection.
		h.rt.set(func(f *fakeRuntime) { f.onCall = func() { h.clock.Step(300 * time.Millisecond) } })
		before := h.clock.Now()
		// The payload says c1 runs and the event was created an hour ago: neither is used.
		h.stream.send(t, cevent("a", "c1", evStopped, t0.Add(-time.Hour),
			&runtimeapi.ContainerStatus{Id: "c1", State: runtimeapi.ContainerState_CONTAINER_RUNNING}))
		h.expect(t, "c1 stopped", []Event{ev("a", ContainerDied, "c1")}, []types.UID{"a"})
		h.requireLists(t, "event", 2)
		entry, global := modified(h.cache, "a")
		if !entry.Equal(before) {
			t.Errorf("entry stamped %v, want %v: the time before the inspection, not the event's creation or the inspection's end", entry, before)
		}
		if !global.Equal(globalBefore) {
			t.Errorf("global timestamp moved from %v to %v on an event; only full relists may move it", globalBefore, global)
		}
		if s, _ := h.cache.Get("a"); s.FindContainerStatusByName("c-c1").State != container.StateExited {
			t.Errorf("cache not updated from the inspection: %+v", s.ContainerStatuses[0])
		}

		h.rt.set(func(f *fakeRuntime) { f.onCall = nil })
		h.step(300 * time.Second)
		h.requireLists(t, "safety relist", 3)
		h.expect(t, "the safety relist agrees with what the event delivered", nil, nil)
	})
}

// Duplicate, out-of-order and stale events cannot make the cache go back, nor the PLEG report a
// container twice: each event only makes the pod be inspected afresh, and events are the Diff
// against the last delivered listing.
func TestEventedDuplicateReorderedAndStaleEventsReportEachChangeOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newEvented(t, nil, pod("a", sbx("s1", running)))
		h.up(t)

		h.setPods(pod("a", sbx("s1", running), ctr("c1", running)))
		h.clock.Step(time.Millisecond)
		at := h.clock.Now()
		h.stream.send(t,
			cevent("a", "c1", evStarted, at),
			cevent("a", "c1", evCreated, at.Add(-time.Millisecond)),                              // after STARTED
			cevent("a", "c1", evStarted, at),                                                     // again
			cevent("a", "c0", evStopped, t0.Add(-time.Hour)),                                     // a container of long ago
			&runtimeapi.ContainerEventResponse{ContainerId: "c1", ContainerEventType: evStarted}, // names no pod
		)
		if got, want := h.received(), []Event{ev("a", ContainerStarted, "c1")}; !reflect.DeepEqual(got, want) {
			t.Errorf("events %v, want %v", got, want)
		}
		s, _ := h.cache.Get("a")
		if c := s.FindContainerStatusByName("c-c1"); c == nil || c.State != container.StateRunning {
			t.Errorf("cache %+v, want c1 running", s)
		}
		entry, _ := modified(h.cache, "a")

		h.step(time.Second)
		h.stream.send(t, cevent("a", "c1", evStarted, at), cevent("a", "c1", evCreated, at))
		if got := h.received(); len(got) != 0 {
			t.Errorf("late duplicates produced events %v", got)
		}
		if later, _ := modified(h.cache, "a"); later.Before(entry) {
			t.Errorf("cache entry went back from %v to %v", entry, later)
		}
		h.step(300 * time.Second)
		if got := h.received(); len(got) != 0 {
			t.Errorf("safety relist produced events %v", got)
		}
	})
}

// The upstream evented PLEG's duplicate containers (kubernetes#121003, #121349) came from a
// worker syncing on a cached status that predated its own last sync. Here an inspection races
// with a worker's sync: it reads the runtime before the worker creates c1 and completes after.
// Whatever releases the worker next, it must see c1, or it would create c1 a second time.
func TestEventedWorkerNeverSyncsOnStatusOlderThanItsLastSync(t *testing.T) {
	unavailable := grpcstatus.Error(codes.Unavailable, "connection reset")
	for _, tc := range []struct {
		name    string
		release func(t *testing.T, h *eharness)
	}{
		{"c1's event arrives", func(t *testing.T, h *eharness) {
			h.clock.Step(time.Millisecond)
			h.stream.send(t, cevent("a", "c1", evStarted, h.clock.Now()))
		}},
		{"c1's event is lost: the waiting worker is served at the next tick", func(t *testing.T, h *eharness) {
			h.step(time.Second)
		}},
		{"c1's event is lost and the stream breaks", func(t *testing.T, h *eharness) {
			h.clock.Step(time.Millisecond)
			h.stream.breakWith(t, unavailable)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newEvented(t, nil, pod("a", sbx("s1", running)))
				h.up(t)
				var lastSync time.Time
				h.rt.set(func(f *fakeRuntime) {
					f.afterStatus = func(f *fakeRuntime, uid types.UID) {
						f.afterStatus = nil
						// The worker creates c1 after the inspection read the runtime; its
						// sync returns 10ms later.
						f.pods = []*container.Pod{pod("a", sbx("s1", running), ctr("c1", running))}
						h.clock.Step(10 * time.Millisecond)
						lastSync = h.clock.Now()
					}
				})
				h.stream.send(t, cevent("a", "s1", evStarted, t0)) // a stale duplicate
				var since time.Time
				h.rt.set(func(*fakeRuntime) { since = lastSync })
				if since.IsZero() {
					t.Fatal("the event did not inspect the pod")
				}
				if s, _ := h.cache.Get("a"); s.FindContainerStatusByName("c-c1") != nil {
					t.Fatal("test set-up: the racing inspection saw c1")
				}

				worker := getNewerThanAsync(t.Context(), h.cache, "a", since)
				requireBlocked(t, worker)
				tc.release(t, h)
				r := requireResult(t, worker)
				if r.err != nil || r.status.FindContainerStatusByName("c-c1") == nil {
					t.Fatalf("worker got %+v, %v: a status without c1, so it would create c1 again", r.status, r.err)
				}
			})
		})
	}
}

func TestEventedLostEventsAreCaughtUpWhenTheStreamBreaks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newEvented(t, nil, pod("a", sbx("s1", running), ctr("c1", running)))
		h.up(t)
		h.setPods(pod("a", sbx("s1", running), ctr("c1", exited)))
		h.step(time.Second)
		h.expect(t, "c1 died, its event lost", nil, nil)

		h.stream.breakWith(t, grpcstatus.Error(codes.Unavailable, "containerd restarting"))
		h.expect(t, "stream broke: relist at once", []Event{ev("a", ContainerDied, "c1")}, []types.UID{"a"})
		h.requireLists(t, "break", 3)
		if h.pleg.StreamUp() {
			t.Error("stream still up")
		}
		h.step(time.Second)
		h.requireLists(t, "1s later: relisting every second; reconnected", 4)
		if n := len(h.stream.openTimes()); n != 2 {
			t.Errorf("%d stream opens, want 2", n)
		}
		if h.pleg.StreamUp() {
			t.Error("new stream trusted before a relist caught up")
		}
		h.step(time.Second)
		h.requireLists(t, "catch-up relist", 5)
		if !h.pleg.StreamUp() {
			t.Error("new stream not up after the catch-up relist")
		}
		h.step(time.Second)
		h.requireLists(t, "slow again", 5)
		h.metrics.do(func() {
			if h.metrics.connected != 2 || h.metrics.failed != 1 {
				t.Errorf("stream metrics: %d connected, %d failed; want 2, 1", h.metrics.connected, h.metrics.failed)
			}
		})
	})
}

func TestEventedFallsBackToRelistWhenRuntimeLacksTheStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unimplemented := grpcstatus.Error(codes.Unimplemented, "unknown method GetContainerEvents")
		h := newEvented(t, []streamOutcome{{recvErr: unimplemented}, {recvErr: unimplemented}}, pod("a", ctr("c1", running)))
		h.start(t)
		for range 5 {
			h.step(time.Second)
		}
		h.requireLists(t, "relisting every second", 6)
		h.setPods(pod("a", ctr("c1", exited)))
		h.step(time.Second)
		h.expect(t, "c1 died", []Event{ev("a", ContainerStarted, "c1"), ev("a", ContainerDied, "c1")}, []types.UID{"a", "a"})

		h.step(293 * time.Second) // t0+299s
		if got := h.stream.openTimes(); !slices.Equal(got, []time.Time{t0}) {
			t.Errorf("opens %v, want only the first before the unsupported retry", got)
		}
		h.step(time.Second)
		if got := h.stream.openTimes(); !slices.Equal(got, []time.Time{t0, t0.Add(5 * time.Minute)}) {
			t.Errorf("opens %v, want a retry after 5m", got)
		}
		if h.pleg.StreamUp() {
			t.Error("stream up")
		}

		// Health is the relist's, with the fallback threshold.
		h.rt.set(func(f *fakeRuntime) { f.listErr = errors.New("runtime down") })
		h.step(3 * time.Minute)
		if ok, err := h.pleg.Healthy(); !ok {
			t.Errorf("exactly at the threshold: %v", err)
		}
		h.step(time.Second)
		if ok, err := h.pleg.Healthy(); ok || !strings.Contains(err.Error(), "threshold is 3m0s") {
			t.Errorf("Healthy = %v, %v; want unhealthy past 3m", ok, err)
		}
	})
}

func TestEventedReconnectsWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unavailable := grpcstatus.Error(codes.Unavailable, "connection refused")
		h := newEvented(t, slices.Repeat([]streamOutcome{{openErr: unavailable}}, 7))
		h.start(t)
		for range 100 {
			h.step(time.Second)
		}
		var want []time.Time
		for _, s := range []int{0, 1, 3, 7, 15, 31, 61, 91} {
			want = append(want, t0.Add(time.Duration(s)*time.Second))
		}
		if got := h.stream.openTimes(); !slices.Equal(got, want) {
			t.Errorf("opens at %v\nwant %v", got, want)
		}
		if !h.pleg.StreamUp() {
			t.Error("stream not up after it opened")
		}

		// A stream that stayed open for MaxBackoff was healthy: the back-off starts over.
		for range 30 {
			h.step(time.Second)
		}
		h.stream.breakWith(t, unavailable)
		h.step(time.Second)
		if got := h.stream.openTimes(); len(got) != 9 || !got[8].Equal(t0.Add(131*time.Second)) {
			t.Errorf("opens %v, want the 9th 1s after the break at t0+130s", got)
		}
	})
}

func TestEventedEventNamingNoPod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newEvented(t, nil, pod("a", sbx("s1", running), ctr("c1", running)))
		h.up(t)
		h.stream.send(t, &runtimeapi.ContainerEventResponse{ContainerId: "c1", ContainerEventType: evStopped})
		h.expect(t, "known container", nil, []types.UID{"a"})
		h.requireLists(t, "known container", 2)
		h.stream.send(t, &runtimeapi.ContainerEventResponse{ContainerId: "c9", ContainerEventType: evCreated})
		h.requireLists(t, "unknown container: full relist", 3)
	})
}

func TestEventedServesWaitingWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newEvented(t, nil, pod("a", sbx("s1", running), ctr("c1", running)))
		h.start(t)
		h.received()
		h.rt.calls()

		// Not up yet: a waiting worker is served at once, not at the next relist.
		lastSync := h.clock.Now()
		h.clock.Step(10 * time.Millisecond)
		worker := getNewerThanAsync(t.Context(), h.cache, "a", lastSync)
		if r := requireResult(t, worker); r.err != nil || len(r.status.ContainerStatuses) != 1 {
			t.Errorf("worker got %+v, %v", r.status, r.err)
		}
		h.expect(t, "served before the stream is up", nil, []types.UID{"a"})
		if h.pleg.StreamUp() {
			t.Fatal("stream up too early")
		}

		// A worker waiting past the current time is left for the next tick's relist.
		worker = getNewerThanAsync(t.Context(), h.cache, "a", h.clock.Now())
		requireBlocked(t, worker)
		h.step(time.Second)
		if r := requireResult(t, worker); r.err != nil || len(r.status.ContainerStatuses) != 1 {
			t.Errorf("worker got %+v, %v", r.status, r.err)
		}
		h.expect(t, "released by the relist", nil, nil)
		h.rt.calls()

		// Up: a worker whose sync changed nothing (so no event comes) is served by inspecting its
		// pod, not after the safety relist period.
		lastSync = h.clock.Now()
		h.clock.Step(10 * time.Millisecond)
		worker = getNewerThanAsync(t.Context(), h.cache, "a", lastSync)
		if r := requireResult(t, worker); r.err != nil || len(r.status.ContainerStatuses) != 1 {
			t.Errorf("worker got %+v, %v", r.status, r.err)
		}
		h.expect(t, "served", nil, []types.UID{"a"})
		if entry, _ := modified(h.cache, "a"); !entry.Equal(lastSync.Add(10 * time.Millisecond)) {
			t.Errorf("entry stamped %v, want the inspection's start", entry)
		}
		h.requireLists(t, "served", 2)

		// A pod the runtime has nothing of: an empty status, until a relist confirms it is gone.
		worker = getNewerThanAsync(t.Context(), h.cache, "gone", lastSync)
		if r := requireResult(t, worker); r.err != nil || r.status.ID != "gone" || len(r.status.ContainerStatuses) != 0 {
			t.Errorf("worker of an unknown pod got %+v, %v", r.status, r.err)
		}
		h.expect(t, "unknown pod", nil, []types.UID{"gone"})
		if !cached(h.cache, "gone") {
			t.Error("empty status not cached")
		}
		h.step(300 * time.Second)
		if cached(h.cache, "gone") {
			t.Error("empty status still cached after the safety relist")
		}
		h.expect(t, "safety relist", nil, nil)
	})
}

func TestEventedPodRemoved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newEvented(t, nil, pod("a", sbx("s1", exited), ctr("c1", exited)), pod("b", ctr("c2", running)))
		h.up(t)
		h.setPods(pod("b", ctr("c2", running)))
		h.stream.send(t, cevent("a", "s1", evDeleted, h.clock.Now()))
		h.expect(t, "a removed", []Event{ev("a", ContainerRemoved, "c1"), ev("a", ContainerRemoved, "s1")}, []types.UID{"a"})
		if s, err := h.cache.Get("a"); err != nil || len(s.ContainerStatuses)+len(s.SandboxStatuses) != 0 {
			t.Errorf("cache for a: %+v, %v", s, err)
		}
		h.stream.send(t, cevent("a", "s1", evDeleted, h.clock.Now()))
		h.expect(t, "duplicate removal", nil, []types.UID{"a"})
		h.step(300 * time.Second)
		h.expect(t, "safety relist", nil, nil)
		if cached(h.cache, "a") {
			t.Error("removed pod still cached")
		}
	})
}

func TestEventedHealthy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newEvented(t, nil)
		if ok, err := h.pleg.Healthy(); ok || err.Error() != "pleg has yet to be successful" {
			t.Errorf("before start: %v, %v", ok, err)
		}
		h.up(t) // last good relist at t0+1s
		h.rt.set(func(f *fakeRuntime) { f.listErr = errors.New("runtime down") })
		h.step(600 * time.Second)
		if ok, err := h.pleg.Healthy(); !ok {
			t.Errorf("stream up, 10m after the last good relist: %v", err)
		}
		h.step(time.Second)
		if ok, err := h.pleg.Healthy(); ok || !strings.Contains(err.Error(), "threshold is 10m0s") {
			t.Errorf("stream up, past 10m: %v, %v", ok, err)
		}
		h.stream.breakWith(t, errors.New("gone"))
		if ok, err := h.pleg.Healthy(); !ok {
			t.Errorf("the stream kept the cache current until it broke: %v", err)
		}
		h.step(3 * time.Minute)
		if ok, err := h.pleg.Healthy(); !ok {
			t.Errorf("3m after the break: %v", err)
		}
		h.step(time.Second)
		if ok, err := h.pleg.Healthy(); ok || !strings.Contains(err.Error(), "threshold is 3m0s") {
			t.Errorf("stream down and relists failing past 3m: %v, %v", ok, err)
		}
		h.rt.set(func(f *fakeRuntime) { f.listErr = nil })
		h.step(time.Second)
		if ok, err := h.pleg.Healthy(); !ok {
			t.Errorf("after a good relist: %v", err)
		}
	})
}

func TestEventedMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newEvented(t, nil, pod("a", ctr("c1", running)))
		h.up(t)
		now := h.clock.Now()
		h.stream.send(t, cevent("a", "c1", evStarted, now.Add(-250*time.Millisecond)),
			cevent("a", "c1", evStarted, now.Add(time.Second))) // the runtime's clock is ahead
		h.metrics.do(func() {
			if want := []time.Duration{250 * time.Millisecond, 0}; !slices.Equal(h.metrics.latencies, want) {
				t.Errorf("latencies %v, want %v", h.metrics.latencies, want)
			}
			if want := []time.Duration{time.Second}; !slices.Equal(h.metrics.intervals, want) {
				t.Errorf("relist intervals %v, want %v", h.metrics.intervals, want)
			}
			if len(h.metrics.relists) != 2 || h.metrics.connected != 1 || h.metrics.failed != 0 {
				t.Errorf("%d relists, %d connected, %d failed; want 2, 1, 0", len(h.metrics.relists), h.metrics.connected, h.metrics.failed)
			}
		})
	})
}

func TestNewEventedConfig(t *testing.T) {
	rt, c, s := &fakeRuntime{}, NewCache(), &fakeStream{}
	base := Config{Runtime: rt, Cache: c}
	for name, cfg := range map[string]EventedConfig{
		"no stream":              {Config: base},
		"no runtime":             {Config: Config{Cache: c}, Stream: s},
		"negative backoff":       {Config: base, Stream: s, InitialBackoff: -time.Second},
		"max below initial":      {Config: base, Stream: s, InitialBackoff: time.Minute, MaxBackoff: time.Second},
		"safety below fallback":  {Config: Config{Runtime: rt, Cache: c, RelistPeriod: time.Minute}, Stream: s, SafetyRelistPeriod: time.Second},
		"negative safety period": {Config: base, Stream: s, SafetyRelistPeriod: -time.Second},
	} {
		if _, err := NewEvented(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	e, err := NewEvented(EventedConfig{Config: base, Stream: s})
	if err != nil {
		t.Fatal(err)
	}
	want := timing{period: time.Second, threshold: 3 * time.Minute, safetyPeriod: 5 * time.Minute,
		safetyThreshold: 10 * time.Minute, initialBackoff: time.Second, maxBackoff: 30 * time.Second, unsupportedRetry: 5 * time.Minute}
	if e.timing != want {
		t.Errorf("defaults %+v, want %+v", e.timing, want)
	}
}

// A worker that starts to wait while an event's inspection of its pod is in flight (the
// inspection's timestamp is before the worker's last sync, so its Set does not release the
// worker) is served at once by another inspection, not at the next tick.
func TestEventedServesWorkerWaitingDuringInspection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newEvented(t, nil, pod("a", sbx("s1", running), ctr("c1", running)))
		h.up(t)
		var worker <-chan result
		h.rt.onCall = func() {
			if worker != nil {
				return
			}
			h.clock.Step(10 * time.Millisecond) // the worker's sync ends after the inspection began
			worker = getNewerThanAsync(t.Context(), h.cache, "a", h.clock.Now())
			h.clock.Step(time.Millisecond) // and real time goes on
		}
		h.stream.send(t, cevent("a", "c1", evStarted, h.clock.Now()))
		if worker == nil {
			t.Fatal("the event did not inspect the pod")
		}
		r := requireResult(t, worker) // no clock step: no tick may release it
		if r.err != nil || len(r.status.ContainerStatuses) != 1 {
			t.Errorf("worker got %+v, %v", r.status, r.err)
		}
		if _, calls := h.rt.calls(); len(calls) != 2 {
			t.Errorf("GetPodStatus calls %v, want two (the event's, then the waiting worker's)", calls)
		}
	})
}
