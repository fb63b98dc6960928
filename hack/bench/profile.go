package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// profiler fetches nodelet's Go profiles from /debug/pprof/ on its read-only API (served on
// loopback with enableProfilingHandler, the default) into dir, for --profile runs.
type profiler struct {
	dir     string
	pending chan error // the CPU profile in flight, if any
}

// startCPU asks for a CPU profile of the next d, written to <dir>/<name> when it ends; wait
// returns its error. Only one CPU profile can run at a time.
func (p *profiler) startCPU(ctx context.Context, a *agent, name string, d time.Duration) {
	p.pending = make(chan error, 1)
	go func() {
		p.pending <- p.fetch(ctx, a, fmt.Sprintf("profile?seconds=%d", int(d.Seconds())), name, d+30*time.Second)
	}()
	// Let the request reach the agent before the work it profiles starts.
	time.Sleep(200 * time.Millisecond)
}

// wait waits for the CPU profile in flight.
func (p *profiler) wait() error {
	if p.pending == nil {
		return nil
	}
	err := <-p.pending
	p.pending = nil
	return err
}

// snapshot writes the named profile (heap, goroutine, allocs) now.
func (p *profiler) snapshot(ctx context.Context, a *agent, profile, name string) error {
	return p.fetch(ctx, a, profile, name, 30*time.Second)
}

func (p *profiler) fetch(ctx context.Context, a *agent, query, name string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/%s", a.port, query)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	path := filepath.Join(p.dir, name)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	logf("profile written to %s", path)
	return f.Close()
}
