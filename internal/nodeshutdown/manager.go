package nodeshutdown

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Upstream's words (nodeshutdown_manager.go).
const (
	// Reason and Message are a terminated pod's status reason and message.
	Reason  = "Terminated"
	Message = "Pod was terminated in response to imminent node shutdown."
	// AdmitReason and AdmitMessage refuse a pod while the node shuts down.
	AdmitReason  = "NodeShutdown"
	AdmitMessage = "Pod was rejected as the node is shutting down."
	// EventReason is the node event's reason.
	EventReason = "NodeShutdown"
)

// Pods are the pods a shutdown terminates.
type Pods interface {
	// ActivePods are the admitted pods that have not terminated.
	ActivePods() []*v1.Pod
}

// Killer terminates pods for the shutdown (the pod workers).
type Killer interface {
	// KillPod terminates the pod within gracePeriodSeconds; its status becomes Failed (unless
	// Succeeded) with Reason and Message and the DisruptionTarget condition.
	KillPod(pod *v1.Pod, gracePeriodSeconds int64)
	// Terminated says the pod's containers are all stopped.
	Terminated(uid types.UID) bool
}

// Recorder records the node's events.
type Recorder interface {
	NodeEventf(eventType, reason, messageFmt string, args ...any)
}

// Config configures the manager.
type Config struct {
	// Periods are the priority bands (Periods); none turns graceful shutdown off.
	Periods []Period
	// PollInterval is how often a band's pods are checked for termination (default 1 s).
	PollInterval time.Duration
}

// Deps are the manager's collaborators.
type Deps struct {
	// Logind connects to logind (default ConnectLogind).
	Logind   func() (Logind, error)
	Pods     Pods
	Killer   Killer
	Recorder Recorder
	Clock    clock.WithTicker
	// ShuttingDown, when set, is called when the shutdown starts and when it is cancelled, so
	// that the node's status says so at once.
	ShuttingDown func(bool)
}

// Manager is the graceful node shutdown manager.
type Manager struct {
	cfg  Config
	deps Deps

	mu           sync.Mutex
	shuttingDown bool
	lock         *os.File // the inhibitor, nil when not held
}

// New returns the manager; with no band it does nothing.
func New(cfg Config, deps Deps) (*Manager, error) {
	if len(cfg.Periods) > 0 && (deps.Pods == nil || deps.Killer == nil || deps.Recorder == nil || deps.Clock == nil) {
		return nil, errors.New("nodeshutdown: Pods, Killer, Recorder and Clock are required")
	}
	if deps.Logind == nil {
		deps.Logind = ConnectLogind
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	return &Manager{cfg: cfg, deps: deps}, nil
}

// ShuttingDown reports whether the node is shutting down (the node's Ready condition and
// admission say so).
func (m *Manager) ShuttingDown() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.shuttingDown
}

// Admit refuses every pod while the node shuts down, with upstream's reason and message.
func (m *Manager) Admit(*v1.Pod) (ok bool, reason, message string) {
	if m.ShuttingDown() {
		return false, AdmitReason, AdmitMessage
	}
	return true, "", ""
}

// Run takes the inhibitor and follows logind until ctx ends, reconnecting (every second) when
// the connection is lost, as upstream. Without a band it returns at once. Where the first
// connection cannot take the inhibitor (no systemd-logind) it says so once and returns: the node
// runs without graceful shutdown.
func (m *Manager) Run(ctx context.Context) {
	if len(m.cfg.Periods) == 0 {
		return
	}
	for first := true; ; first = false {
		inhibited, err := m.watch(ctx)
		if ctx.Err() != nil {
			return
		}
		if first && !inhibited {
			klog.ErrorS(err, "Graceful node shutdown is unavailable: nodelet cannot take logind's shutdown inhibitor; "+
				"pods will be killed without their grace periods when the host shuts down (shutdownGracePeriod needs systemd-logind)",
				"budget", Budget(m.cfg.Periods))
			return
		}
		klog.ErrorS(err, "Lost logind; watching for node shutdown again in 1s")
		select {
		case <-ctx.Done():
			return
		case <-m.deps.Clock.After(time.Second):
		}
	}
}

