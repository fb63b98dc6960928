package nodestatus

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/apimachinery/lease"
)

// newLeaseController returns component-helpers' lease controller configured as upstream's
// kubelet configures it: Lease kube-node-lease/<node>, held by the node, renewed every quarter
// of the lease duration, owned by the Node. Its renewal ticks use real timers (wait.JitterUntil);
// the renew time comes from the configured clock.
func (m *Manager) newLeaseController(ctx context.Context) lease.Controller {
	renewInterval := time.Duration(float64(m.cfg.LeaseDuration) * leaseRenewIntervalFraction)
	return lease.NewController(m.clock, m.deps.heartbeat(), m.cfg.NodeName, m.leaseDurationSeconds(),
		m.deps.OnRepeatedHeartbeatFailure, renewInterval, m.cfg.NodeName, v1.NamespaceNodeLease,
		func(l *coordinationv1.Lease) error { return m.setLeaseOwner(ctx, l) })
}

func (m *Manager) leaseDurationSeconds() int32 {
	return int32(m.cfg.LeaseDuration / time.Second)
}

// setLeaseOwner is upstream's SetNodeOwnerFunc: until the lease has an owner, make the Node
// its owner, so that deleting the Node garbage-collects the lease. An error keeps the lease
// from being created (the controller retries at the next renewal) but not from being renewed.
func (m *Manager) setLeaseOwner(ctx context.Context, l *coordinationv1.Lease) error {
	if len(l.OwnerReferences) > 0 {
		return nil
	}
	node := m.apiNode()
	if node == nil || node.UID == "" {
		var err error
		node, err = m.deps.heartbeat().CoreV1().Nodes().Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get node %q to own its lease: %w", m.cfg.NodeName, err)
		}
	}
	l.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: v1.SchemeGroupVersion.Version,
		Kind:       "Node",
		Name:       m.cfg.NodeName,
		UID:        node.UID,
	}}
	return nil
}
