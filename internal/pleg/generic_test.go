package pleg

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/container"
)

// fakeRuntime serves a listing set by the test and derives pod statuses from it.
type fakeRuntime struct {
	mu          sync.Mutex
	pods        []*container.Pod
	ips         map[types.UID][]string
	listErr     error
	statusErr   map[types.UID]error
	listCalls   int
	statusCalls []types.UID
	// onCall, if set, runs inside every GetPods and GetPodStatus (e.g. to move the clock on).
	onCall func()
	// afterStatus, if set, runs inside GetPodStatus once the status is built (with f.mu held),
	// e.g. to change the runtime behind an inspection's back.
	afterStatus func(f *fakeRuntime, uid types.UID)
	// beforeStatus, if set, runs at the start of every GetPodStatus, before f.mu is taken (so
	// that concurrent inspections can be seen).
	beforeStatus func(uid types.UID)
}

var _ Runtime = (*fakeRuntime)(nil)

func (f *fakeRuntime) GetPods(context.Context) ([]*container.Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listCalls++
	if f.onCall != nil {
		f.onCall()
	}
	if f.listErr != nil {
		return nil, f.listErr
	}
	return slices.Clone(f.pods), nil
}

func (f *fakeRuntime) GetPodStatus(_ context.Context, uid types.UID, name, namespace string) (*container.PodStatus, error) {
	if f.beforeStatus != nil {
		f.beforeStatus(uid)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statusCalls = append(f.statusCalls, uid)
	if f.onCall != nil {
		f.onCall()
	}
	if err := f.statusErr[uid]; err != nil {
		return nil, err
	}
	s := &container.PodStatus{ID: uid, Name: name, Namespace: namespace, IPs: f.ips[uid]}
	for _, p := range f.pods {
		if p.ID != uid {
			continue
		}
		for _, c := range p.Containers {
			s.ContainerStatuses = append(s.ContainerStatuses, &container.Status{ID: c.ID, Name: c.Name, State: c.State})
		}
		for _, sb := range p.Sandboxes {
			st := runtimeapi.PodSandboxState_SANDBOX_NOTREADY
			if sb.State == container.StateRunning {
				st = runtimeapi.PodSandboxState_SANDBOX_READY
			}
			s.SandboxStatuses = append(s.SandboxStatuses, &runtimeapi.PodSandboxStatus{Id: sb.ID, State: st})
		}
	}
	if f.afterStatus != nil {
		f.afterStatus(f, uid)
	}
	return s, nil
}

func (f *fakeRuntime) set(fn func(f *fakeRuntime)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// calls returns the number of GetPods calls and the pods inspected since the last call.
// calls returns the number of listings and the pods inspected since the last call, in UID order:
// a relist inspects pods concurrently.
func (f *fakeRuntime) calls() (lists int, inspected []types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	inspected, f.statusCalls = f.statusCalls, nil
	slices.Sort(inspected)
	return f.listCalls, inspected
}

type harness struct {
	clock *testingclock.FakeClock
	rt    *fakeRuntime
	cache *Cache
	pleg  *Generic
}

func newHarness(t *testing.T, capacity int, pods ...*container.Pod) *harness {
	t.Helper()
	h := &harness{
		clock: testingclock.NewFakeClock(t0),
		rt:    &fakeRuntime{pods: pods, ips: map[types.UID][]string{}, statusErr: map[types.UID]error{}},
		cache: NewCache(),
	}
	p, err := New(Config{Clock: h.clock, Runtime: h.rt, Cache: h.cache, ChannelCapacity: capacity})
	if err != nil {
		t.Fatal(err)
	}
	h.pleg = p
	return h
}

// start runs the PLEG in the caller's synctest bubble and waits for the first relist; the loop
// ends with the test.
func (h *harness) start(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	h.pleg.Start(ctx)
	synctest.Wait()
}

// tick moves the clock on by one relist period and waits for the relist it triggers to finish.
func (h *harness) tick() {
	h.clock.Step(DefaultRelistPeriod)
	synctest.Wait()
}

func (h *harness) setPods(pods ...*container.Pod) {
	h.rt.set(func(f *fakeRuntime) { f.pods = pods })
}

// received returns the events waiting on the Watch channel.
func (h *harness) received() []Event {
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

func (h *harness) expect(t *testing.T, step string, want []Event, wantInspected []types.UID) {
	t.Helper()
	if got := h.received(); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: events\n got %v\nwant %v", step, got, want)
	}
	if _, got := h.rt.calls(); !reflect.DeepEqual(got, wantInspected) {
		t.Errorf("%s: inspected %v, want %v", step, got, wantInspected)
	}
}

// modified returns the time the cache's entry for uid was stored with, and the global timestamp.
func modified(c *Cache, uid types.UID) (entry, global time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.pods[uid]; ok {
		entry = e.modified
	}
	return entry, c.timestamp
}

// cached reports whether the cache has an entry for uid.
func cached(c *Cache, uid types.UID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.pods[uid]
	return ok
}

func TestGenericRelistOnTicks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 0, pod("a", sbx("s1", running), ctr("c1", running)))
		h.start(t)
		h.expect(t, "first relist", []Event{ev("a", ContainerStarted, "c1"), ev("a", ContainerStarted, "s1")}, []types.UID{"a"})
		if s, err := h.cache.Get("a"); err != nil || len(s.ContainerStatuses) != 1 || len(s.SandboxStatuses) != 1 {
			t.Fatalf("cache after first relist: %+v, %v", s, err)
		}
		if entry, global := modified(h.cache, "a"); !entry.Equal(t0) || !global.Equal(t0) {
			t.Errorf("cache stamped %v, global %v; want %v", entry, global, t0)
		}

		h.setPods(pod("a", sbx("s1", running), ctr("c1", exited)), pod("b", sbx("s2", running)))
		h.tick()
		h.expect(t, "c1 exits, b starts", []Event{ev("a", ContainerDied, "c1"), ev("b", ContainerStarted, "s2")}, []types.UID{"a", "b"})
		if s, _ := h.cache.Get("a"); s.ContainerStatuses[0].State != container.StateExited {
			t.Errorf("cache not updated: %+v", s.ContainerStatuses[0])
		}

		h.tick()
		h.expect(t, "no change", nil, nil)
		if entry, global := modified(h.cache, "a"); !entry.Equal(t0.Add(time.Second)) || !global.Equal(t0.Add(2*time.Second)) {
			t.Errorf("unchanged pod: entry %v (want the last inspection), global %v (want this relist)", entry, global)
		}

		h.setPods(pod("b", sbx("s2", running)))
		h.tick()
		h.expect(t, "a vanishes", []Event{
			ev("a", ContainerRemoved, "c1"),
			ev("a", ContainerDied, "s1"), ev("a", ContainerRemoved, "s1"),
		}, nil)
		if cached(h.cache, "a") {
			t.Error("vanished pod still cached")
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if s, err := h.cache.GetNewerThan(ctx, "a", t0.Add(2*time.Second)); err != nil || s.ID != "a" || len(s.ContainerStatuses) != 0 {
			t.Errorf("GetNewerThan for the vanished pod = %+v, %v; want an empty status at once", s, err)
		}
		if lists, _ := h.rt.calls(); lists != 4 {
			t.Errorf("%d GetPods calls, want 4", lists)
		}
	})
}

