package podsync

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/podworkers"
	"github.com/nodelet/nodelet/internal/prober"
	"github.com/nodelet/nodelet/internal/runtime"
	"github.com/nodelet/nodelet/internal/status"
)

// Runtime is the runtime manager as the syncer uses it.
type Runtime interface {
	SyncPod(ctx context.Context, pod *v1.Pod, ps *container.PodStatus, probes runtime.ProbeView) runtime.SyncResult
	KillPod(ctx context.Context, pod *v1.Pod, ps *container.PodStatus, override *int64) error
	GetPodStatus(ctx context.Context, uid types.UID, name, namespace string) (*container.PodStatus, error)
}

// Statuses stores generated statuses.
type Statuses interface {
	GetPodStatus(uid types.UID) (v1.PodStatus, bool)
	SetPodStatus(pod *v1.Pod, st v1.PodStatus)
}

// Probes gives the prober's results for the pod's current containers (name → container ID).
type Probes interface {
	Results(pod *v1.Pod, currentIDs map[string]string) prober.Results
}

// Mirrors keeps the mirror pod of a static pod in the API server (the mirrorpods.Manager).
type Mirrors interface {
	Sync(ctx context.Context, static *v1.Pod) error
}

// Allocations is the allocation manager as the syncer uses it: the pod's allocated resources
// (what the runtime and the status see, never the spec's wish), and its resize conditions.
type Allocations interface {
	Apply(pod *v1.Pod) *v1.Pod
	InitActuated(allocated *v1.Pod)
	SyncInProgress(allocated *v1.Pod, ps *container.PodStatus, resizeErr string) bool
	ResizeConditions(uid types.UID) []v1.PodCondition
}

// Volumes releases the volumes of a terminated pod (volumes.Manager.TearDownVolumes).
type Volumes interface {
	TearDownVolumes(uid types.UID) error
}

// Config is the node facts status generation needs.
type Config struct {
	HostIPs     []string
	RuntimeName string
}

// Syncer implements podworkers.Syncer.
type Syncer struct {
	cfg      Config
	runtime  Runtime
	statuses Statuses
	probes   Probes
	clock    clock.PassiveClock
	mirrors  Mirrors // nil in standalone mode
	metrics  StartMetrics
	alloc    Allocations // nil: pods run with their spec's resources, never resized
	volumes  Volumes     // nil: volumes stay until the pod is removed

	mu      sync.Mutex
	waiting map[types.UID]map[string]status.WaitingReason // upstream's reason cache
}

var _ podworkers.Syncer = (*Syncer)(nil)

// New returns a Syncer.
func New(cfg Config, rt Runtime, statuses Statuses, probes Probes, clk clock.PassiveClock) *Syncer {
	return &Syncer{cfg: cfg, runtime: rt, statuses: statuses, probes: probes, clock: clk, waiting: map[types.UID]map[string]status.WaitingReason{}}
}

// StartMetrics records how long pods take to start (kubelet_pod_start_duration_seconds).
type StartMetrics interface {
	ObservePodStart(d time.Duration)
}

// WithMetrics records, for every pod that turns Running, the time since its source first
// delivered it (the config.seen annotation), as upstream.
func (s *Syncer) WithMetrics(m StartMetrics) *Syncer {
	s.metrics = m
	return s
}

// WithAllocations makes the syncer run and report pods with their allocated resources, and
// resize them in place (internal/allocation).
func (s *Syncer) WithAllocations(a Allocations) *Syncer {
	s.alloc = a
	return s
}

// allocated is the pod with its allocated resources.
func (s *Syncer) allocated(pod *v1.Pod) *v1.Pod {
	if s.alloc == nil {
		return pod
	}
	return s.alloc.Apply(pod)
}

// WithVolumes makes SyncTerminatedPod release the pod's volumes, as upstream's volume manager
// does for a terminated pod: an evicted or finished pod's emptyDirs free their memory and disk
// before the pod is deleted.
func (s *Syncer) WithVolumes(v Volumes) *Syncer {
	s.volumes = v
	return s
}

// WithMirrors makes SyncPod keep the mirror pods of static pods (cluster mode).
func (s *Syncer) WithMirrors(m Mirrors) *Syncer {
	s.mirrors = m
	return s
}

// probeResults are the prober's results for the containers the runtime runs now.
func (s *Syncer) probeResults(pod *v1.Pod, ps *container.PodStatus) prober.Results {
	current := map[string]string{}
	if ps != nil {
		for _, c := range ps.ContainerStatuses { // newest first
			if _, seen := current[c.Name]; !seen {
				current[c.Name] = c.ID
			}
		}
	}
	return s.probes.Results(pod, current)
}

func (s *Syncer) generate(pod *v1.Pod, ps *container.PodStatus, terminal bool) v1.PodStatus {
	old, _ := s.statuses.GetPodStatus(pod.UID)
	s.mu.Lock()
	waiting := s.waiting[pod.UID]
	s.mu.Unlock()
	probes := s.probeResults(pod, ps)
	var resize []v1.PodCondition
	if s.alloc != nil {
		resize = s.alloc.ResizeConditions(pod.UID)
	}
	st := status.Generate(status.Input{Pod: pod, Runtime: ps, Old: old, Waiting: waiting, HostIPs: s.cfg.HostIPs,
		Ready: probes.Ready, Started: probes.Started, ResizeConditions: resize,
		PodIsTerminal: terminal, RuntimeName: s.cfg.RuntimeName, Now: s.clock.Now()})
	s.observeStart(pod, old, st)
	s.statuses.SetPodStatus(pod, st)
	return st
}

