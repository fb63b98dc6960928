package nodestatus

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// statusLoop computes the node status now, every UpdateFrequency and when triggered, and posts
// it when it changed or ReportFrequency has passed, until ctx ends.
func (m *Manager) statusLoop(ctx context.Context) {
	ticker := m.clock.NewTicker(m.cfg.UpdateFrequency)
	defer ticker.Stop()
	for {
		m.syncNodeStatus(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		case <-m.trigger:
		}
	}
}

// syncNodeStatus is upstream's updateNodeStatus: up to nodeStatusUpdateRetry tries, the first
// from the API server's cache, the others from a fresh GET. Failures are logged; the next tick
// tries again.
func (m *Manager) syncNodeStatus(ctx context.Context) {
	var errs []error
	for i := range nodeStatusUpdateRetry {
		if ctx.Err() != nil {
			return
		}
		err := m.tryUpdateNodeStatus(ctx, i)
		if err == nil {
			return
		}
		errs = append(errs, err)
		if i > 0 && m.deps.OnRepeatedHeartbeatFailure != nil {
			m.deps.OnRepeatedHeartbeatFailure()
		}
		klog.ErrorS(err, "Error updating node status, will retry", "node", m.cfg.NodeName, "try", i+1)
	}
	klog.ErrorS(errors.Join(errs...), "Unable to update node status; will try again at the next update (check connectivity to the API server)",
		"node", m.cfg.NodeName, "tries", nodeStatusUpdateRetry, "nextUpdateIn", m.cfg.UpdateFrequency)
}

// tryUpdateNodeStatus is upstream's: compute the status on a copy of the node and patch it
// if it changed (heartbeats aside) or the report period expired.
func (m *Manager) tryUpdateNodeStatus(ctx context.Context, try int) error {
	// As upstream, the first try reads the API server's cache (resourceVersion "0") and the
	// others read etcd. Not the node informer: after an outage its watch may be re-established
	// only after a back-off of up to a minute, and a status computed against its stale copy
	// (Ready=True) would not see that the node lifecycle controller set Ready=Unknown
	// meanwhile, so the node would stay NotReady until the next report period.
	opts := metav1.GetOptions{}
	if try == 0 {
		opts.ResourceVersion = "0"
	}
	original, err := m.deps.heartbeat().Core.Nodes().Get(ctx, m.cfg.NodeName, opts)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("error getting node %q: %w (the Node object was deleted; restart nodelet to register it again)", m.cfg.NodeName, err)
	}
	if err != nil {
		return fmt.Errorf("error getting node %q: %w", m.cfg.NodeName, err)
	}

	node, events, changed := m.updateNode(ctx, original)
	if !changed && !m.isUpdateStatusPeriodExpired() {
		m.recordEvents(node, events)
		return nil
	}
	// A changed status, or the first report after a restart, gets a random delay added to the
	// report period so that nodes do not all report at once; periodic reports do not.
	if changed || m.lastStatusReport.IsZero() {
		m.reportDelay = m.calculateDelay()
	} else {
		m.reportDelay = 0
	}
	updated, err := patchNodeStatus(ctx, m.deps.heartbeat().Core, original, node)
	if err != nil {
		return err
	}
	m.lastStatusReport = m.clock.Now()
	m.setNode(updated, true)
	m.recordEvents(updated, events)
	return nil
}

// updateNode is upstream's: a copy of original with the OS and architecture labels ensured and
// the status set, the status events to record once it is posted, and whether anything but
// heartbeats changed. A cordon or uncordon is recorded at once, as upstream.
func (m *Manager) updateNode(ctx context.Context, original *v1.Node) (*v1.Node, []nodeEvent, bool) {
	node := original.DeepCopy()
	labelsChanged := ensureOSArchLabels(node)
	events, err := setNodeStatus(node, &m.cfg, m.observe(ctx))
	if err != nil {
		klog.ErrorS(err, "Failed to set some node status fields", "node", m.cfg.NodeName)
	}
	m.recordEvents(node, m.schedulableEvent(node))
	return node, events, labelsChanged || nodeStatusHasChanged(&original.Status, &node.Status)
}

func (m *Manager) isUpdateStatusPeriodExpired() bool {
	return m.clock.Since(m.lastStatusReport) >= m.cfg.ReportFrequency+m.reportDelay
}

// calculateDelay is upstream's: a random delay in [-ReportFrequency/2, ReportFrequency/2).
func (m *Manager) calculateDelay() time.Duration {
	return time.Duration(float64(m.cfg.ReportFrequency) * (-0.5 + m.randFloat()))
}
