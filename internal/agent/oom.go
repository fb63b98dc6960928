package agent

import (
	"context"
	"fmt"

	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/oomwatcher"
)

// startOOMWatcher reports system OOM kills from the kernel log as SystemOOM node events (to the
// API server too in cluster mode, through the recorder), as the kubelet's OOM watcher, which
// starts with the kubelet's first modules, before the runtime is up.
func startOOMWatcher(ctx context.Context, g *group, clk clock.PassiveClock, recorder oomwatcher.Recorder) error {
	w, err := oomwatcher.New(oomwatcher.Config{}, oomwatcher.Deps{Recorder: recorder, Clock: clk})
	if err != nil {
		return fmt.Errorf("OOM watcher: %w", err)
	}
	g.start("OOM watcher", func() error { w.Run(ctx); return nil })
	return nil
}
