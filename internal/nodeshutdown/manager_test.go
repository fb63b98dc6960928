package nodeshutdown

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// fakeLogind is logind: its InhibitDelayMaxSec, the drop-in nodelet writes (applied at once
// unless stuck), the inhibitors taken and the PrepareForShutdown signals the test sends.
type fakeLogind struct {
	mu       sync.Mutex
	delay    time.Duration
	stuck    bool // a drop-in that sorts later keeps the delay down
	raised   []time.Duration
	inhibits int
	events   chan bool
}

var _ Logind = (*fakeLogind)(nil)

func (f *fakeLogind) InhibitDelay() (time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.delay, nil
}

func (f *fakeLogind) RaiseInhibitDelay(d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.raised = append(f.raised, d)
	if !f.stuck {
		f.delay = d
	}
	return nil
}

func (f *fakeLogind) Inhibit() (*os.File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inhibits++
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	_ = w.Close()
	return r, nil
}

func (f *fakeLogind) WatchShutdown() (<-chan bool, error) { return f.events, nil }
func (f *fakeLogind) Close() error                        { return nil }

// fakeKiller terminates each pod after its own time (never, for a pod not in takes).
type fakeKiller struct {
	mu     sync.Mutex
	clk    clock.Clock
	takes  map[string]time.Duration
	killed map[types.UID]time.Time
	log    []string // "<pod> grace=<s> at=<s since start>"
	start  time.Time
}

func (k *fakeKiller) KillPod(pod *v1.Pod, grace int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.clk.Now()
	k.killed[pod.UID] = now
	k.log = append(k.log, pod.Name+" grace="+time.Duration(grace*int64(time.Second)).String()+" at="+now.Sub(k.start).String())
}

func (k *fakeKiller) Terminated(uid types.UID) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	at, ok := k.killed[uid]
	if !ok {
		return false
	}
	take, ok := k.takes[string(uid)]
	return ok && !k.clk.Now().Before(at.Add(take))
}

type podList []*v1.Pod

func (p podList) ActivePods() []*v1.Pod { return p }

type events struct {
	mu   sync.Mutex
	list []string
}

func (e *events) NodeEventf(_, reason, format string, _ ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, reason+": "+format)
}

func shutdownPod(name string, priority int32, grace int64) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)},
		Spec: v1.PodSpec{Priority: &priority, TerminationGracePeriodSeconds: &grace}}
}

// TestShutdownByPriority: logind's delay is raised to the bands' sum, the inhibitor taken; on
// PrepareForShutdown the node is shutting down (admission refuses), the regular pods are killed
// first with their grace periods, the critical ones once the regular band is done or its time
// is up, and the inhibitor is released after.
func TestShutdownByPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.RealClock{}
		l := &fakeLogind{delay: 5 * time.Second, events: make(chan bool)}
		k := &fakeKiller{clk: clk, start: clk.Now(), killed: map[types.UID]time.Time{},
			takes: map[string]time.Duration{"web": 3 * time.Second, "critical": time.Second}} // "stuck" never ends
		ev := &events{}
		var shutting []bool
		m, err := New(Config{Periods: Periods(30*time.Second, 10*time.Second, nil)}, Deps{
			Logind: func() (Logind, error) { return l, nil },
			Pods:   podList{shutdownPod("web", 0, 5), shutdownPod("stuck", 100, 60), shutdownPod("critical", SystemCriticalPriority, 30)},
			Killer: k, Recorder: ev, Clock: clk, ShuttingDown: func(v bool) { shutting = append(shutting, v) }})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { m.Run(ctx); close(done) }()
		time.Sleep(time.Second) // logind takes the raised delay within its 0.1 s retry
		synctest.Wait()
		if !slices.Equal(l.raised, []time.Duration{30 * time.Second}) || l.inhibits != 1 {
			t.Fatalf("logind: raised %v, %d inhibitors; want 30s raised and one inhibitor", l.raised, l.inhibits)
		}
		if ok, _, _ := m.Admit(nil); !ok {
			t.Error("a pod refused before any shutdown")
		}

		k.start = clk.Now()
		l.events <- true
		synctest.Wait()
		if !m.ShuttingDown() {
			t.Error("not shutting down after PrepareForShutdown(true)")
		}
		if ok, reason, msg := m.Admit(nil); ok || reason != AdmitReason || msg != AdmitMessage {
			t.Errorf("Admit while shutting down = %v %q %q", ok, reason, msg)
		}
		time.Sleep(time.Minute) // every band's time is up
		synctest.Wait()
		want := []string{"web grace=5s at=0s", "stuck grace=20s at=0s", "critical grace=10s at=20s"}
		if !slices.Equal(k.log, want) {
			t.Errorf("kills %q, want %q", k.log, want)
		}
		m.mu.Lock()
		released := m.lock == nil
		m.mu.Unlock()
		if !released {
			t.Error("the inhibitor is still held after the pods were terminated")
		}
		if !slices.Equal(shutting, []bool{true}) || len(ev.list) != 1 || ev.list[0] != "NodeShutdown: Shutdown manager detected shutdown event" {
			t.Errorf("shutting down %v, events %q", shutting, ev.list)
		}

		// A cancelled shutdown: the node runs on, with a new inhibitor.
		l.events <- false
		synctest.Wait()
		if m.ShuttingDown() || l.inhibits != 2 {
			t.Errorf("after the cancellation: shutting down %v, %d inhibitors taken (want 2)", m.ShuttingDown(), l.inhibits)
		}
		cancel()
		<-done
	})
}