// watch is one connection to logind: the inhibit delay raised where it is too short, the
// inhibitor taken (inhibited), the shutdown signals followed until the connection or ctx ends.
func (m *Manager) watch(ctx context.Context) (inhibited bool, _ error) {
	l, err := m.deps.Logind()
	if err != nil {
		return false, err
	}
	defer l.Close()
	budget := Budget(m.cfg.Periods)
	current, err := l.InhibitDelay()
	if err != nil {
		return false, err
	}
	if current < budget {
		if err := l.RaiseInhibitDelay(budget); err != nil {
			return false, err
		}
		if current, err = m.waitInhibitDelay(ctx, l, budget); err != nil {
			return false, err
		}
	}
	if err := m.inhibit(l); err != nil {
		return false, err
	}
	defer m.release()
	events, err := l.WatchShutdown()
	if err != nil {
		return true, err
	}
	klog.InfoS("Watching for node shutdown: logind's delay inhibitor taken", "budget", budget, "inhibitDelayMax", current, "bands", m.cfg.Periods)
	for {
		select {
		case <-ctx.Done():
			return true, nil
		case active, ok := <-events:
			if !ok {
				return true, errors.New("logind's signals ended")
			}
			m.setShuttingDown(active)
			if !active {
				m.deps.Recorder.NodeEventf(v1.EventTypeNormal, EventReason, "Shutdown manager detected shutdown cancellation")
				if err := m.inhibit(l); err != nil {
					return true, err
				}
				continue
			}
			m.deps.Recorder.NodeEventf(v1.EventTypeNormal, EventReason, "Shutdown manager detected shutdown event")
			m.terminate(ctx)
			m.release()
			klog.InfoS("Node shutdown: the pods are terminated and logind's inhibitor released; the host goes down next")
		}
	}
}

// waitInhibitDelay waits (0.1 s doubling, 5 tries, as upstream) for logind to take the raised
// InhibitDelayMaxSec.
func (m *Manager) waitInhibitDelay(ctx context.Context, l Logind, want time.Duration) (time.Duration, error) {
	wait := 100 * time.Millisecond
	var got time.Duration
	for range 5 {
		select {
		case <-ctx.Done():
			return got, ctx.Err()
		case <-m.deps.Clock.After(wait):
		}
		var err error
		if got, err = l.InhibitDelay(); err != nil {
			return got, err
		}
		if got >= want {
			return got, nil
		}
		wait *= 2
	}
	return got, fmt.Errorf("logind's InhibitDelayMaxSec is %v after nodelet raised it to %v (the shutdown grace periods' sum) in %s/%s; "+
		"another drop-in may set it lower", got, want, logindConfDir, logindConfFile)
}

func (m *Manager) inhibit(l Logind) error {
	f, err := l.Inhibit()
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lock != nil {
		_ = m.lock.Close()
	}
	m.lock = f
	return nil
}

func (m *Manager) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lock != nil {
		if err := m.lock.Close(); err != nil {
			klog.ErrorS(err, "Failed to release logind's inhibitor")
		}
		m.lock = nil
	}
}

func (m *Manager) setShuttingDown(v bool) {
	m.mu.Lock()
	m.shuttingDown = v
	m.mu.Unlock()
	klog.InfoS("Node shutdown event from logind", "shuttingDown", v)
	if m.deps.ShuttingDown != nil {
		m.deps.ShuttingDown(v)
	}
}

// terminate kills the active pods band by band, lowest priority first; a band is done when
// its pods are terminated or its grace period is over (upstream's killPods).
func (m *Manager) terminate(ctx context.Context) {
	for _, g := range Groups(m.cfg.Periods, m.deps.Pods.ActivePods()) {
		if len(g.Pods) == 0 {
			continue
		}
		for _, pod := range g.Pods {
			grace := GracePeriod(g, pod)
			klog.V(1).InfoS("Shutdown manager killing pod with gracePeriod", "pod", klog.KObj(pod), "gracePeriod", grace)
			m.deps.Killer.KillPod(pod, grace)
		}
		deadline := m.deps.Clock.Now().Add(time.Duration(g.GracePeriodSeconds) * time.Second)
		for !m.allTerminated(g.Pods) {
			if !m.deps.Clock.Now().Before(deadline) {
				klog.InfoS("Shutdown manager pod killing time out", "gracePeriod", g.GracePeriodSeconds, "priority", g.Priority)
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-m.deps.Clock.After(m.cfg.PollInterval):
			}
		}
		klog.V(1).InfoS("Done waiting for all pods in group to terminate", "gracePeriod", g.GracePeriodSeconds, "priority", g.Priority)
	}
}

func (m *Manager) allTerminated(pods []*v1.Pod) bool {
	for _, p := range pods {
		if !m.deps.Killer.Terminated(p.UID) {
			return false
		}
	}
	return true
}
