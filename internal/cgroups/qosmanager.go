package cgroups

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
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

// Writer is a Setter that also removes cgroups through the systemd driver and sets existing
// cgroups named as the driver names them (Manager).
type Writer interface {
	Setter
	Destroy(name string) error
	SetExisting(literal string, r Resources) error
}

var _ Writer = Manager{}

// QoSConfig configures the QoS manager.
type QoSConfig struct {
	// PodsCgroup is the cgroup of all pods, <cgroupRoot>/kubepods.
	PodsCgroup string
	// Reservations are enforced at start (Enforcement): the node's allocatable or capacity on
	// PodsCgroup, the reservations on their cgroups.
	Reservations Reservations
	// Period is how often the QoS cgroups are set again (upstream: every minute).
	Period time.Duration
}

// QoSDeps are the QoS manager's dependencies.
type QoSDeps struct {
	Clock clock.WithTicker
	// ActivePods are the admitted pods that have not terminated.
	ActivePods func() []*v1.Pod
	Cgroups    Writer
	// Recorder records the node allocatable enforcement's node events (optional).
	Recorder Recorder
}

// Recorder records node events.
type Recorder interface {
	NodeEventf(eventType, reason, messageFmt string, args ...any)
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

// Start enforces node allocatable (Enforcement) and sets the QoS cgroups once. An error means
// pods cannot get their cgroups or a reservation cannot be enforced: nodelet does not start, as
// upstream's container manager does not.
func (q *QoSManager) Start() error {
	pods, reserved := Enforcement(q.cfg.Reservations)
	if err := q.deps.Cgroups.Set(q.cfg.PodsCgroup, pods); err != nil {
		q.event(v1.EventTypeWarning, "FailedNodeAllocatableEnforcement", "Failed to update Node Allocatable Limits %q: %v", q.cfg.PodsCgroup, err)
		return fmt.Errorf("the cgroup of all pods (enforceNodeAllocatable): %w", err)
	}
	q.event(v1.EventTypeNormal, "SuccessfulNodeAllocatableEnforcement", "Updated Node Allocatable limit across pods")
	klog.InfoS("Set the cgroup of all pods", "cgroup", q.cfg.PodsCgroup, "enforceNodeAllocatable", q.cfg.Reservations.Enforce,
		"cpuShares", ptrString(pods.CPUShares), "memory", ptrString(pods.Memory))
	for _, c := range reserved {
		if err := q.deps.Cgroups.SetExisting(c.Name, c.Resources); err != nil {
			msg := fmt.Sprintf("Failed to enforce %s Cgroup Limits on %q: %v", titleWords(c.What), c.Name, err)
			q.event(v1.EventTypeWarning, "FailedNodeAllocatableEnforcement", "%s", msg)
			return errors.New(msg)
		}
		q.event(v1.EventTypeNormal, "SuccessfulNodeAllocatableEnforcement", "Updated limits on %s cgroup %v", c.What, c.Name)
		klog.InfoS("Enforced a reservation on its cgroup", "what", c.What, "cgroup", c.Name,
			"cpuShares", ptrString(c.Resources.CPUShares), "memory", ptrString(c.Resources.Memory), "pids", ptrString(c.Resources.PidsLimit))
	}
	return q.Update()
}

func (q *QoSManager) event(eventType, reason, format string, args ...any) {
	if q.deps.Recorder != nil {
		q.deps.Recorder.NodeEventf(eventType, reason, format, args...)
	}
}

func ptrString[T int64 | uint64](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

// titleWords capitalizes each word, as upstream's messages name the reservations ("System
// Reserved").
func titleWords(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
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