func TestGenericStampsCacheWithTimeBeforeListing(t *testing.T) {
	h := newHarness(t, 0, pod("a", ctr("c1", running)))
	// The runtime takes 300ms per call.
	h.rt.onCall = func() { h.clock.Step(300 * time.Millisecond) }
	h.pleg.Relist(t.Context())
	if entry, global := modified(h.cache, "a"); !entry.Equal(t0) || !global.Equal(t0) {
		t.Errorf("cache stamped %v, global %v; want the time before GetPods, %v", entry, global, t0)
	}
	// Healthy measures from the same instant: 600ms have passed.
	h.clock.Step(DefaultRelistThreshold - 600*time.Millisecond)
	if ok, err := h.pleg.Healthy(); !ok {
		t.Errorf("healthy exactly at the threshold: %v", err)
	}
	h.clock.Step(time.Nanosecond)
	if ok, _ := h.pleg.Healthy(); ok {
		t.Error("healthy past the threshold since the start of the last relist")
	}
}

func TestGenericRetriesFailedInspection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("boom")
		h := newHarness(t, 0, pod("a", ctr("c1", running)), pod("b", ctr("c2", running)))
		h.rt.statusErr["a"] = boom
		h.start(t)
		h.expect(t, "a fails", []Event{ev("b", ContainerStarted, "c2")}, []types.UID{"a", "b"})
		if _, err := h.cache.Get("a"); !errors.Is(err, boom) {
			t.Errorf("cache error for a = %v, want %v", err, boom)
		}

		h.tick()
		h.expect(t, "a fails again", nil, []types.UID{"a"})

		h.rt.set(func(f *fakeRuntime) { delete(f.statusErr, "a") })
		h.tick()
		h.expect(t, "a inspected: its events at last", []Event{ev("a", ContainerStarted, "c1")}, []types.UID{"a"})
		if s, err := h.cache.Get("a"); err != nil || len(s.ContainerStatuses) != 1 {
			t.Errorf("cache for a = %+v, %v", s, err)
		}
		h.tick()
		h.expect(t, "nothing to retry", nil, nil)

		// c1 goes unknown while a cannot be inspected, then is running again: nothing changed
		// since the last delivered listing, but the re-inspection still syncs the pod.
		h.rt.set(func(f *fakeRuntime) { f.statusErr["a"] = boom })
		h.setPods(pod("a", ctr("c1", unknown)), pod("b", ctr("c2", running)))
		h.tick()
		h.expect(t, "a unknown, fails", nil, []types.UID{"a"})
		h.rt.set(func(f *fakeRuntime) { delete(f.statusErr, "a") })
		h.setPods(pod("a", ctr("c1", running)), pod("b", ctr("c2", running)))
		h.tick()
		h.expect(t, "a back to running", []Event{{ID: "a", Type: PodSync}}, []types.UID{"a"})

		// A pod whose inspection failed and that then vanishes is dropped from the cache.
		h.rt.set(func(f *fakeRuntime) { f.statusErr["c"] = boom })
		h.setPods(pod("b", ctr("c2", running)), pod("c", ctr("c3", running)))
		h.tick()
		h.expect(t, "new pod c fails, a vanishes", []Event{
			ev("a", ContainerDied, "c1"), ev("a", ContainerRemoved, "c1"),
		}, []types.UID{"c"})
		h.setPods(pod("b", ctr("c2", running)))
		h.tick()
		h.expect(t, "c vanishes", []Event{{ID: "c", Type: PodSync}}, nil)
		if cached(h.cache, "c") {
			t.Error("vanished pod c still cached")
		}
	})
}

