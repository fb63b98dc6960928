package syncloop

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
)

// removeConcurrency bounds the pods removed at once. One after the other, the removals of a
// burst of deleted pods took seconds (30 pods: 3× the runtime's own time in the benchmark).
const removeConcurrency = 8

// PodRemover removes a pod's sandboxes and containers, known only by its UID.
type PodRemover interface {
	RemovePodByUID(ctx context.Context, uid types.UID) error
}

// DirRemover removes a pod's directory.
type DirRemover interface {
	TearDown(uid types.UID) error
}

// removalGuard decides, when a removal's turn comes, whether the pod may still be removed and
// keeps it from starting again until release (the Dispatcher).
type removalGuard interface {
	claim(uid types.UID) bool
	release(uid types.UID)
}

// removal is one pod to clean up: its runtime objects (sandboxes, containers) if runtime, then
// its directory, then its status.
type removal struct {
	uid     types.UID
	runtime bool
	why     string
}

// remover removes pods on its own goroutines, removeConcurrency at a time: the sync loop and
// housekeeping hand it pods and go on. A pod is never removed twice at once: a pod handed in
// while queued is merged with the queued removal, and one handed in while its removal runs is
// dropped (the removal under way does the same work; a failure is retried by housekeeping).
type remover struct {
	pods     PodRemover
	dirs     DirRemover
	statuses StatusForgetter
	guard    removalGuard

	mu      sync.Mutex
	queue   []types.UID // FIFO of the queued pods
	queued  map[types.UID]removal
	running sets.Set[types.UID]
	// wake holds at most one token: "the queue is not empty".
	wake chan struct{}
}

func newRemover(pods PodRemover, dirs DirRemover, statuses StatusForgetter, guard removalGuard) *remover {
	return &remover{pods: pods, dirs: dirs, statuses: statuses, guard: guard,
		queued: map[types.UID]removal{}, running: sets.New[types.UID](), wake: make(chan struct{}, 1)}
}

// enqueue hands a pod over without waiting. It reports false when the pod's removal is already
// running.
func (r *remover) enqueue(rm removal) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running.Has(rm.uid) {
		return false
	}
	if q, ok := r.queued[rm.uid]; ok {
		q.runtime = q.runtime || rm.runtime
		r.queued[rm.uid] = q
		return true
	}
	r.queued[rm.uid] = rm
	r.queue = append(r.queue, rm.uid)
	r.signal()
	return true
}

// inFlight returns the pods whose removal is queued or running.
func (r *remover) inFlight() sets.Set[types.UID] {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.running.Clone()
	for uid := range r.queued {
		out.Insert(uid)
	}
	return out
}

func (r *remover) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// run removes pods on removeConcurrency goroutines until ctx ends; what is still queued then is
// dropped.
func (r *remover) run(ctx context.Context) {
	var wg sync.WaitGroup
	for range removeConcurrency {
		wg.Go(func() {
			for {
				rm, ok := r.take()
				if !ok {
					select {
					case <-ctx.Done():
						return
					case <-r.wake:
						continue
					}
				}
				r.remove(ctx, rm)
				r.mu.Lock()
				r.running.Delete(rm.uid)
				r.mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// take moves the oldest queued pod to running, and passes the wake-up token on if more wait.
func (r *remover) take() (removal, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.queue) == 0 {
		return removal{}, false
	}
	uid := r.queue[0]
	r.queue = r.queue[1:]
	rm := r.queued[uid]
	delete(r.queued, uid)
	r.running.Insert(uid)
	if len(r.queue) > 0 {
		r.signal()
	}
	return rm, true
}

// remove cleans one pod up if the guard still lets it go; a step that fails leaves the rest to
// the next housekeeping.
func (r *remover) remove(ctx context.Context, rm removal) {
	if ctx.Err() != nil || !r.guard.claim(rm.uid) {
		klog.V(3).InfoS("Pod is no longer to be removed", "podUID", rm.uid, "reason", rm.why)
		return
	}
	defer r.guard.release(rm.uid)
	if rm.runtime {
		klog.InfoS("Removing a pod no source wants", "podUID", rm.uid, "reason", rm.why)
		if err := r.pods.RemovePodByUID(ctx, rm.uid); err != nil {
			klog.ErrorS(err, "Failed to remove pod; retrying at the next housekeeping", "podUID", rm.uid)
			return
		}
	}
	if err := r.dirs.TearDown(rm.uid); err != nil {
		klog.ErrorS(err, "Failed to remove the directory of a pod that is gone; retrying at the next housekeeping", "podUID", rm.uid)
		return
	}
	r.statuses.Forget(rm.uid)
}
