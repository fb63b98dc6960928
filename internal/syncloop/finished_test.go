package syncloop

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/podmanager"
	"github.com/nodelet/nodelet/internal/podworkers"
)

// instantSyncer succeeds at once and records the terminations.
type instantSyncer struct {
	mu         sync.Mutex
	terminated []types.UID
}

var _ podworkers.Syncer = (*instantSyncer)(nil)

func (s *instantSyncer) SyncPod(context.Context, podworkers.UpdateType, *v1.Pod, *container.PodStatus) (bool, error) {
	return false, nil
}
func (s *instantSyncer) SyncTerminatingPod(context.Context, *v1.Pod, *container.PodStatus, int64, podworkers.Failure) error {
	return nil
}
func (s *instantSyncer) SyncTerminatedPod(_ context.Context, pod *v1.Pod, _ *container.PodStatus) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.terminated = append(s.terminated, pod.UID)
	return nil
}

type instantCache struct{}

var _ podworkers.Cache = instantCache{}

func (instantCache) GetNewerThan(_ context.Context, uid types.UID, t time.Time) (*container.PodStatus, error) {
	return &container.PodStatus{ID: uid, TimeStamp: t.Add(time.Nanosecond)}, nil
}

// With the real pod workers and the real loop, a pod its source removes is terminated by its
// worker and its runtime pod, directory and status removed at once: the clock never moves, so
// no housekeeping tick ever comes.
func TestTerminatedPodIsRemovedWithoutHousekeeping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clocktesting.NewFakeClock(time.Unix(0, 0))
		queue := NewWorkQueue(clk)
		finished := make(chan types.UID, 8)
		syncer := &instantSyncer{}
		workers, err := podworkers.New(podworkers.Config{Clock: clk},
			podworkers.Deps{Syncer: syncer, Cache: instantCache{}, Requeuer: queue, Finished: finished})
		if err != nil {
			t.Fatal(err)
		}
		defer workers.Stop()
		c := &fakeCleaner{release: make(chan struct{}), pods: []*container.Pod{{ID: "web"}}}
		dirs, statuses := &fakeDirs{dirs: []types.UID{"web"}}, &fakeForget{statuses: []types.UID{"web"}}
		d := mustDispatcher(DispatcherDeps{Desired: podmanager.New(), Workers: workers, Cleaner: c, Dirs: dirs, Statuses: statuses, Probes: &fakeProbes{}})
		stop := startDispatcher(d)
		defer stop()
		updates := make(chan podconfig.PodUpdate)
		ctx, cancel := context.WithCancel(context.Background())
		var loop sync.WaitGroup
		loop.Go(func() {
			Run(ctx, Config{Clock: clk, SyncPeriod: time.Second, HousekeepingPeriod: 2 * time.Second,
				Updates: updates, Finished: finished, Queue: queue, Runtime: &runtimeErr{}, Handler: d,
				SourcesReady: func() bool { return true }})
		})
		defer func() { cancel(); loop.Wait() }()

		web := tpod("web", "web")
		updates <- podconfig.PodUpdate{Op: podconfig.ADD, Pods: []*v1.Pod{web}}
		synctest.Wait()
		if removed, _, _ := c.snapshot(); removed != "[]" {
			t.Fatalf("removed %s while the pod is wanted", removed)
		}
		updates <- podconfig.PodUpdate{Op: podconfig.REMOVE, Pods: []*v1.Pod{web}}
		synctest.Wait()
		// Removed once, or twice when the worker was quicker than the loop: the REMOVE found the
		// pod terminated already and handed it over, then the worker's finish did too.
		if removed, _, _ := c.snapshot(); removed != "[web]" && removed != "[web web]" {
			t.Fatalf("removed %s, want the terminated pod removed without a housekeeping tick", removed)
		}
		if fmt.Sprint(dirs.tornDown) != "[web]" || !strings.HasPrefix(statuses.forgottenString(), "[web") {
			t.Errorf("tore down %v, forgot %s: want the pod's directory and status gone too", dirs.tornDown, statuses.forgottenString())
		}
		if !workers.IsPodKnownTerminated("web") || len(syncer.terminated) != 1 {
			t.Errorf("the pod's worker did not finish it before the removal")
		}
		if clk.Since(time.Unix(0, 0)) != 0 {
			t.Fatal("the clock moved")
		}
	})
}
