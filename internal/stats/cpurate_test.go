package stats

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestNanoCores(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name      string
		prev, cur cpuSample
		want      uint64
		wantOK    bool
	}{
		{name: "half a core", prev: cpuSample{1e9, t0}, cur: cpuSample{6e9, t0.Add(10 * time.Second)}, want: 5e8, wantOK: true},
		{name: "two cores", prev: cpuSample{0, t0}, cur: cpuSample{2e9, t0.Add(time.Second)}, want: 2e9, wantOK: true},
		{name: "idle", prev: cpuSample{7, t0}, cur: cpuSample{7, t0.Add(time.Second)}, want: 0, wantOK: true},
		{name: "no window", prev: cpuSample{1, t0}, cur: cpuSample{2, t0}},
		{name: "counter went back", prev: cpuSample{10, t0}, cur: cpuSample{2, t0.Add(time.Second)}},
	}
	for _, tt := range tests {
		got, ok := nanoCores(tt.prev, tt.cur)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: nanoCores = %d, %v; want %d, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestRateTracker(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	tr := newRateTracker(clk, time.Second, 10*time.Minute)
	at := func(d time.Duration) time.Time { return time.Unix(1000, 0).Add(d) }
	deref := func(p *uint64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	steps := []struct {
		name  string
		usage uint64
		at    time.Duration
		want  any
	}{
		{name: "first sample has no rate", usage: 1e9, at: 0, want: nil},
		{name: "within the minimum window: still none", usage: 1e9 + 1e6, at: 500 * time.Millisecond, want: nil},
		{name: "10s later, 5 core-seconds more", usage: 6e9, at: 10 * time.Second, want: uint64(5e8)},
		{name: "a close call reports the previous rate", usage: 6e9 + 9e8, at: 10*time.Second + 100*time.Millisecond, want: uint64(5e8)},
		{name: "the window runs from the kept sample", usage: 8e9, at: 14 * time.Second, want: uint64(5e8)},
		{name: "counter reset (a new cgroup) starts over", usage: 1e6, at: 15 * time.Second, want: nil},
		{name: "and gets a rate again", usage: 1e6 + 3e9, at: 17 * time.Second, want: uint64(15e8)},
	}
	for _, s := range steps {
		got := tr.observe("k", cpuSample{usage: s.usage, at: at(s.at)})
		if deref(got) != s.want {
			t.Fatalf("%s: got %v, want %v", s.name, deref(got), s.want)
		}
	}
	tr.observe("other", cpuSample{usage: 1, at: at(0)})
	clk.SetTime(clk.Now().Add(9 * time.Minute))
	tr.observe("k", cpuSample{usage: 1e6 + 4e9, at: at(18 * time.Second)})
	clk.SetTime(clk.Now().Add(2 * time.Minute))
	tr.prune()
	if _, ok := tr.entries["other"]; ok {
		t.Error("a key not seen for 11 minutes was kept")
	}
	if _, ok := tr.entries["k"]; !ok {
		t.Error("a key seen 2 minutes ago was dropped")
	}
}
