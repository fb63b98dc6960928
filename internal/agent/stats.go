package agent

import (
	"context"
	"sync"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/nodelet/nodelet/internal/server"
	"github.com/nodelet/nodelet/internal/stats"
)

// lateStats serves /stats/summary and /metrics/resource from the stats provider, which exists
// once the runtime is connected; the servers start before that.
type lateStats struct {
	mu       sync.Mutex
	provider *stats.Provider
}

var (
	_ server.SummaryProvider   = (*lateStats)(nil)
	_ stats.CPUAndMemorySource = (*lateStats)(nil)
)

func (l *lateStats) set(p *stats.Provider) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.provider = p
}

func (l *lateStats) get() (*stats.Provider, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.provider == nil {
		return nil, errRuntimeNotConnected
	}
	return l.provider, nil
}

func (l *lateStats) Summary(ctx context.Context) (*statsapi.Summary, error) {
	p, err := l.get()
	if err != nil {
		return nil, err
	}
	return p.Summary(ctx)
}

func (l *lateStats) CPUAndMemorySummary(ctx context.Context) (*statsapi.Summary, error) {
	p, err := l.get()
	if err != nil {
		return nil, err
	}
	return p.CPUAndMemorySummary(ctx)
}
