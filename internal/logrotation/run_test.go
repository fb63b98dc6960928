package logrotation

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
)

func TestRunChecksAtOnceThenEveryInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(5))
		log := h.container(t, "c1", strings.Repeat("x", 100))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.m.Run(ctx)
		}()

		synctest.Wait() // the first pass is done and Run waits for the ticker
		if got := ls(t, filepath.Dir(log)); !slices.Equal(got, []string{"0.log", "0.log.20260301-120000"}) {
			t.Fatalf("after the first pass: files %q, want one rotation", got)
		}

		write(t, log, strings.Repeat("y", 100))
		h.clock.Step(9 * h.m.cfg.MonitorInterval / 10)
		synctest.Wait()
		if got := len(h.rt.reopened()); got != 1 {
			t.Fatalf("%d reopens before the interval passed, want 1", got)
		}
		h.clock.Step(h.m.cfg.MonitorInterval / 10)
		synctest.Wait()
		want := []string{"0.log", "0.log.20260301-120000.gz", "0.log.20260301-120010"}
		if got := ls(t, filepath.Dir(log)); !slices.Equal(got, want) {
			t.Fatalf("after one interval: files %q, want %q", got, want)
		}

		cancel()
		<-done
	})
}

func TestRunDisabledByNegativeMaxSize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig(5)
		cfg.MaxSize = -1
		h := newHarness(t, cfg)
		log := h.container(t, "c1", strings.Repeat("x", 100))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.m.Run(ctx)
		}()
		synctest.Wait()
		h.clock.Step(cfg.MonitorInterval)
		synctest.Wait()
		if got := ls(t, filepath.Dir(log)); !slices.Equal(got, []string{"0.log"}) {
			t.Errorf("files %q, want no rotation", got)
		}
		cancel()
		<-done
	})
}
