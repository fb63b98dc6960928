package syncloop

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// WorkQueue holds the time each pod is next due for a sync (upstream's queue.WorkQueue). The pod
// workers enqueue; the sync tick takes what is due.
type WorkQueue struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	due   map[types.UID]time.Time
}

// NewWorkQueue returns an empty queue.
func NewWorkQueue(clk clock.PassiveClock) *WorkQueue {
	return &WorkQueue{clock: clk, due: map[types.UID]time.Time{}}
}

// Enqueue makes the pod due after delay; a later enqueue replaces an earlier one.
func (q *WorkQueue) Enqueue(uid types.UID, delay time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.due[uid] = q.clock.Now().Add(delay)
}

// GetWork removes and returns the pods that are due.
func (q *WorkQueue) GetWork() []types.UID {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	var out []types.UID
	for uid, t := range q.due {
		if !t.After(now) {
			out = append(out, uid)
			delete(q.due, uid)
		}
	}
	return out
}
