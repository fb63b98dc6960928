package eviction

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

type fakeSummary struct {
	mu        sync.Mutex
	summaries []*statsapi.Summary // served in turn; the last one repeats
	err       error
	dedicated bool
}

var _ Summary = (*fakeSummary)(nil)

func (f *fakeSummary) Summary(context.Context) (*statsapi.Summary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	s := f.summaries[0]
	if len(f.summaries) > 1 {
		f.summaries = f.summaries[1:]
	}
	return s, nil
}

func (f *fakeSummary) HasDedicatedImageFs(context.Context) (bool, error) { return f.dedicated, nil }

type fakePods []*v1.Pod

var _ Pods = fakePods(nil)

func (f fakePods) ActivePods() []*v1.Pod { return f }

type eviction struct {
	pod        string
	grace      int64
	message    string
	disruption bool
}

type fakeKiller struct{ evicted []eviction }

var _ Killer = (*fakeKiller)(nil)

func (f *fakeKiller) EvictPod(pod *v1.Pod, grace int64, message string, disruption bool) {
	f.evicted = append(f.evicted, eviction{pod.Name, grace, message, disruption})
}

type fakeRecorder struct{ events []string }

var _ Recorder = (*fakeRecorder)(nil)

func (f *fakeRecorder) Eventf(pod *v1.Pod, eventType, reason, format string, args ...any) {
	f.events = append(f.events, pod.Name+" "+reason+": "+fmt.Sprintf(format, args...))
}

func (f *fakeRecorder) NodeEventf(eventType, reason, format string, args ...any) {
	f.events = append(f.events, "node "+reason+": "+fmt.Sprintf(format, args...))
}

type fakeMetrics struct {
	evictions map[string]int
	ages      []string
}

var _ Metrics = (*fakeMetrics)(nil)

func (f *fakeMetrics) ObserveEviction(signal string) { f.evictions[signal]++ }
func (f *fakeMetrics) ObserveEvictionStatsAge(signal string, age time.Duration) {
	f.ages = append(f.ages, fmt.Sprintf("%s %v", signal, age))
}

type countingReclaimer struct {
	calls int
	err   error
}

func (c *countingReclaimer) Reclaim(context.Context) error { c.calls++; return c.err }

// summaryAt is a node with memory available of capacity, nodefs available of 100Gi, and the
// pods' stats, all stamped at.
func summaryAt(at time.Time, memAvailable, nodefsAvailable string, pods ...statsapi.PodStats) *statsapi.Summary {
	mt := metav1.NewTime(at)
	avail := q(memAvailable)
	return &statsapi.Summary{Node: statsapi.NodeStats{
		Memory: &statsapi.MemoryStats{Time: mt, AvailableBytes: u64(memAvailable), WorkingSetBytes: u64(fmt.Sprint(4<<30 - avail.Value()))},
		Fs:     &statsapi.FsStats{Time: mt, AvailableBytes: u64(nodefsAvailable), CapacityBytes: u64("100Gi")},
	}, Pods: pods}
}

func newTestManager(t *testing.T, settings Settings, s *fakeSummary, pods fakePods, images, containers *countingReclaimer) (*Manager, *fakeKiller, *fakeRecorder, *testingclock.FakeClock) {
	t.Helper()
	clk := testingclock.NewFakeClock(t0)
	k, r := &fakeKiller{}, &fakeRecorder{}
	deps := Deps{Clock: clk, Summary: s, Pods: pods, Killer: k, Recorder: r}
	if images != nil {
		deps.ImageGC = images
	}
	if containers != nil {
		deps.ContainerGC = containers
	}
	m, err := New(Config{Thresholds: mustParse(settings), MaxPodGracePeriodSeconds: 20, PressureTransitionPeriod: time.Minute}, deps)
	if err != nil {
		t.Fatal(err)
	}
	return m, k, r, clk
}

