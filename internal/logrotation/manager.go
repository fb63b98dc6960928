package logrotation

import (
	"context"
	"errors"
	"fmt"
	"sync"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	kubelettypes "k8s.io/kubelet/pkg/types"
	"k8s.io/utils/clock"
)

// Runtime is what rotation needs from the container runtime: the signatures of
// k8s.io/cri-api's RuntimeService, so that both nodelet's CRI client and cri-api's fake runtime
// satisfy it.
type Runtime interface {
	// ListContainers lists the containers matching filter.
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
	// ContainerStatus returns a container's status, whose LogPath is the log to rotate.
	ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error)
	// ReopenContainerLog makes the runtime write to a new file at the container's LogPath.
	ReopenContainerLog(ctx context.Context, containerID string) error
}

// Deps are the Manager's collaborators.
type Deps struct {
	// Runtime is required.
	Runtime Runtime
	// Clock drives the monitoring ticker and names rotated logs; the real clock if nil.
	Clock clock.WithTicker
}

// Manager rotates the logs of running containers and removes the logs of removed ones
// (upstream's ContainerLogManager). It is safe for concurrent use.
type Manager struct {
	cfg     Config
	runtime Runtime
	clock   clock.WithTicker
	// locks serialises the rotations and Clean of one container.
	locks keyedMutex
	// paths remembers each running container's log path (it never changes), so that a log
	// below MaxSize costs a stat and no CRI call (profiled: asking the runtime for the status
	// of every running container every 10 s was 15% of nodelet's steady-state CPU with 100
	// pods). Pruned to the running containers at every check.
	pathsMu sync.Mutex
	paths   map[string]string
}

// New validates cfg and returns a Manager that does nothing until Run.
func New(cfg Config, deps Deps) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("container log rotation: %w", err)
	}
	if deps.Runtime == nil {
		return nil, errors.New("container log rotation: Runtime is required")
	}
	m := &Manager{cfg: cfg, runtime: deps.Runtime, clock: deps.Clock, paths: map[string]string{}}
	if m.clock == nil {
		m.clock = clock.RealClock{}
	}
	return m, nil
}

// Run checks every running container's log at once and then every MonitorInterval, rotating
// those that reached MaxSize, until ctx ends. A check of all containers finishes before the next
// one starts; ticks that come meanwhile are coalesced. With a negative MaxSize Run only waits for
// ctx.
func (m *Manager) Run(ctx context.Context) {
	if m.cfg.MaxSize < 0 {
		klog.InfoS("Container log rotation is disabled (negative containerLogMaxSize)")
		<-ctx.Done()
		return
	}
	klog.InfoS("Starting container log rotation", "maxSize", m.cfg.MaxSize, "maxFiles", m.cfg.MaxFiles,
		"monitorInterval", m.cfg.MonitorInterval, "workers", m.cfg.MaxWorkers)
	ticker := m.clock.NewTicker(m.cfg.MonitorInterval)
	defer ticker.Stop()
	for {
		m.rotateAll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		}
	}
}

// rotateAll lists the running containers and checks their logs, MaxWorkers at a time.
func (m *Manager) rotateAll(ctx context.Context) {
	running := &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}
	containers, err := m.runtime.ListContainers(ctx, running)
	if err != nil {
		if ctx.Err() == nil {
			klog.ErrorS(err, "Failed to list running containers for log rotation; will retry at the next interval, check the container runtime")
		}
		return
	}
	m.keepPaths(containers)
	work := make(chan *runtimeapi.Container)
	var wg sync.WaitGroup
	for range min(m.cfg.MaxWorkers, len(containers)) {
		wg.Go(func() {
			for c := range work {
				m.checkContainer(ctx, c.GetId(), c.GetLabels())
			}
		})
	}
feed:
	for _, c := range containers {
		// The filter asks the runtime for running containers only; check anyway, as upstream,
		// since a container that no longer runs writes nothing and needs no new log.
		if c.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		select {
		case work <- c:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
}

// logKeys are the structured-log keys naming a container for an operator.
func logKeys(id string, labels map[string]string, kv ...any) []any {
	return append([]any{
		"pod", klog.KRef(labels[kubelettypes.KubernetesPodNamespaceLabel], labels[kubelettypes.KubernetesPodNameLabel]),
		"container", labels[kubelettypes.KubernetesContainerNameLabel],
		"containerID", id,
	}, kv...)
}

// knownPath returns the log path remembered for a container.
func (m *Manager) knownPath(id string) (string, bool) {
	m.pathsMu.Lock()
	defer m.pathsMu.Unlock()
	p, ok := m.paths[id]
	return p, ok
}

// rememberPath records a container's log path.
func (m *Manager) rememberPath(id, path string) {
	m.pathsMu.Lock()
	defer m.pathsMu.Unlock()
	m.paths[id] = path
}

// keepPaths forgets the log paths of the containers not in running.
func (m *Manager) keepPaths(running []*runtimeapi.Container) {
	keep := make(map[string]bool, len(running))
	for _, c := range running {
		keep[c.GetId()] = true
	}
	m.pathsMu.Lock()
	defer m.pathsMu.Unlock()
	for id := range m.paths {
		if !keep[id] {
			delete(m.paths, id)
		}
	}
}
