package podconfig

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Sink receives complete snapshots from sources. The Mux is the production Sink.
type Sink interface {
	// Send hands over all pods the source has now. It blocks until the updates it causes are
	// taken, or ctx ends.
	Send(ctx context.Context, source string, pods []*v1.Pod) error
}

// Reporter is told about manifests and pods that were refused. Sources call it once per change
// of the thing refused, not on every re-read.
type Reporter interface {
	Report(source, origin string, err error)
}

// Mux merges the sources' snapshots into one stream of PodUpdates.
type Mux struct {
	clock    clock.PassiveClock
	reporter Reporter
	updates  chan PodUpdate

	// sendMu orders whole Sends, delivery included, so updates reach the loop in merge order.
	sendMu sync.Mutex
	// mu guards the state only, and is never held while delivering: the sync loop asks
	// SeenAllSources between reads, so a Send blocked on a full channel must not hold it.
	mu       sync.Mutex
	state    *State
	reported map[string]string // source/fullname → reason last reported
}

var _ Sink = (*Mux)(nil)

// NewMux returns a Mux whose Updates channel has the given buffer (upstream uses 50).
func NewMux(clk clock.PassiveClock, reporter Reporter, buffer int) *Mux {
	return &Mux{clock: clk, reporter: reporter, updates: make(chan PodUpdate, buffer),
		state: NewState(), reported: map[string]string{}}
}

// Updates is the stream the sync loop reads.
func (m *Mux) Updates() <-chan PodUpdate { return m.updates }

// SeenAllSources reports whether each named source has sent a complete listing, the condition
// for housekeeping to remove pods that no source wants.
func (m *Mux) SeenAllSources(sources ...string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state.Seen(sources...)
}

// Send merges a snapshot and delivers the updates it implies, in order.
func (m *Mux) Send(ctx context.Context, source string, pods []*v1.Pod) error {
	return m.send(ctx, source, pods, true)
}

// Restore is Send for the pods a source had before a restart (State.Restore): they run, but
// the source is not yet seen.
func (m *Mux) Restore(ctx context.Context, source string, pods []*v1.Pod) error {
	return m.send(ctx, source, pods, false)
}

func (m *Mux) send(ctx context.Context, source string, pods []*v1.Pod, complete bool) error {
	m.sendMu.Lock()
	defer m.sendMu.Unlock()
	m.mu.Lock()
	updates, rejections := m.state.merge(source, pods, m.clock.Now(), complete)
	m.reportRejections(source, rejections)
	m.mu.Unlock()
	for _, u := range updates {
		klog.V(4).InfoS("Pod update", "op", u.Op, "source", u.Source, "pods", klog.KObjSlice(u.Pods))
		select {
		case m.updates <- u:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// reportRejections reports each refused pod once per distinct reason, and forgets pods that are
// no longer refused so that a later refusal is reported again.
func (m *Mux) reportRejections(source string, rejections []Rejection) {
	now := map[string]bool{}
	for _, r := range rejections {
		key := r.Source + "/" + FullName(r.Pod)
		now[key] = true
		if m.reported[key] == r.Reason {
			continue
		}
		m.reported[key] = r.Reason
		m.reporter.Report(r.Source, FullName(r.Pod), &RejectedError{Pod: FullName(r.Pod), Reason: r.Reason})
	}
	prefix := source + "/"
	for key := range m.reported {
		if len(key) > len(prefix) && key[:len(prefix)] == prefix && !now[key] {
			delete(m.reported, key)
		}
	}
}

// RejectedError says why the mux refused a pod.
type RejectedError struct {
	Pod    string
	Reason string
}

func (e *RejectedError) Error() string { return "pod " + e.Pod + " rejected: " + e.Reason }

// LogReporter reports to the log, in words an operator can act on.
type LogReporter struct{}

var _ Reporter = LogReporter{}

// Report logs the refusal with its source and origin.
func (LogReporter) Report(source, origin string, err error) {
	klog.ErrorS(err, "Pod manifest rejected; fix it and nodelet picks the change up, other pods are not affected", "source", source, "origin", origin)
}
