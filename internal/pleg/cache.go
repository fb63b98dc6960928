package pleg

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/nodelet/nodelet/internal/container"
)

// Cache holds the latest PodStatus (or inspection error) of every pod the runtime knows, as
// upstream's kubecontainer.Cache. Each entry carries the time the runtime was asked for it; the
// cache's global timestamp, advanced by UpdateTime after every complete relist, says that every
// entry is at least that fresh, and that a pod without an entry has nothing in the runtime.
//
// Statuses are shared, not copied: callers must not modify what Get or GetNewerThan return.
// A Cache is safe for concurrent use. The zero value is not usable; call NewCache.
type Cache struct {
	mu   sync.Mutex
	pods map[types.UID]*cacheEntry
	// timestamp is the global timestamp; zero until the first UpdateTime.
	timestamp time.Time
	// global is closed, and replaced, whenever the global timestamp advances.
	global chan struct{}
	// waiters holds, per pod, a channel closed on the pod's next Set, while GetNewerThan waits.
	waiters map[types.UID]*waiter
	// waits receives, without blocking, when a GetNewerThan call starts to wait (see Waits).
	waits chan struct{}
}

type cacheEntry struct {
	status   *container.PodStatus
	err      error
	modified time.Time
}

// waiter is a wake-up channel shared by the GetNewerThan calls waiting on one pod.
type waiter struct {
	ch chan struct{}
	n  int // calls waiting on ch
	// minTime is the latest minTime of the calls that waited on ch.
	minTime time.Time
}

// NewCache returns an empty cache with no global timestamp.
func NewCache() *Cache {
	return &Cache{
		pods:    map[types.UID]*cacheEntry{},
		global:  make(chan struct{}),
		waiters: map[types.UID]*waiter{},
		waits:   make(chan struct{}, 1),
	}
}

// emptyStatus is what the cache says about a pod without an entry: the runtime has nothing of it.
func emptyStatus(uid types.UID) *container.PodStatus {
	return &container.PodStatus{ID: uid}
}

// Get returns the pod's cached status and inspection error, without waiting. A pod without an
// entry has an empty status with only ID set, and no error.
func (c *Cache) Get(uid types.UID) (*container.PodStatus, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.pods[uid]; ok {
		return e.status, e.err
	}
	return emptyStatus(uid), nil
}

// Set stores the pod's status and inspection error as of timestamp (the time before the runtime
// was asked), unless the cache already holds a strictly newer entry for the pod; an entry of the
// same time is replaced, so that a retry within the same instant wins. It reports whether it
// stored, and wakes GetNewerThan calls waiting on the pod. A nil status is stored as an empty
// status with ID set.
func (c *Cache) Set(uid types.UID, status *container.PodStatus, err error, timestamp time.Time) bool {
	if status == nil {
		status = emptyStatus(uid)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.pods[uid]; ok && e.modified.After(timestamp) {
		return false
	}
	c.pods[uid] = &cacheEntry{status: status, err: err, modified: timestamp}
	if w, ok := c.waiters[uid]; ok {
		close(w.ch)
		delete(c.waiters, uid)
	}
	return true
}

// Delete forgets the pod: it has nothing left in the runtime.
func (c *Cache) Delete(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pods, uid)
}

// UpdateTime advances the global timestamp to t, declaring every entry (and every absence) fresh
// as of t, and wakes all GetNewerThan calls. It is called after a relist has updated every pod
// that changed. A t not after the current global timestamp is ignored.
func (c *Cache) UpdateTime(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !t.After(c.timestamp) {
		return
	}
	c.timestamp = t
	close(c.global)
	c.global = make(chan struct{})
}

// newerThan returns the pod's entry if the cache knows it as of a time after minTime:
// the pod's entry was stored with a later timestamp, or the global timestamp is later (then an
// absent pod has an empty status). Callers hold c.mu.
func (c *Cache) newerThan(uid types.UID, minTime time.Time) (*cacheEntry, bool) {
	e, ok := c.pods[uid]
	globalNewer := !c.timestamp.IsZero() && c.timestamp.After(minTime)
	switch {
	case ok && (globalNewer || e.modified.After(minTime)):
		return e, true
	case !ok && globalNewer:
		return &cacheEntry{status: emptyStatus(uid)}, true
	}
	return nil, false
}

// GetNewerThan returns the pod's status and inspection error once the cache knows the pod as of a
// time strictly after minTime: its entry is newer, or the global timestamp is (then it returns the
// entry it has, or an empty status with ID set). It blocks until then, or until ctx ends, when it
// returns a nil status and ctx's error.
//
// Each time the call starts to wait it signals Waits, also when a Set that was not new enough woke
// it and it goes back to waiting: a PLEG that read Waiting in between (the waiter was deregistered
// by that Set) would otherwise not see it again until its next tick, up to a second later.
func (c *Cache) GetNewerThan(ctx context.Context, uid types.UID, minTime time.Time) (*container.PodStatus, error) {
	for {
		c.mu.Lock()
		if e, ok := c.newerThan(uid, minTime); ok {
			c.mu.Unlock()
			return e.status, e.err
		}
		w, ok := c.waiters[uid]
		if !ok {
			w = &waiter{ch: make(chan struct{})}
			c.waiters[uid] = w
		}
		w.n++
		if minTime.After(w.minTime) {
			w.minTime = minTime
		}
		global := c.global
		c.mu.Unlock()
		select {
		case c.waits <- struct{}{}:
		default:
		}

		var done bool
		select {
		case <-w.ch:
		case <-global:
		case <-ctx.Done():
			done = true
		}

		c.mu.Lock()
		w.n--
		if w.n == 0 && c.waiters[uid] == w {
			delete(c.waiters, uid)
		}
		c.mu.Unlock()
		if done {
			return nil, ctx.Err()
		}
	}
}

// Waits returns a channel that receives (at most one pending value) when a GetNewerThan call
// starts to wait: a PLEG that can inspect a pod on demand (Evented) then looks at Waiting. Nothing
// has to read it.
func (c *Cache) Waits() <-chan struct{} {
	return c.waits
}

// Waiting returns the pods that GetNewerThan calls are waiting on and that the cache cannot
// answer yet, each with the latest minTime those calls wait past: a status of the pod stored with
// a later timestamp releases them all.
func (c *Cache) Waiting() map[types.UID]time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[types.UID]time.Time, len(c.waiters))
	for uid, w := range c.waiters {
		if _, ok := c.newerThan(uid, w.minTime); w.n > 0 && !ok {
			out[uid] = w.minTime
		}
	}
	return out
}
