package containergc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// DefaultPeriod is upstream's ContainerGCPeriod.
const DefaultPeriod = time.Minute

// Config is the collector's settings.
type Config struct {
	Policy Policy
	// PodLogsDir is the root of the pod log directories (podLogsDir, /var/log/pods).
	PodLogsDir string
	// Period is how often Run collects (--container-gc-period; DefaultPeriod when zero).
	Period time.Duration
	// Shims finds and stops orphaned containerd shims; its zero value does not. ProcRoot is
	// where processes are listed (/proc when empty).
	Shims    ShimPolicy
	ProcRoot string
}

// Runtime is the CRI runtime service as the collector uses it (the CRI client).
type Runtime interface {
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
	ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error)
	StopPodSandbox(ctx context.Context, podSandboxID string) error
	RemovePodSandbox(ctx context.Context, podSandboxID string) error
}

// Containers stops and removes containers (the runtime manager): RemoveContainer also removes
// the container's log files, and a container already gone is no error.
type Containers interface {
	// KillContainer stops a container found in an unknown state, as an orphan (no pod spec).
	KillContainer(ctx context.Context, containerID, name string) error
	RemoveContainer(ctx context.Context, containerID string) error
}

// Recorder records node events (ContainerGCFailed).
type Recorder interface {
	NodeEventf(eventType, reason, messageFmt string, args ...any)
}

// Deps are the collector's collaborators.
type Deps struct {
	Runtime    Runtime
	Containers Containers
	// Pods is the pod workers' view of each pod.
	Pods PodState
	// SourcesReady reports whether every pod source has been read.
	SourcesReady func() bool
	Recorder     Recorder
	Clock        clock.Clock
}

// Manager is the container garbage collector.
type Manager struct {
	cfg  Config
	deps Deps
	// mu makes the periodic collection and a reclaim by the eviction manager take turns.
	mu sync.Mutex
	// suspects are the shims unknown to the runtime at the last search (pid → id).
	suspects map[int]string
}

// New checks the configuration and returns the collector; Run starts it.
func New(cfg Config, deps Deps) (*Manager, error) {
	if err := cfg.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("container garbage collection: %w", err)
	}
	if cfg.Period < 0 {
		return nil, fmt.Errorf("container garbage collection: period %v must not be negative", cfg.Period)
	}
	if cfg.PodLogsDir == "" {
		return nil, errors.New("container garbage collection: PodLogsDir is required")
	}
	if deps.Runtime == nil || deps.Containers == nil || deps.Pods == nil || deps.SourcesReady == nil || deps.Recorder == nil || deps.Clock == nil {
		return nil, errors.New("container garbage collection: Runtime, Containers, Pods, SourcesReady, Recorder and Clock are required")
	}
	if cfg.Period == 0 {
		cfg.Period = DefaultPeriod
	}
	return &Manager{cfg: cfg, deps: deps}, nil
}

// Run collects now and then every period until ctx ends, as upstream's StartGarbageCollection:
// a failure is logged and is a ContainerGCFailed node event.
func (m *Manager) Run(ctx context.Context) {
	failed := false
	for {
		if err := m.GarbageCollect(ctx, m.deps.SourcesReady()); err != nil {
			klog.ErrorS(err, "Container garbage collection failed; it runs again after the period", "period", m.cfg.Period)
			m.deps.Recorder.NodeEventf(v1.EventTypeWarning, "ContainerGCFailed", "%s", err.Error())
			failed = true
		} else {
			level := klog.Level(4)
			if failed {
				level = 1
			}
			klog.V(level).InfoS("Container garbage collection succeeded")
			failed = false
		}
		select {
		case <-ctx.Done():
			return
		case <-m.deps.Clock.After(m.cfg.Period):
		}
	}
}

// GarbageCollect is upstream's containerGC.GarbageCollect: dead containers by the policy, then
// sandboxes that are not ready and hold no container, then the log directories of pods that
// are gone. A container or sandbox that cannot be removed is logged and tried again next time;
// the error says what could not be listed.
func (m *Manager) GarbageCollect(ctx context.Context, allSourcesReady bool) error {
	return m.collect(ctx, Scope{AllSourcesReady: allSourcesReady})
}

// DeleteAllUnusedContainers is upstream's: GarbageCollect with the same policy, where terminated
// pods that are not deleted also lose all their dead containers and sandboxes (the eviction
// manager's node-level reclaim of disk).
func (m *Manager) DeleteAllUnusedContainers(ctx context.Context) error {
	klog.InfoS("Attempting to delete unused containers")
	return m.collect(ctx, Scope{AllSourcesReady: m.deps.SourcesReady(), EvictNonDeletedPods: true})
}

