package nodestatus

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/kubeclient"
)

// The lease renewer is component-helpers' lease controller (apimachinery/lease, v0.37), the one
// upstream's kubelet runs, written again over the typed coordination client: that controller
// takes the whole clientset, which alone links about 120 packages nodelet does not use.
const (
	// leaseMaxUpdateRetries is how many times one renewal tries to update the lease.
	leaseMaxUpdateRetries = 5
	// leaseMaxBackoff bounds the wait between attempts to get or create the lease.
	leaseMaxBackoff = 7 * time.Second
	// leaseRenewJitter is wait.JitterUntil's factor upstream uses for renewals.
	leaseRenewJitter = 0.04
)

// leaseRenewer keeps kube-node-lease/<node> held by the node. Owned by one goroutine (runLease).
type leaseRenewer struct {
	m      *Manager
	leases kubeclient.LeaseInterface
	latest *coordinationv1.Lease
}

// runLease renews the lease every quarter of the lease duration (with upstream's 4% jitter)
// until ctx ends. Each renewal updates the latest lease; if that fails, it gets (or creates)
// the lease with back-off and updates that.
func (m *Manager) runLease(ctx context.Context) {
	r := &leaseRenewer{m: m, leases: m.deps.heartbeat().Leases.Leases(v1.NamespaceNodeLease)}
	interval := time.Duration(float64(m.cfg.LeaseDuration) * leaseRenewIntervalFraction)
	for {
		r.sync(ctx)
		wait := interval + time.Duration(m.randFloat()*leaseRenewJitter*float64(interval))
		select {
		case <-ctx.Done():
			return
		case <-m.clock.After(wait):
		}
	}
}

// sync is one renewal, upstream's controller.sync.
func (r *leaseRenewer) sync(ctx context.Context) {
	if r.latest != nil {
		err := r.retryUpdate(ctx, r.latest)
		if err == nil {
			return
		}
		klog.InfoS("Failed to renew the node lease from the latest one; getting it again", "node", r.m.cfg.NodeName, "err", err)
	}
	lease, created := r.backoffEnsure(ctx)
	r.latest = lease
	if !created && lease != nil {
		if err := r.retryUpdate(ctx, lease); err != nil {
			klog.ErrorS(err, "Failed to renew the node lease; the node shows as not ready if this lasts. Retrying at the next renewal",
				"node", r.m.cfg.NodeName, "lease", klog.KRef(v1.NamespaceNodeLease, r.m.cfg.NodeName))
		}
	}
}

// backoffEnsure gets or creates the lease, retrying with a doubling back-off (200ms to 7s)
// until it succeeds or ctx ends.
func (r *leaseRenewer) backoffEnsure(ctx context.Context) (*coordinationv1.Lease, bool) {
	sleep := 100 * time.Millisecond
	for {
		lease, created, err := r.ensure(ctx)
		if err == nil {
			return lease, created
		}
		sleep = min(2*sleep, leaseMaxBackoff)
		klog.ErrorS(err, "Failed to ensure the node lease exists; retrying", "node", r.m.cfg.NodeName, "interval", sleep)
		select {
		case <-ctx.Done():
			return nil, false
		case <-r.m.clock.After(sleep):
		}
	}
}

// ensure gets the lease, creating it when there is none. A lease that cannot be prepared (its
// owner, the Node, not known yet) is not created, and no error is returned: the next renewal
// tries again, as upstream.
func (r *leaseRenewer) ensure(ctx context.Context) (*coordinationv1.Lease, bool, error) {
	lease, err := r.leases.Get(ctx, r.m.cfg.NodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		fresh, err := r.newLease(ctx, nil)
		if err != nil {
			klog.ErrorS(err, "Not creating the node lease yet", "node", r.m.cfg.NodeName)
			return nil, false, nil
		}
		lease, err := r.leases.Create(ctx, fresh, metav1.CreateOptions{})
		if err != nil {
			return nil, false, err
		}
		return lease, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	return lease, false, nil
}

// retryUpdate renews base, up to leaseMaxUpdateRetries times; on a conflict it gets the lease
// again. From the second failure on, OnRepeatedHeartbeatFailure is called (upstream closes the
// client's connections, in case one hangs on an API server that went away).
func (r *leaseRenewer) retryUpdate(ctx context.Context, base *coordinationv1.Lease) error {
	for i := range leaseMaxUpdateRetries {
		next, err := r.newLease(ctx, base)
		if err != nil {
			klog.ErrorS(err, "Failed to prepare the node lease", "node", r.m.cfg.NodeName)
		} else {
			lease, err := r.leases.Update(ctx, next, metav1.UpdateOptions{})
			if err == nil {
				r.latest = lease
				return nil
			}
			klog.ErrorS(err, "Failed to update the node lease", "node", r.m.cfg.NodeName)
			if apierrors.IsConflict(err) {
				base, _ = r.backoffEnsure(ctx)
				continue
			}
		}
		if i > 0 && r.m.deps.OnRepeatedHeartbeatFailure != nil {
			r.m.deps.OnRepeatedHeartbeatFailure()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return fmt.Errorf("failed %d attempts to update the node lease", leaseMaxUpdateRetries)
}

// newLease is base (or a new lease held by the node) renewed now, owned by the Node.
func (r *leaseRenewer) newLease(ctx context.Context, base *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	var lease *coordinationv1.Lease
	if base == nil {
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: r.m.cfg.NodeName, Namespace: v1.NamespaceNodeLease},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(r.m.cfg.NodeName)},
		}
	} else {
		lease = base.DeepCopy()
	}
	lease.Spec.LeaseDurationSeconds = ptr.To(r.m.leaseDurationSeconds())
	lease.Spec.RenewTime = &metav1.MicroTime{Time: r.m.clock.Now()}
	return lease, r.m.setLeaseOwner(ctx, lease)
}

func (m *Manager) leaseDurationSeconds() int32 {
	return int32(m.cfg.LeaseDuration / time.Second)
}

// setLeaseOwner is upstream's SetNodeOwnerFunc: until the lease has an owner, make the Node
// its owner, so that deleting the Node garbage-collects the lease. An error keeps the lease
// from being created (the next renewal tries again) but not from being renewed.
func (m *Manager) setLeaseOwner(ctx context.Context, l *coordinationv1.Lease) error {
	if len(l.OwnerReferences) > 0 {
		return nil
	}
	node := m.apiNode()
	if node == nil || node.UID == "" {
		var err error
		node, err = m.deps.heartbeat().Core.Nodes().Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
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