func TestSynchronizeMemoryPressure(t *testing.T) {
	bestEffort := pod("besteffort", 0, nil, nil)
	guaranteed := pod("guaranteed", 0, mem("1Gi"), mem("1Gi"))
	static := pod("static", 0, nil, nil)
	static.Annotations["kubernetes.io/config.source"] = "file"
	pods := fakePods{guaranteed, static, bestEffort}
	stats := []statsapi.PodStats{podStats(bestEffort, "2Gi", "", ""), podStats(guaranteed, "900Mi", "", ""), podStats(static, "3Gi", "", "")}
	s := &fakeSummary{summaries: []*statsapi.Summary{summaryAt(t0, "50Mi", "50Gi", stats...)}}
	images := &countingReclaimer{}
	m, k, r, clk := newTestManager(t, Settings{Hard: map[string]string{"memory.available": "100Mi"}}, s, pods, images, nil)
	metrics := &fakeMetrics{evictions: map[string]int{}}
	m.deps.Metrics = metrics

	if _, evicted := m.Synchronize(context.Background()); len(evicted) != 1 || evicted[0].Name != "besteffort" {
		t.Fatalf("evicted %v, want besteffort (the static pod, though larger, is critical)", evicted)
	}
	if len(k.evicted) != 1 || k.evicted[0].grace != 0 || !k.evicted[0].disruption ||
		!strings.HasPrefix(k.evicted[0].message, "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container c was using 2Gi, request is 0") {
		t.Errorf("evictions %+v", k.evicted)
	}
	if images.calls != 0 {
		t.Error("memory pressure does not reclaim images")
	}
	if fmt.Sprint(metrics.evictions) != "map[memory.available:1]" || fmt.Sprint(metrics.ages) != "[memory.available 0s]" {
		t.Errorf("metrics %v %v", metrics.evictions, metrics.ages)
	}
	if !m.IsUnderMemoryPressure() || m.IsUnderDiskPressure() || m.IsUnderPIDPressure() {
		t.Error("want MemoryPressure only")
	}
	if ok, reason, _ := m.AdmitPod(pod("new", 0, nil, nil)); ok || reason != "Evicted" {
		t.Error("a BestEffort pod is admitted under memory pressure")
	}
	if ok, _, _ := m.AdmitPod(pod("new", 0, mem("1Mi"), nil)); !ok {
		t.Error("a Burstable pod is refused under memory pressure alone")
	}
	if !strings.Contains(strings.Join(r.events, "\n"), "node EvictionThresholdMet: Attempting to reclaim memory") ||
		!strings.Contains(strings.Join(r.events, "\n"), "besteffort Evicted: The node was low on resource: memory.") {
		t.Errorf("events %q", r.events)
	}

	// The same stats again: the threshold does not act twice on one observation.
	if _, evicted := m.Synchronize(context.Background()); evicted != nil {
		t.Errorf("evicted %s again on stale stats", names(evicted))
	}
	// Memory recovers; MemoryPressure holds for the transition period, then clears.
	s.summaries = []*statsapi.Summary{summaryAt(t0.Add(10*time.Second), "2Gi", "50Gi", stats...)}
	clk.Step(10 * time.Second)
	m.Synchronize(context.Background())
	if !m.IsUnderMemoryPressure() {
		t.Error("MemoryPressure cleared before the transition period")
	}
	clk.Step(time.Minute)
	s.summaries = []*statsapi.Summary{summaryAt(t0.Add(70*time.Second), "2Gi", "50Gi", stats...)}
	m.Synchronize(context.Background())
	if m.IsUnderMemoryPressure() {
		t.Error("MemoryPressure still true after the transition period")
	}
}