// observeStart records the pod's start duration when its phase goes from Pending (or unknown)
// to Running, measured from the config.seen annotation.
func (s *Syncer) observeStart(pod *v1.Pod, old, st v1.PodStatus) {
	if s.metrics == nil || st.Phase != v1.PodRunning || (old.Phase != v1.PodPending && old.Phase != "") {
		return
	}
	seen, err := time.Parse(time.RFC3339Nano, pod.Annotations[podconfig.ConfigFirstSeenAnnotationKey])
	if err != nil {
		return
	}
	s.metrics.ObservePodStart(s.clock.Since(seen))
}

// SyncPod records the pod's status, then (unless the pod has finished) makes sure a static pod
// has its mirror pod and makes the runtime match the spec, in upstream's order. The waiting
// reasons of this sync (CrashLoopBackOff, ImagePullBackOff...) show in the status the next sync
// generates, as upstream's reason cache.
func (s *Syncer) SyncPod(ctx context.Context, _ podworkers.UpdateType, pod *v1.Pod, ps *container.PodStatus) (bool, error) {
	pod = s.allocated(pod)
	if s.alloc != nil {
		s.alloc.InitActuated(pod)
		s.alloc.SyncInProgress(pod, ps, "")
	}
	st := s.generate(pod, ps, false)
	if status.IsTerminal(st) {
		klog.V(2).InfoS("Pod has finished", "pod", klog.KObj(pod), "phase", st.Phase)
		return true, nil
	}
	s.syncMirror(ctx, pod)
	probes := s.probeResults(pod, ps)
	res := s.runtime.SyncPod(ctx, pod, ps, runtime.ProbeView{LivenessFailed: probes.LivenessFailed,
		StartupSucceeded: probes.StartupSucceeded, StartupFailed: probes.StartupFailed})
	s.mu.Lock()
	s.waiting[pod.UID] = res.Waiting
	s.mu.Unlock()
	if s.alloc != nil && res.Resized {
		// A resize applied (or failed) in this sync shows now, not on the next one, with the
		// resources the runtime reports after it. (The worker's next sync waits for a view
		// newer than this one, so the cached view is refreshed then.)
		if fresh, err := s.runtime.GetPodStatus(ctx, pod.UID, pod.Name, pod.Namespace); err == nil {
			ps = fresh
		}
		s.alloc.SyncInProgress(pod, ps, res.ResizeErr)
	}
	if len(res.Waiting) > 0 || res.Resized {
		// Show the reasons now rather than on the next sync.
		s.generate(pod, ps, false)
	}
	return false, res.Err
}

// syncMirror makes sure a static pod that is not being deleted has an up-to-date mirror pod. A
// failure is logged and never fails the pod's sync: the pod runs whether or not the API server
// shows it.
func (s *Syncer) syncMirror(ctx context.Context, pod *v1.Pod) {
	if s.mirrors == nil || !podconfig.IsStaticPod(pod) || pod.DeletionTimestamp != nil {
		return
	}
	if err := s.mirrors.Sync(ctx, pod); err != nil {
		klog.ErrorS(err, "Failed to create or update the mirror pod of a static pod; it runs anyway, and the next sync retries. Check that the API server is reachable and that the node is registered", "pod", klog.KObj(pod), "podUID", pod.UID)
	}
}

// SyncTerminatingPod stops every container within the grace period, then records the status of
// the stopped pod. A kill with a failure (an eviction) fails the pod's status first.
func (s *Syncer) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, ps *container.PodStatus, gracePeriod int64, failure podworkers.Failure) error {
	pod = s.allocated(pod)
	if failure.Reason != "" {
		// As upstream's PodStatusFunc: the pod shows as failed, with why, while it stops.
		st := s.generate(pod, ps, false)
		status.Fail(&st, pod, failure.Reason, failure.Message, failure.DisruptionTarget, s.clock.Now())
		s.statuses.SetPodStatus(pod, st)
	}
	if err := s.runtime.KillPod(ctx, pod, ps, &gracePeriod); err != nil {
		return err
	}
	after, err := s.runtime.GetPodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		return fmt.Errorf("status of pod %s after killing it: %w", klog.KObj(pod), err)
	}
	for _, c := range after.ContainerStatuses {
		if c.State == container.StateRunning {
			return errors.New("container " + c.Name + " of pod " + klog.KObj(pod).String() + " still runs after it was stopped")
		}
	}
	s.generate(pod, after, false)
	return nil
}

// SyncTerminatedPod records the final status, with every container that did not end reported
// as failed and a terminal phase (upstream's TerminatePod), and forgets the pod's waiting
// reasons.
func (s *Syncer) SyncTerminatedPod(_ context.Context, pod *v1.Pod, ps *container.PodStatus) error {
	pod = s.allocated(pod)
	final := status.Terminate(pod, s.generate(pod, ps, true), podconfig.IsStaticPod(pod))
	s.statuses.SetPodStatus(pod, final)
	if s.volumes != nil {
		if err := s.volumes.TearDownVolumes(pod.UID); err != nil {
			return fmt.Errorf("release the volumes of terminated pod %s: %w", klog.KObj(pod), err)
		}
	}
	s.mu.Lock()
	delete(s.waiting, pod.UID)
	s.mu.Unlock()
	return nil
}
