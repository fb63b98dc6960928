package cgroups

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Setter sets a cgroup's resources, creating it where missing (Manager).
type Setter interface {
	Set(name string, r Resources) error
}

// Writer is a Setter that also removes cgroups through the systemd driver (Manager).
type Writer interface {
	Setter
	Destroy(name string) error
}

var _ Writer = Manager{}

// QoSConfig configures the QoS manager.
type QoSConfig struct {
	// PodsCgroup is the cgroup of all pods, <cgroupRoot>/kubepods.
	PodsCgroup string
	// Allocatable is enforced on PodsCgroup at start (enforceNodeAllocatable [pods]): the
	// capacity less kubeReserved and systemReserved. Nil sets nothing on it.
	Allocatable v1.ResourceList
	// Period is how often the QoS cgroups are set again (upstream: every minute).
	Period time.Duration
}

// QoSDeps are the QoS manager's dependencies.
type QoSDeps struct {
	Clock clock.WithTicker
	// ActivePods are the admitted pods that have not terminated.
	ActivePods func() []*v1.Pod
	Cgroups    Setter
}

// QoSManager keeps the cgroup of all pods and the Burstable and BestEffort QoS cgroups under it
// set as upstream's container manager does: the node's allocatable on kubepods at start, the
// QoS tiers' cpu shares from the active pods before each new sandbox and every Period. Pods
// whose QoS class is Guaranteed have their pod cgroups directly under kubepods.
type QoSManager struct {
	cfg  QoSConfig
	deps QoSDeps
	mu   sync.Mutex // one Update at a time: pod workers call it concurrently
}

// NewQoSManager validates cfg and deps.
func NewQoSManager(cfg QoSConfig, deps QoSDeps) (*QoSManager, error) {
	if deps.Clock == nil || deps.ActivePods == nil || deps.Cgroups == nil {
		return nil, errors.New("cgroups: QoS manager: Clock, ActivePods and Cgroups are required")
	}
	if !path.IsAbs(cfg.PodsCgroup) {
		return nil, fmt.Errorf("cgroups: QoS manager: the pods' cgroup %q is not an absolute cgroup path", cfg.PodsCgroup)
	}
	if cfg.Period <= 0 {
		cfg.Period = time.Minute
	}
	return &QoSManager{cfg: cfg, deps: deps}, nil
}

// Start sets the pods' cgroup to the node's allocatable and the QoS cgroups once. An error
// means pods cannot get their cgroups: nodelet does not start.
func (q *QoSManager) Start() error {
	if err := q.deps.Cgroups.Set(q.cfg.PodsCgroup, Node(q.cfg.Allocatable)); err != nil {
		return fmt.Errorf("the cgroup of all pods (enforceNodeAllocatable pods): %w", err)
	}
	klog.InfoS("Set the cgroup of all pods to the node's allocatable", "cgroup", q.cfg.PodsCgroup,
		"cpu", q.cfg.Allocatable.Cpu(), "memory", q.cfg.Allocatable.Memory())
	return q.Update()
}

// Update sets the QoS cgroups from the active pods (upstream's UpdateCgroups).
func (q *QoSManager) Update() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	burstable, bestEffort := QoS(q.deps.ActivePods())
	var errs []error
	for _, c := range []struct {
		name string
		r    Resources
	}{{BurstableCgroup, burstable}, {BestEffortCgroup, bestEffort}} {
		if err := q.deps.Cgroups.Set(path.Join(q.cfg.PodsCgroup, c.name), c.r); err != nil {
			errs = append(errs, fmt.Errorf("the %s QoS cgroup: %w", c.name, err))
		}
	}
	return errors.Join(errs...)
}

// Run updates the QoS cgroups every Period until ctx ends.
func (q *QoSManager) Run(ctx context.Context) {
	t := q.deps.Clock.NewTicker(q.cfg.Period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			if err := q.Update(); err != nil {
				klog.ErrorS(err, "Failed to update the QoS cgroups; retrying at the next period. Check that the cgroup file system is writable")
			}
		}
	}
}