func TestSynchronizeDiskPressureReclaimsFirst(t *testing.T) {
	user := pod("user", 0, nil, nil)
	stats := []statsapi.PodStats{podStats(user, "", "1Gi", "1Mi")}
	// Before reclaim 5Gi of 100Gi is free (threshold 10%); after it, 20Gi.
	s := &fakeSummary{summaries: []*statsapi.Summary{summaryAt(t0, "2Gi", "5Gi", stats...), summaryAt(t0, "2Gi", "20Gi", stats...)}}
	images, containers := &countingReclaimer{}, &countingReclaimer{err: errors.New("boom")}
	m, k, _, _ := newTestManager(t, Settings{Hard: map[string]string{"nodefs.available": "10%"}}, s, fakePods{user}, images, containers)
	if _, evicted := m.Synchronize(context.Background()); evicted != nil {
		t.Errorf("evicted %s though reclaiming images and dead containers freed enough", names(evicted))
	}
	if images.calls != 1 || containers.calls != 1 || len(k.evicted) != 0 {
		t.Errorf("reclaims images %d containers %d, evictions %v", images.calls, containers.calls, k.evicted)
	}
	if !m.IsUnderDiskPressure() {
		t.Error("DiskPressure is reported while the threshold was met")
	}
	if ok, _, msg := m.AdmitPod(pod("new", 0, mem("1Gi"), mem("1Gi"))); ok || msg != "The node had condition: [DiskPressure]. " {
		t.Errorf("admitted a pod under disk pressure: %v %q", ok, msg)
	}

	// Reclaim does not free enough: the pod using the disk is evicted. (10% of 100Gi is
	// 10737418400 bytes, not 10Gi: float32 percentages, as upstream.)
	s.summaries = []*statsapi.Summary{summaryAt(t0.Add(time.Second), "2Gi", "5Gi", stats...)}
	if _, evicted := m.Synchronize(context.Background()); len(evicted) != 1 || evicted[0].Name != "user" {
		t.Fatalf("evicted %v, want user", evicted)
	}
	if want := "The node was low on resource: ephemeral-storage. Threshold quantity: 10737418400, available: 5Gi. Container c was using 1025Mi, request is 0, has larger consumption of ephemeral-storage. "; k.evicted[0].message != want {
		t.Errorf("message %q\nwant %q", k.evicted[0].message, want)
	}
}

func TestSynchronizeLocalStorage(t *testing.T) {
	over := pod("over", 0, nil, storage("16Mi"))
	also := pod("also", 0, nil, storage("16Mi"))
	within := pod("within", 0, nil, storage("16Mi"))
	critical := pod("critical", 0, nil, storage("16Mi"))
	critical.Annotations["kubernetes.io/config.source"] = "file"
	s := &fakeSummary{summaries: []*statsapi.Summary{summaryAt(t0, "2Gi", "50Gi",
		podStats(critical, "", "100Mi", "1Mi"), podStats(over, "", "20Mi", "1Mi"), podStats(within, "", "10Mi", "1Mi"), podStats(also, "", "30Mi", "1Mi"))}}
	m, k, r, _ := newTestManager(t, Settings{Hard: DefaultEvictionHard()}, s, fakePods{critical, over, within, also}, nil, nil)
	metrics := &fakeMetrics{evictions: map[string]int{}}
	m.deps.Metrics = metrics
	if _, evicted := m.Synchronize(context.Background()); fmt.Sprint(names(evicted)) != "[over also]" {
		t.Fatalf("evicted %v, want every pod over its limits but the critical one: [over also]", names(evicted))
	}
	want := eviction{pod: "over", grace: 0, message: `Container c exceeded its local ephemeral storage limit "16Mi". `}
	if len(k.evicted) != 2 || k.evicted[0] != want {
		t.Errorf("evictions %+v, want %+v first (no DisruptionTarget, as upstream)", k.evicted, want)
	}
	if len(r.events) != 2 || r.events[0] != `over Evicted: Container c exceeded its local ephemeral storage limit "16Mi". ` {
		t.Errorf("events %q", r.events)
	}
	if fmt.Sprint(metrics.evictions) != "map[ephemeralcontainerfs.limit:2]" {
		t.Errorf("kubelet_evictions %v", metrics.evictions)
	}
}