func TestGenericRequestReinspect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 0, pod("a", ctr("c1", running)))
		h.start(t)
		h.received()
		h.rt.calls()

		h.pleg.RequestReinspect("a")
		h.pleg.RequestReinspect("later")
		h.tick()
		h.expect(t, "reinspect a", []Event{{ID: "a", Type: PodSync}}, []types.UID{"a"})
		h.tick()
		h.expect(t, "request consumed; later is not listed yet", nil, nil)

		h.setPods(pod("a", ctr("c1", running)), pod("later", ctr("c9", running)))
		h.tick()
		h.expect(t, "later appears", []Event{ev("later", ContainerStarted, "c9")}, []types.UID{"later"})
		h.tick()
		h.expect(t, "request for later consumed", nil, nil)
	})
}

func TestGenericContainerChangedIsNotSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 0, pod("a", sbx("s1", running), ctr("c1", created)), pod("b", ctr("c2", created)))
		h.start(t)
		h.expect(t, "created containers", []Event{ev("a", ContainerStarted, "s1")}, []types.UID{"a", "b"})
		if s, _ := h.cache.Get("b"); len(s.ContainerStatuses) != 1 {
			t.Errorf("b not inspected into the cache: %+v", s)
		}
		h.setPods(pod("a", sbx("s1", running), ctr("c1", running)), pod("b", ctr("c2", running)))
		h.tick()
		h.expect(t, "started", []Event{ev("a", ContainerStarted, "c1"), ev("b", ContainerStarted, "c2")}, []types.UID{"a", "b"})
	})
}

func TestGenericHealthy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 0, pod("a", ctr("c1", running)))
		if ok, err := h.pleg.Healthy(); ok || err == nil || err.Error() != "pleg has yet to be successful" {
			t.Errorf("before any relist: %v, %v", ok, err)
		}
		h.start(t)
		h.expect(t, "first relist", []Event{ev("a", ContainerStarted, "c1")}, []types.UID{"a"})
		if ok, err := h.pleg.Healthy(); !ok {
			t.Errorf("after a relist: %v", err)
		}

		h.rt.set(func(f *fakeRuntime) { f.listErr = errors.New("runtime down") })
		h.clock.Step(DefaultRelistThreshold)
		synctest.Wait()
		if lists, _ := h.rt.calls(); lists != 2 {
			t.Fatalf("%d GetPods calls, want 2", lists)
		}
		if ok, err := h.pleg.Healthy(); !ok {
			t.Errorf("exactly at the threshold: %v", err)
		}
		h.tick()
		ok, err := h.pleg.Healthy()
		if want := "pleg was last seen active 3m1s ago; threshold is 3m0s"; ok || err == nil || err.Error() != want {
			t.Errorf("3m1s after the last good relist: %v, %v; want false, %q", ok, err, want)
		}

		h.rt.set(func(f *fakeRuntime) { f.listErr = nil })
		h.tick()
		if ok, err := h.pleg.Healthy(); !ok {
			t.Errorf("after recovering: %v", err)
		}
		h.expect(t, "nothing changed meanwhile", nil, nil)
	})
}

