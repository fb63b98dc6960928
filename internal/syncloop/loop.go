package syncloop

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/pleg"
	"github.com/nodelet/nodelet/internal/podconfig"
)

// Handler acts on what the loop receives.
type Handler interface {
	HandlePodUpdate(u podconfig.PodUpdate)
	HandleSyncs(uids []types.UID)
	// HandleHousekeeping and HandlePodFinished must return at once: the I/O they decide on
	// runs elsewhere (Dispatcher.Run).
	HandleHousekeeping(ctx context.Context)
	HandlePodFinished(uid types.UID)
}

// RuntimeState says whether the runtime is ready (nil) or why not.
type RuntimeState interface {
	RuntimeErr() error
}

// Config is the loop's timing and inputs.
type Config struct {
	Clock              clock.WithTicker
	SyncPeriod         time.Duration // 1 s
	HousekeepingPeriod time.Duration // 2 s
	Updates            <-chan podconfig.PodUpdate
	PLEG               <-chan *pleg.Event
	// ProbeResults carries pod UIDs whose probe results changed; nil until the prober exists.
	ProbeResults <-chan types.UID
	// Finished carries the UIDs of pods whose pod worker has finished (podworkers'
	// Deps.Finished); nil: housekeeping alone removes what they left.
	Finished <-chan types.UID
	Queue    *WorkQueue
	// SourcesReady reports whether every source has sent a complete listing: housekeeping
	// waits for it so that it never removes a pod a source is about to report.
	SourcesReady func() bool
	Runtime      RuntimeState
	Handler      Handler
}

const (
	minRuntimeBackOff = 100 * time.Millisecond
	maxRuntimeBackOff = 5 * time.Second
)

// Run loops until ctx ends.
func Run(ctx context.Context, cfg Config) {
	syncTicker := cfg.Clock.NewTicker(cfg.SyncPeriod)
	defer syncTicker.Stop()
	hkTicker := cfg.Clock.NewTicker(cfg.HousekeepingPeriod)
	defer hkTicker.Stop()
	backOff := minRuntimeBackOff
	for {
		if err := cfg.Runtime.RuntimeErr(); err != nil {
			klog.ErrorS(err, "Skipping pod synchronization: the container runtime is not ready; check that it runs and answers on its endpoint", "retryIn", backOff)
			select {
			case <-ctx.Done():
				return
			case <-cfg.Clock.After(backOff):
			}
			backOff = nextBackOff(backOff)
			continue
		}
		backOff = minRuntimeBackOff
		if !iterate(ctx, cfg, syncTicker.C(), hkTicker.C()) {
			return
		}
	}
}

// iterate is upstream's syncLoopIteration: it handles one thing and reports whether to go on.
func iterate(ctx context.Context, cfg Config, syncCh, hkCh <-chan time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case u, ok := <-cfg.Updates:
		if !ok {
			klog.ErrorS(nil, "Config updates channel closed; stopping the sync loop")
			return false
		}
		cfg.Handler.HandlePodUpdate(u)
	case e := <-cfg.PLEG:
		if e.Type != pleg.ContainerRemoved {
			cfg.Handler.HandleSyncs([]types.UID{e.ID})
		}
	case uid := <-cfg.ProbeResults:
		cfg.Handler.HandleSyncs([]types.UID{uid})
	case uid := <-cfg.Finished:
		cfg.Handler.HandlePodFinished(uid)
	case <-syncCh:
		if uids := cfg.Queue.GetWork(); len(uids) > 0 {
			cfg.Handler.HandleSyncs(uids)
		}
	case <-hkCh:
		if cfg.SourcesReady() {
			cfg.Handler.HandleHousekeeping(ctx)
		} else {
			klog.V(4).InfoS("Housekeeping waits until every pod source has been read")
		}
	}
	return true
}

// nextBackOff doubles the wait while the runtime is not ready, up to 5 s (upstream's
// syncLoop: 100 ms doubling to 5 s).
func nextBackOff(d time.Duration) time.Duration { return min(2*d, maxRuntimeBackOff) }