func TestSynchronizeSoftThresholdGracePeriods(t *testing.T) {
	p := pod("p", 0, nil, nil)
	p.Spec.TerminationGracePeriodSeconds = new(int64)
	*p.Spec.TerminationGracePeriodSeconds = 5
	long := pod("long", 10, nil, nil)
	stats := []statsapi.PodStats{podStats(p, "1Gi", "", ""), podStats(long, "1Gi", "", "")}
	s := &fakeSummary{summaries: []*statsapi.Summary{summaryAt(t0, "500Mi", "50Gi", stats...)}}
	m, k, _, clk := newTestManager(t, Settings{Soft: map[string]string{"memory.available": "1Gi"},
		SoftGracePeriod: map[string]string{"memory.available": "30s"}}, s, fakePods{long, p}, nil, nil)
	m.Synchronize(context.Background())
	if len(k.evicted) != 0 || !m.IsUnderMemoryPressure() {
		t.Fatalf("evicted %v before the grace period (pressure %v)", k.evicted, m.IsUnderMemoryPressure())
	}
	clk.Step(30 * time.Second)
	s.summaries = []*statsapi.Summary{summaryAt(t0.Add(30*time.Second), "500Mi", "50Gi", stats...)}
	m.Synchronize(context.Background())
	if len(k.evicted) != 1 || k.evicted[0].pod != "p" || k.evicted[0].grace != 5 {
		t.Errorf("evictions %+v, want p with min(evictionMaxPodGracePeriod 20, its 5 s)", k.evicted)
	}
}

func TestSynchronizeWithoutStats(t *testing.T) {
	s := &fakeSummary{err: errors.New("runtime down")}
	m, k, _, _ := newTestManager(t, Settings{Hard: DefaultEvictionHard()}, s, fakePods{pod("a", 0, nil, nil)}, nil, nil)
	if summary, evicted := m.Synchronize(context.Background()); summary != nil || evicted != nil || len(k.evicted) != 0 {
		t.Error("acted without stats")
	}
	if m.IsUnderMemoryPressure() || m.IsUnderDiskPressure() {
		t.Error("pressure without stats")
	}
}

func TestRunEvictsAndWaitsForCleanup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bestEffort := pod("besteffort", 0, nil, nil)
		s := &fakeSummary{summaries: []*statsapi.Summary{summaryAt(t0, "50Mi", "50Gi", podStats(bestEffort, "2Gi", "", ""))}}
		pods := &gonePods{pods: fakePods{bestEffort}}
		k := &fakeKiller{}
		m, err := New(Config{Thresholds: mustParse(Settings{Hard: map[string]string{"memory.available": "100Mi"}})},
			Deps{Clock: clock.RealClock{}, Summary: s, Pods: pods, Killer: k, Recorder: &fakeRecorder{}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { m.Run(ctx); close(done) }()
		synctest.Wait()
		if len(k.evicted) != 1 {
			t.Fatalf("evictions %v", k.evicted)
		}
		// The evicted pod is still active: Run waits for its cleanup (polling every second, at
		// most 30 s) before it observes again.
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := pods.calls(); n < 5 || n > 7 {
			t.Errorf("active pods listed %d times in 5 s of cleanup wait", n)
		}
		pods.clear()
		time.Sleep(time.Second)
		synctest.Wait()
		// Cleaned up: the next observation comes after the monitoring period (10 s).
		s.mu.Lock()
		s.summaries = []*statsapi.Summary{summaryAt(t0.Add(time.Minute), "50Mi", "50Gi")}
		s.mu.Unlock()
		time.Sleep(DefaultMonitoringPeriod)
		synctest.Wait()
		if m.IsUnderMemoryPressure() != true {
			t.Error("MemoryPressure lost")
		}
		cancel()
		<-done
	})
}

// gonePods lists its pods until cleared, counting the calls.
type gonePods struct {
	mu    sync.Mutex
	pods  fakePods
	count int
}

func (g *gonePods) ActivePods() []*v1.Pod {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.count++
	return g.pods
}

func (g *gonePods) calls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.count
}

func (g *gonePods) clear() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pods = nil
}
