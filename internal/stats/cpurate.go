package stats

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// cpuSample is a cumulative CPU reading and when it was taken.
type cpuSample struct {
	usage uint64 // core-nanoseconds
	at    time.Time
}

// nanoCores is the mean CPU rate between two cumulative samples, in nano-cores (1e9 = one core
// busy). ok is false when the window is not positive or the counter went back (a new cgroup or
// process under the same key).
func nanoCores(prev, cur cpuSample) (rate uint64, ok bool) {
	window := cur.at.Sub(prev.at)
	if window <= 0 || cur.usage < prev.usage {
		return 0, false
	}
	return uint64(float64(cur.usage-prev.usage) / float64(window) * float64(time.Second)), true
}

// rateTracker turns cumulative CPU readings into usageNanoCores, as cadvisor (for cgroups) and
// upstream's CRI stats provider (for runtimes that leave UsageNanoCores out) do: it keeps the
// previous sample of each key and reports the rate since it. A reading less than minWindow
// after the kept sample reports the last rate and keeps the older sample, so that close calls
// from several clients do not compute rates over milliseconds. Keys not observed for maxAge
// are dropped by prune.
type rateTracker struct {
	clock     clock.PassiveClock
	minWindow time.Duration
	maxAge    time.Duration

	mu      sync.Mutex
	entries map[string]*rateEntry
}

type rateEntry struct {
	base cpuSample
	rate *uint64 // last computed; nil before the second sample
	seen time.Time
}

func newRateTracker(clk clock.PassiveClock, minWindow, maxAge time.Duration) *rateTracker {
	return &rateTracker{clock: clk, minWindow: minWindow, maxAge: maxAge, entries: make(map[string]*rateEntry)}
}

// observe records cur for key and returns the rate, nil while there is none yet.
func (t *rateTracker) observe(key string, cur cpuSample) *uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clock.Now()
	e, ok := t.entries[key]
	if !ok {
		t.entries[key] = &rateEntry{base: cur, seen: now}
		return nil
	}
	e.seen = now
	if cur.usage < e.base.usage || cur.at.Before(e.base.at) {
		*e = rateEntry{base: cur, seen: now} // restarted: start over
		return nil
	}
	if cur.at.Sub(e.base.at) >= t.minWindow {
		if r, ok := nanoCores(e.base, cur); ok {
			e.rate = &r
		}
		e.base = cur
	}
	if e.rate == nil {
		return nil
	}
	r := *e.rate
	return &r
}

// prune drops the keys not observed for maxAge.
func (t *rateTracker) prune() {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clock.Now()
	for k, e := range t.entries {
		if now.Sub(e.seen) > t.maxAge {
			delete(t.entries, k)
		}
	}
}
