package pleg

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/container"
)

// benchPods is a listing of n pods, each with a ready sandbox and two running containers. Each
// call builds new objects, as every relist does.
func benchPods(n int) []*container.Pod {
	pods := make([]*container.Pod, 0, n)
	for i := range n {
		uid := types.UID(fmt.Sprintf("uid-%03d", i))
		pods = append(pods, pod(uid, sbx(string(uid)+"-sb", running),
			ctr(string(uid)+"-app", running), ctr(string(uid)+"-log", running)))
	}
	return pods
}

// withChanges returns a copy of the listing of benchPods(n) in which a few things happened: two
// containers exited, one pod is gone and a new one appeared.
func withChanges(n int) []*container.Pod {
	pods := benchPods(n)
	pods[10].Containers[0].State = exited
	pods[50].Containers[1].State = exited
	pods = append(pods[:70], pods[71:]...)
	return append(pods, pod("uid-new", sbx("uid-new-sb", running), ctr("uid-new-app", created)))
}

// BenchmarkDiff measures the relist diff Generic runs every second over all pods.
func BenchmarkDiff(b *testing.B) {
	old := listing(benchPods(100)...)
	for _, c := range []struct {
		name        string
		cur         map[types.UID]*container.Pod
		wantChanged int
	}{
		{"steady/100pods", listing(benchPods(100)...), 0},
		{"changes/100pods", listing(withChanges(100)...), 4},
	} {
		b.Run(c.name, func(b *testing.B) {
			if _, changed := Diff(old, c.cur); len(changed) != c.wantChanged {
				b.Fatalf("%d pods changed, want %d", len(changed), c.wantChanged)
			}
			b.ReportAllocs()
			for b.Loop() {
				Diff(old, c.cur)
			}
		})
	}
}

// newBenchGeneric returns a Generic on a fake runtime listing pods, after its first relist.
func newBenchGeneric(b *testing.B, pods []*container.Pod) (*Generic, *fakeRuntime) {
	b.Helper()
	rt := &fakeRuntime{pods: pods, ips: map[types.UID][]string{}, statusErr: map[types.UID]error{}}
	g, err := New(Config{Clock: testingclock.NewFakeClock(t0), Runtime: rt, Cache: NewCache()})
	if err != nil {
		b.Fatal(err)
	}
	g.Relist(b.Context())
	drainEvents(g)
	rt.calls()
	return g, rt
}

func drainEvents(g *Generic) int {
	n := 0
	for {
		select {
		case <-g.Watch():
			n++
		default:
			return n
		}
	}
}

// BenchmarkGenericRelist measures one periodic relist of 100 pods (the fake runtime's listing
// included): steady, and alternating between two listings that differ in a few pods, whose
// inspections, cache writes and events are then part of each relist.
func BenchmarkGenericRelist(b *testing.B) {
	b.Run("steady/100pods", func(b *testing.B) {
		g, rt := newBenchGeneric(b, benchPods(100))
		ctx := b.Context()
		b.ReportAllocs()
		for b.Loop() {
			g.Relist(ctx)
		}
		if n, inspected := rt.calls(); n == 0 || len(inspected) != 0 || drainEvents(g) != 0 {
			b.Fatalf("steady relists inspected %v or sent events", inspected)
		}
	})
	b.Run("changes/100pods", func(b *testing.B) {
		listings := [2][]*container.Pod{benchPods(100), withChanges(100)}
		g, rt := newBenchGeneric(b, listings[0])
		ctx := b.Context()
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			i++
			rt.set(func(f *fakeRuntime) { f.pods = listings[i%2] })
			g.Relist(ctx)
			if drainEvents(g) == 0 {
				b.Fatal("no events")
			}
			rt.calls()
		}
	})
}

// BenchmarkGenericRelistPod measures the on-demand inspection of one pod the Evented PLEG runs
// for each container event (and for each pod worker waiting while the stream is up).
func BenchmarkGenericRelistPod(b *testing.B) {
	g, rt := newBenchGeneric(b, benchPods(100))
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		g.relistPod(ctx, "uid-042", "pod-uid-042", "default")
		rt.calls()
	}
	if drainEvents(g) != 0 {
		b.Fatal("an unchanged pod sent events")
	}
}

// BenchmarkEventPod measures naming the pod of one CRI container event, for each way the
// runtime may name it.
func BenchmarkEventPod(b *testing.B) {
	labels := map[string]string{container.PodUIDLabel: "u1", container.PodNameLabel: "web", container.PodNamespaceLabel: "ns"}
	for _, c := range []struct {
		name string
		ev   *runtimeapi.ContainerEventResponse
	}{
		{"sandbox metadata", cevent("u1", "c1", evStarted, t0)},
		{"sandbox labels", &runtimeapi.ContainerEventResponse{ContainerId: "c1",
			PodSandboxStatus: &runtimeapi.PodSandboxStatus{Labels: labels}}},
		{"container labels", &runtimeapi.ContainerEventResponse{ContainerId: "c1",
			ContainersStatuses: []*runtimeapi.ContainerStatus{{Id: "c0"}, {Id: "c1", Labels: labels}}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			if uid, _, _ := eventPod(c.ev); uid != "u1" {
				b.Fatalf("eventPod named %q", uid)
			}
			b.ReportAllocs()
			for b.Loop() {
				eventPod(c.ev)
			}
		})
	}
}

// BenchmarkEventedTick measures the decisions of one Evented loop tick while the stream is up
// (relist due? healthy?) and the bookkeeping of one relist.
func BenchmarkEventedTick(b *testing.B) {
	last := t0
	s := loopState{stream: streamUp, lastStart: last, lastOK: true}
	now := last.Add(time.Second)
	b.ReportAllocs()
	for b.Loop() {
		if relistDue(s, now, testTiming) {
			b.Fatal("relist due while the stream is up")
		}
		if err := health(now, &last, true, time.Time{}, testTiming); err != nil {
			b.Fatal(err)
		}
		s = afterRelist(s, last, true, testTiming)
	}
}

// BenchmarkPodFromStatus measures deriving a pod's listing from its inspection, done for every
// on-demand inspection.
func BenchmarkPodFromStatus(b *testing.B) {
	rt := &fakeRuntime{pods: benchPods(1)}
	s, err := rt.GetPodStatus(b.Context(), "uid-000", "pod-uid-000", "default")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		podFromStatus(s)
	}
}

// BenchmarkCache measures the pod cache's Set (each inspection) and Get / GetNewerThan (each
// pod worker sync) with 100 pods cached.
func BenchmarkCache(b *testing.B) {
	c := NewCache()
	for i := range 100 {
		uid := types.UID(fmt.Sprintf("uid-%03d", i))
		c.Set(uid, status(uid, "10.0.0.1"), nil, t0)
	}
	c.UpdateTime(t0)
	st := status("uid-042", "10.0.0.1")
	b.Run("Set", func(b *testing.B) {
		ts := t0
		b.ReportAllocs()
		for b.Loop() {
			ts = ts.Add(time.Nanosecond)
			c.Set("uid-042", st, nil, ts)
		}
	})
	b.Run("Get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.Get("uid-042")
		}
	})
	b.Run("GetNewerThan/ready", func(b *testing.B) {
		ctx := b.Context()
		minTime := t0.Add(-time.Second)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.GetNewerThan(ctx, "uid-042", minTime); err != nil {
				b.Fatal(err)
			}
		}
	})
}
