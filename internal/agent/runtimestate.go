package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// statusReader is the CRI Status call.
type statusReader interface {
	Status(ctx context.Context, verbose bool) (*runtimeapi.StatusResponse, error)
}

// runtimeState polls the runtime's conditions (upstream's updateRuntimeUp, every 5 s) so the
// sync loop and /healthz know whether it is ready, and why not.
type runtimeState struct {
	mu       sync.RWMutex
	err      error
	features *runtimeapi.RuntimeFeatures // from the last answer; nil before the first
	handlers []*runtimeapi.RuntimeHandler
}

// RuntimeFeatures is what the runtime said it can do in its last Status answer.
func (s *runtimeState) RuntimeFeatures() (*runtimeapi.RuntimeFeatures, []*runtimeapi.RuntimeHandler) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.features, s.handlers
}

func newRuntimeState() *runtimeState {
	return &runtimeState{err: errors.New("the container runtime has not been checked yet")}
}

// RuntimeErr is nil when RuntimeReady and NetworkReady are true.
func (s *runtimeState) RuntimeErr() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.err
}

// Name and Check make it a health check.
func (s *runtimeState) Name() string { return "runtime" }
func (s *runtimeState) Check() error { return s.RuntimeErr() }

func (s *runtimeState) update(ctx context.Context, rt statusReader) {
	resp, err := rt.Status(ctx, false)
	err = func() error {
		if err != nil {
			return fmt.Errorf("container runtime status check failed: %w", err)
		}
		for _, c := range resp.GetStatus().GetConditions() {
			if (c.Type == runtimeapi.RuntimeReady || c.Type == runtimeapi.NetworkReady) && !c.Status {
				return fmt.Errorf("container runtime not ready: %s=false reason:%s message:%s", c.Type, c.Reason, c.Message)
			}
		}
		return nil
	}()
	s.mu.Lock()
	changed := (err == nil) != (s.err == nil)
	s.err = err
	if resp != nil {
		s.features, s.handlers = resp.GetFeatures(), resp.GetRuntimeHandlers()
	}
	s.mu.Unlock()
	if changed && err == nil {
		klog.InfoS("Container runtime is ready")
	}
}

func (s *runtimeState) set(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// run checks every period until ctx ends.
func (s *runtimeState) run(ctx context.Context, rt statusReader, clk clock.WithTicker, period time.Duration) {
	t := clk.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			s.update(ctx, rt)
		}
	}
}
