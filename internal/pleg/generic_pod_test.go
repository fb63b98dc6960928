package pleg

import (
	"errors"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
)

func TestGenericMetrics(t *testing.T) {
	h := newHarness(t, 0, pod("a", ctr("c1", running)))
	m := &fakeMetrics{}
	h.pleg.metrics = m
	h.rt.onCall = func() { h.clock.Step(300 * time.Millisecond) }
	h.pleg.Relist(t.Context()) // GetPods and GetPodStatus: 600ms
	h.clock.Step(400 * time.Millisecond)
	h.rt.set(func(f *fakeRuntime) { f.listErr = errors.New("down") })
	h.pleg.Relist(t.Context()) // starts 1s after the first
	h.pleg.Relist(t.Context()) // starts 1.3s after the first: failed relists do not count as previous
	if want := []time.Duration{600 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond}; !slices.Equal(m.relists, want) {
		t.Errorf("relist durations %v, want %v", m.relists, want)
	}
	if want := []time.Duration{time.Second, 1300 * time.Millisecond}; !slices.Equal(m.intervals, want) {
		t.Errorf("relist intervals %v, want %v", m.intervals, want)
	}
}

func TestNewWithMetrics(t *testing.T) {
	m := &fakeMetrics{}
	g, err := New(Config{Runtime: &fakeRuntime{}, Cache: NewCache(), Metrics: m, Clock: testingclock.NewFakeClock(t0)})
	if err != nil || g.metrics != m {
		t.Fatalf("New: %v, metrics %v", err, g.metrics)
	}
}

func TestGenericRelistPod(t *testing.T) {
	h := newHarness(t, 0, pod("a", sbx("s1", running), ctr("c1", running)))
	h.pleg.Relist(t.Context())
	h.expect(t, "relist", []Event{ev("a", ContainerStarted, "c1"), ev("a", ContainerStarted, "s1")}, []types.UID{"a"})

	h.clock.Step(time.Second)
	h.setPods(pod("a", sbx("s1", running), ctr("c1", exited), ctr("c2", running)))
	h.pleg.relistPod(t.Context(), "a", "", "")
	h.expect(t, "relistPod", []Event{ev("a", ContainerDied, "c1"), ev("a", ContainerStarted, "c2")}, []types.UID{"a"})
	if entry, global := modified(h.cache, "a"); !entry.Equal(t0.Add(time.Second)) || !global.Equal(t0) {
		t.Errorf("entry %v, global %v; want the inspection's start and the relist's", entry, global)
	}
	if s, _ := h.cache.Get("a"); s.Name != "pod-a" || s.Namespace != "default" {
		t.Errorf("inspected as %s/%s, want the listing's name", s.Namespace, s.Name)
	}
	h.pleg.relistPod(t.Context(), "a", "", "")
	h.expect(t, "again, nothing changed", nil, []types.UID{"a"})
	h.pleg.Relist(t.Context())
	h.expect(t, "relist agrees", nil, nil)

	// Inspection failure: the error is cached, the next relist retries and syncs the pod.
	boom := errors.New("boom")
	h.clock.Step(time.Second)
	h.rt.set(func(f *fakeRuntime) { f.statusErr["a"] = boom })
	h.pleg.relistPod(t.Context(), "a", "", "")
	h.expect(t, "failed", nil, []types.UID{"a"})
	if _, err := h.cache.Get("a"); !errors.Is(err, boom) {
		t.Errorf("cached error %v, want %v", err, boom)
	}
	h.rt.set(func(f *fakeRuntime) { delete(f.statusErr, "a") })
	h.pleg.Relist(t.Context())
	h.expect(t, "relist retries", []Event{{ID: "a", Type: PodSync}}, []types.UID{"a"})

	// A requested reinspection is served by relistPod too.
	h.pleg.RequestReinspect("a")
	h.pleg.relistPod(t.Context(), "a", "", "")
	h.expect(t, "reinspect", []Event{{ID: "a", Type: PodSync}}, []types.UID{"a"})
	h.pleg.Relist(t.Context())
	h.expect(t, "request consumed", nil, nil)

	// Gone: an empty entry until a relist confirms it.
	h.setPods()
	h.pleg.relistPod(t.Context(), "a", "", "")
	h.expect(t, "gone", []Event{ev("a", ContainerRemoved, "c1"), ev("a", ContainerDied, "c2"), ev("a", ContainerRemoved, "c2"),
		ev("a", ContainerDied, "s1"), ev("a", ContainerRemoved, "s1")}, []types.UID{"a"})
	if !cached(h.cache, "a") {
		t.Error("gone pod has no entry")
	}
	h.pleg.Relist(t.Context())
	h.expect(t, "relist confirms", nil, nil)
	if cached(h.cache, "a") {
		t.Error("gone pod still cached after a relist")
	}
	if uid, ok := h.pleg.podOf("c1"); ok {
		t.Errorf("podOf(c1) = %q after the pod went", uid)
	}
}

func TestGenericPodOf(t *testing.T) {
	h := newHarness(t, 0, pod("a", sbx("s1", running), ctr("c1", running)), pod("b", ctr("c2", running)))
	h.pleg.Relist(t.Context())
	for id, want := range map[string]types.UID{"s1": "a", "c1": "a", "c2": "b", "zz": ""} {
		if uid, _ := h.pleg.podOf(id); uid != want {
			t.Errorf("podOf(%s) = %q, want %q", id, uid, want)
		}
	}
}