func (m *Manager) collect(ctx context.Context, s Scope) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	if err := m.evictContainers(ctx, s); err != nil {
		errs = append(errs, err)
	}
	left, containers, err := m.evictSandboxes(ctx, s)
	if err != nil {
		errs = append(errs, err)
	} else {
		if err := m.evictLogDirs(left, s); err != nil {
			errs = append(errs, err)
		}
		if err := m.evictShims(left, containers); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// evictShims stops the containerd shims no sandbox or container of the runtime accounts for
// (OrphanShims), with the processes they started.
func (m *Manager) evictShims(sandboxes []*runtimeapi.PodSandbox, containers []*runtimeapi.Container) error {
	if m.cfg.Shims.Address == "" {
		return nil
	}
	root := m.cfg.ProcRoot
	if root == "" {
		root = "/proc"
	}
	shims, err := listShims(root)
	if err != nil {
		return fmt.Errorf("find containerd shims: %w", err)
	}
	if len(shims) == 0 {
		m.suspects = nil
		return nil
	}
	known := map[string]bool{}
	for _, sb := range sandboxes {
		known[sb.GetId()] = true
	}
	for _, c := range containers {
		known[c.GetId()] = true
		known[c.GetPodSandboxId()] = true
	}
	orphans, next := OrphanShims(shims, m.cfg.Shims, func(id string) bool { return known[id] }, m.suspects, m.deps.Clock.Now())
	m.suspects = next
	for _, s := range orphans {
		klog.InfoS("Stopping an orphaned containerd shim: the runtime knows no sandbox or container of its id (a start cancelled half-way leaves one)",
			"pid", s.PID, "id", s.ID, "namespace", s.Namespace, "runningFor", m.deps.Clock.Since(s.Started).Round(time.Second))
		if err := stopShim(root, s); err != nil {
			klog.ErrorS(err, "Failed to stop an orphaned containerd shim; container GC tries again at its next run", "pid", s.PID, "id", s.ID)
		}
	}
	return nil
}

func (m *Manager) evictContainers(ctx context.Context, s Scope) error {
	all, err := m.deps.Runtime.ListContainers(ctx, nil)
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	for _, c := range DeadContainers(all, m.deps.Pods, m.cfg.Policy, s, m.deps.Clock.Now()) {
		pod := klog.KRef(c.PodNamespace, c.PodName)
		if c.Unknown {
			if err := m.deps.Containers.KillContainer(ctx, c.ID, c.Name); err != nil {
				klog.ErrorS(err, "Failed to stop a container in unknown state before removing it; container GC tries again at its next run",
					"pod", pod, "podUID", c.PodUID, "container", c.Name, "containerID", c.ID)
				continue
			}
		}
		klog.V(2).InfoS("Removing dead container", "pod", pod, "podUID", c.PodUID, "container", c.Name, "containerID", c.ID, "reason", c.Reason)
		if err := m.deps.Containers.RemoveContainer(ctx, c.ID); err != nil {
			klog.ErrorS(err, "Failed to remove dead container; container GC tries again at its next run",
				"pod", pod, "podUID", c.PodUID, "container", c.Name, "containerID", c.ID)
		}
	}
	return nil
}

// evictSandboxes lists again (the containers just removed free their sandboxes, as upstream)
// and returns the sandboxes left, and the containers it listed.
func (m *Manager) evictSandboxes(ctx context.Context, s Scope) ([]*runtimeapi.PodSandbox, []*runtimeapi.Container, error) {
	containers, err := m.deps.Runtime.ListContainers(ctx, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("list containers: %w", err)
	}
	sandboxes, err := m.deps.Runtime.ListPodSandbox(ctx, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("list pod sandboxes: %w", err)
	}
	removed := map[string]bool{}
	for _, sb := range Sandboxes(sandboxes, containers, m.deps.Pods, s) {
		keys := []any{"pod", klog.KRef(sb.PodNamespace, sb.PodName), "podUID", sb.PodUID, "sandboxID", sb.ID}
		klog.V(2).InfoS("Removing sandbox", keys...)
		// Normally stopped long ago; stopping first guards against the rare case it was not.
		if err := m.deps.Runtime.StopPodSandbox(ctx, sb.ID); err != nil {
			klog.ErrorS(err, "Failed to stop sandbox before removing it; container GC tries again at its next run", keys...)
			continue
		}
		if err := m.deps.Runtime.RemovePodSandbox(ctx, sb.ID); err != nil {
			klog.ErrorS(err, "Failed to remove sandbox; container GC tries again at its next run", keys...)
			continue
		}
		removed[sb.ID] = true
	}
	var left []*runtimeapi.PodSandbox
	for _, sb := range sandboxes {
		if !removed[sb.GetId()] {
			left = append(left, sb)
		}
	}
	return left, containers, nil
}

func (m *Manager) evictLogDirs(sandboxes []*runtimeapi.PodSandbox, s Scope) error {
	if !s.AllSourcesReady {
		return nil
	}
	ents, err := os.ReadDir(m.cfg.PodLogsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the pod log directory %s: %w", m.cfg.PodLogsDir, err)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	for _, name := range LogDirs(names, sandboxes, m.deps.Pods, true) {
		path := filepath.Join(m.cfg.PodLogsDir, name)
		klog.V(2).InfoS("Removing the log directory of a pod that is gone", "podUID", LogDirUID(name), "path", path)
		if err := os.RemoveAll(path); err != nil {
			klog.ErrorS(err, "Failed to remove a pod log directory; check its permissions (container GC tries again at its next run)", "path", path)
		}
	}
	return nil
}