func TestGenericEventChannelFull(t *testing.T) {
	h := newHarness(t, 2, pod("a", ctr("c1", running), ctr("c2", running), ctr("c3", running)), pod("b", ctr("c4", exited)))
	h.pleg.Relist(t.Context())
	h.expect(t, "full", []Event{ev("a", ContainerStarted, "c1"), ev("a", ContainerStarted, "c2")}, []types.UID{"a", "b"})
	if n := h.pleg.DroppedEvents(); n != 2 {
		t.Errorf("DroppedEvents = %d, want 2", n)
	}
	if s, _ := h.cache.Get("b"); len(s.ContainerStatuses) != 1 {
		t.Errorf("cache not updated for a pod whose events were dropped: %+v", s)
	}
	h.pleg.Relist(t.Context())
	h.expect(t, "dropped events are not resent", nil, nil)
}

func TestGenericKeepsPodIPsAfterSandboxExits(t *testing.T) {
	h := newHarness(t, 0, pod("a", sbx("s1", running)))
	h.rt.ips["a"] = []string{"10.0.0.7"}
	relistIPs := func(pods ...*container.Pod) []string {
		h.setPods(pods...)
		h.pleg.Relist(t.Context())
		h.clock.Step(time.Second)
		s, _ := h.cache.Get("a")
		return s.IPs
	}
	if ips := relistIPs(pod("a", sbx("s1", running))); !slices.Equal(ips, []string{"10.0.0.7"}) {
		t.Errorf("running sandbox: IPs %v", ips)
	}
	h.rt.ips["a"] = nil
	if ips := relistIPs(pod("a", sbx("s1", exited))); !slices.Equal(ips, []string{"10.0.0.7"}) {
		t.Errorf("exited sandbox: IPs %v, want the last known", ips)
	}
	if ips := relistIPs(pod("a", sbx("s1", exited), sbx("s2", running))); len(ips) != 0 {
		t.Errorf("new ready sandbox without IPs yet: IPs %v, want none", ips)
	}
}

func TestGenericStartOnceAndStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 0)
		ctx, cancel := context.WithCancel(t.Context())
		h.pleg.Start(ctx)
		h.pleg.Start(ctx)
		synctest.Wait()
		h.tick()
		if lists, _ := h.rt.calls(); lists != 2 {
			t.Errorf("%d GetPods calls after start and a tick, want 2", lists)
		}
		cancel()
		synctest.Wait()
		h.tick()
		if lists, _ := h.rt.calls(); lists != 2 {
			t.Errorf("%d GetPods calls after the context ended, want 2", lists)
		}
	})
}

func TestNewConfig(t *testing.T) {
	rt, c := &fakeRuntime{}, NewCache()
	for name, cfg := range map[string]Config{
		"no runtime":      {Cache: c},
		"no cache":        {Runtime: rt},
		"negative period": {Runtime: rt, Cache: c, RelistPeriod: -time.Second},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	g, err := New(Config{Runtime: rt, Cache: c})
	if err != nil {
		t.Fatal(err)
	}
	if g.period != time.Second || g.threshold != 3*time.Minute || cap(g.events) != 1000 || g.clock == nil {
		t.Errorf("defaults: period %v, threshold %v, capacity %d, clock %v", g.period, g.threshold, cap(g.events), g.clock)
	}
	if _, err := g.Healthy(); err == nil || !strings.Contains(err.Error(), "yet to be successful") {
		t.Errorf("Healthy before Start: %v", err)
	}
}

// A relist inspects the changed pods concurrently (relistConcurrency at a time): after a restart
// with many pods, every worker waits for the first relist. The events still come in pod order.
func TestGenericRelistInspectsConcurrently(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pods []*container.Pod
		for i := range relistConcurrency + 2 {
			pods = append(pods, pod(types.UID(fmt.Sprintf("p%02d", i)), ctr(fmt.Sprintf("c%02d", i), running)))
		}
		h := newHarness(t, 0, pods...)
		var inFlight atomic.Int32
		release := make(chan struct{})
		h.rt.beforeStatus = func(types.UID) {
			inFlight.Add(1)
			<-release
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.pleg.Relist(t.Context())
		}()
		synctest.Wait()
		if n := inFlight.Load(); n != relistConcurrency {
			t.Errorf("%d inspections in flight, want %d", n, relistConcurrency)
		}
		close(release)
		<-done
		var want []Event
		for i := range relistConcurrency + 2 {
			want = append(want, ev(types.UID(fmt.Sprintf("p%02d", i)), ContainerStarted, fmt.Sprintf("c%02d", i)))
		}
		if got := h.received(); !reflect.DeepEqual(got, want) {
			t.Errorf("events\n got %v\nwant %v", got, want)
		}
	})
}
