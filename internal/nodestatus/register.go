package nodestatus

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// Registration back-off, as upstream's registerWithAPIServer.
const (
	registerInitialBackoff = 100 * time.Millisecond
	registerMaxBackoff     = 7 * time.Second
)

// registerWithAPIServer registers the node, retrying with back-off, until it succeeds (true)
// or ctx ends (false). Until then Node() is the locally built node.
func (m *Manager) registerWithAPIServer(ctx context.Context) bool {
	step := registerInitialBackoff
	for {
		node, events, err := initialNode(&m.cfg, m.observe(ctx))
		if err != nil {
			klog.ErrorS(err, "Failed to set some node status fields", "node", m.cfg.NodeName)
		}
		m.setNode(node, false)

		klog.InfoS("Attempting to register node", "node", m.cfg.NodeName)
		registered, err := m.tryRegisterWithAPIServer(ctx, node)
		if err == nil {
			klog.InfoS("Successfully registered node", "node", m.cfg.NodeName)
			m.recordEvents(registered, events)
			return true
		}
		klog.ErrorS(err, "Unable to register node with API server; will retry (check the API server address and that the node's credentials are those of system:node:<name>)",
			"node", m.cfg.NodeName, "retryIn", step)
		select {
		case <-ctx.Done():
			return false
		case <-m.clock.After(step):
		}
		step = min(2*step, registerMaxBackoff)
	}
}

// tryRegisterWithAPIServer is upstream's: create the Node; if it exists already (or creating
// it is forbidden but it may exist), get it and reconcile it with the initial node.
func (m *Manager) tryRegisterWithAPIServer(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	nodes := m.deps.Client.Core.Nodes()
	created, err := nodes.Create(ctx, node, metav1.CreateOptions{})
	if err == nil {
		m.setNode(created, true)
		return created, nil
	}
	if !apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("create node %q: %w", node.Name, err)
	}

	existing, getErr := nodes.Get(ctx, node.Name, metav1.GetOptions{})
	if getErr != nil {
		if apierrors.IsForbidden(err) {
			return nil, fmt.Errorf("create node %q: %w; get existing node: %w", node.Name, err, getErr)
		}
		return nil, fmt.Errorf("get existing node %q: %w", node.Name, getErr)
	}
	klog.InfoS("Node was previously registered", "node", node.Name)
	original := existing.DeepCopy()
	if reconcileExistingNode(node, existing) {
		updated, err := patchNodeStatus(ctx, m.deps.Client.Core, original, existing)
		if err != nil {
			return nil, fmt.Errorf("reconcile existing node %q: %w", node.Name, err)
		}
		existing = updated
	}
	m.setNode(existing, true)
	return existing, nil
}