// TestShutdownWithoutLogind: without logind (this host has no systemd) Run says so and
// returns; nothing is refused. With no band nothing is even tried.
func TestShutdownWithoutLogind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tried := 0
		deps := Deps{Logind: func() (Logind, error) { tried++; return nil, errors.New("no system bus") },
			Pods: podList{}, Killer: &fakeKiller{}, Recorder: &events{}, Clock: clock.RealClock{}}
		m, err := New(Config{Periods: Periods(30*time.Second, 0, nil)}, deps)
		if err != nil {
			t.Fatal(err)
		}
		m.Run(t.Context())
		if tried != 1 || m.ShuttingDown() {
			t.Errorf("tried %d times, shutting down %v", tried, m.ShuttingDown())
		}
		off, err := New(Config{}, deps)
		if err != nil {
			t.Fatal(err)
		}
		off.Run(t.Context())
		if tried != 1 {
			t.Error("logind asked for with graceful shutdown off")
		}
	})
}

// TestShutdownInhibitDelayStuck: a logind that keeps InhibitDelayMaxSec below the budget is an
// error that says where nodelet wrote and what may override it; no inhibitor is taken.
func TestShutdownInhibitDelayStuck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &fakeLogind{delay: 5 * time.Second, stuck: true, events: make(chan bool)}
		m, err := New(Config{Periods: Periods(30*time.Second, 0, nil)}, Deps{Logind: func() (Logind, error) { return l, nil },
			Pods: podList{}, Killer: &fakeKiller{}, Recorder: &events{}, Clock: clock.RealClock{}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.watch(t.Context())
		if err == nil || l.inhibits != 0 {
			t.Fatalf("watch = %v with %d inhibitors, want an error and none", err, l.inhibits)
		}
		for _, s := range []string{"5s", "30s", "/etc/systemd/logind.conf.d/99-kubelet.conf"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("the error %q does not say %q", err, s)
			}
		}
	})
}

// TestShutdownReconnects: once the inhibitor was taken, a lost connection to logind (the
// system bus restarted) is made again a second later, with a new inhibitor, for as long as
// nodelet runs; only a first connection that cannot take it gives up.
func TestShutdownReconnects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var conns []*fakeLogind
		connect := func() (Logind, error) {
			mu.Lock()
			defer mu.Unlock()
			if len(conns) == 1 {
				conns = append(conns, nil)
				return nil, errors.New("the system bus is restarting")
			}
			l := &fakeLogind{delay: time.Hour, events: make(chan bool)}
			conns = append(conns, l)
			return l, nil
		}
		m, err := New(Config{Periods: Periods(30*time.Second, 0, nil)}, Deps{Logind: connect,
			Pods: podList{}, Killer: &fakeKiller{}, Recorder: &events{}, Clock: clock.RealClock{}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { m.Run(ctx); close(done) }()
		synctest.Wait()
		close(conns[0].events) // the connection is lost
		time.Sleep(3 * time.Second)
		synctest.Wait()
		mu.Lock()
		n := len(conns)
		last := conns[n-1]
		mu.Unlock()
		if n != 3 || last == nil || last.inhibits != 1 {
			t.Fatalf("%d connections (the last %+v), want a failed one then a third holding an inhibitor", n, last)
		}
		m.mu.Lock()
		held := m.lock != nil
		m.mu.Unlock()
		if !held {
			t.Error("no inhibitor held after reconnecting")
		}
		cancel()
		<-done
	})
}
