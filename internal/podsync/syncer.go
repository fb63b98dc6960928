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

	"github.com/nodelet/nodelet/internal/checkpoint"
	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/kuberuntime"
	"github.com/nodelet/nodelet/internal/podworkers"
	"github.com/nodelet/nodelet/internal/prober/probeview"
)

// Runtime is the runtime manager as the syncer uses it.
type Runtime interface {
	SyncPod(ctx context.Context, pod *v1.Pod, ps *container.PodStatus, probes probeview.View) kuberuntime.SyncResult
	KillPod(ctx context.Context, pod *v1.Pod, ps *container.PodStatus, override *int64) error
	GetPodStatus(ctx context.Context, uid types.UID, name, namespace string) (*container.PodStatus, error)
}

// Statuses stores the decided statuses (the status manager, which the API status sync, the
// local API and the prober read). The syncer never reads its own output back from it: the
// previous status is in the pod's State.
type Statuses interface {
	SetPodStatus(pod *v1.Pod, st v1.PodStatus)
}

// Probes gives the prober's results for the pod's current containers (name → container ID).
type Probes interface {
	Results(pod *v1.Pod, currentIDs map[string]string) probeview.View
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

// Config is the node's facts a step needs (Input.Node).
type Config struct {
	HostIPs     []string
	RuntimeName string
}

// Syncer implements podworkers.Syncer: it gathers a step's inputs, calls Step, and applies its
// Output (the runtime, the mirror pod, the status store, the metric). Each pod's State lives
// here between syncs; the pod worker serializes the calls for one pod.
type Syncer struct {
	cfg  Config
	deps Deps

	mu     sync.Mutex
	states map[types.UID]State
	names  map[types.UID]types.NamespacedName // of the pods in states, for the checkpoint
	// restored are the start times a checkpoint kept (Restore), used by each pod's first sync
	// and kept in the checkpoint until restoredUntil for pods that have not synced yet.
	restored      map[types.UID]checkpoint.Pod
	restoredUntil time.Time
}

// Deps are the Syncer's collaborators.
type Deps struct {
	Runtime  Runtime
	Statuses Statuses
	Probes   Probes
	Clock    clock.PassiveClock
	// Mirrors keeps the mirror pods of static pods (cluster mode); nil in standalone mode.
	Mirrors Mirrors
	// Metrics records, for every pod that turns Running, the time since its source first
	// delivered it (the config.seen annotation), as upstream. Optional.
	Metrics StartMetrics
	// Allocations makes the syncer run and report pods with their allocated resources, and
	// resize them in place (internal/allocation); nil: pods run with their spec's resources,
	// never resized.
	Allocations Allocations
	// Version gives the runtime's name, which prefixes container IDs (containerd://...), once
	// the runtime answered; Config.RuntimeName stands in without it.
	Version kuberuntime.Versioner
	// Volumes makes SyncTerminatedPod release the pod's volumes, as upstream's volume manager
	// does for a terminated pod: an evicted or finished pod's emptyDirs free their memory and
	// disk before the pod is deleted. nil: volumes stay until the pod is removed.
	Volumes Volumes
}

var _ podworkers.Syncer = (*Syncer)(nil)

// New returns a Syncer; Runtime, Statuses, Probes and Clock are required.
func New(cfg Config, deps Deps) (*Syncer, error) {
	if deps.Runtime == nil || deps.Statuses == nil || deps.Probes == nil || deps.Clock == nil {
		return nil, errors.New("podsync: Runtime, Statuses, Probes and Clock are required")
	}
	return &Syncer{cfg: cfg, deps: deps, states: map[types.UID]State{}, names: map[types.UID]types.NamespacedName{}}, nil
}

// node is the node facts of a step: the runtime's name is known once the runtime answered.
func (s *Syncer) node() Config {
	n := s.cfg
	if s.deps.Version != nil {
		if name := s.deps.Version.Version().GetRuntimeName(); name != "" {
			n.RuntimeName = name
		}
	}
	return n
}

// StartMetrics records how long pods take to start (kubelet_pod_start_duration_seconds).
type StartMetrics interface {
	ObservePodStart(d time.Duration)
}

// allocated is the pod with its allocated resources.
func (s *Syncer) allocated(pod *v1.Pod) *v1.Pod {
	if s.deps.Allocations == nil {
		return pod
	}
	return s.deps.Allocations.Apply(pod)
}

// input gathers a step's inputs: the pod's State, the prober's results for the view's current
// instances, the resize conditions, the time.
func (s *Syncer) input(work podworkers.WorkType, pod *v1.Pod, ps *container.PodStatus, now time.Time) Input {
	s.mu.Lock()
	prev := s.states[pod.UID]
	restored, isRestored := s.restored[pod.UID]
	s.mu.Unlock()
	if isRestored && prev.Status.StartTime == nil && pod.Status.StartTime == nil && !restored.StartTime.IsZero() {
		// The pod's first sync since a restart: it started when the checkpoint says, as if the
		// API server's copy of its status said so.
		pod = pod.DeepCopy()
		pod.Status.StartTime = restored.StartTime.DeepCopy()
	}
	in := Input{Work: work, Pod: pod, Runtime: ps, Probes: s.deps.Probes.Results(pod, currentIDs(ps)), Prev: prev, Now: now, Node: s.node()}
	if s.deps.Allocations != nil {
		in.ResizeConditions = s.deps.Allocations.ResizeConditions(pod.UID)
	}
	return in
}

// apply stores a step's status and keeps its next State.
func (s *Syncer) apply(pod *v1.Pod, out Output) {
	s.deps.Statuses.SetPodStatus(pod, out.Status)
	s.mu.Lock()
	s.states[pod.UID] = out.Next
	s.names[pod.UID] = types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	delete(s.restored, pod.UID)
	s.mu.Unlock()
	if out.StartObserved && s.deps.Metrics != nil {
		s.deps.Metrics.ObservePodStart(out.StartDuration)
	}
}

// SyncPod decides the pod's status and, unless the pod has finished, makes sure a static pod
// has its mirror pod and makes the runtime match the spec, in upstream's order. The status is
// stored once, after the runtime acted: the waiting reasons of this sync (CrashLoopBackOff,
// ImagePullBackOff...) and a resize's outcome show in it.
func (s *Syncer) SyncPod(ctx context.Context, _ podworkers.UpdateType, pod *v1.Pod, ps *container.PodStatus) (bool, error) {
	pod = s.allocated(pod)
	if s.deps.Allocations != nil {
		s.deps.Allocations.InitActuated(pod)
		s.deps.Allocations.SyncInProgress(pod, ps, "")
	}
	in := s.input(podworkers.SyncPod, pod, ps, s.deps.Clock.Now())
	out := Step(in)
	if out.Finished {
		klog.V(2).InfoS("Pod has finished", "pod", klog.KObj(pod), "phase", out.Status.Phase)
		s.apply(pod, out)
		return true, nil
	}
	if out.SyncMirror {
		s.syncMirror(ctx, pod)
	}
	res := s.deps.Runtime.SyncPod(ctx, pod, ps, out.Runtime.Probes)
	rep := Report{Waiting: res.Waiting}
	if s.deps.Allocations != nil && res.Resized {
		// A resize applied (or failed) in this sync shows now, not on the next one, with the
		// resources the runtime reports after it. (The worker's next sync waits for a view
		// newer than this one, so the cached view is refreshed then.)
		rep.Runtime = ps
		if fresh, err := s.deps.Runtime.GetPodStatus(ctx, pod.UID, pod.Name, pod.Namespace); err == nil {
			rep.Runtime = fresh
		}
		s.deps.Allocations.SyncInProgress(pod, rep.Runtime, res.ResizeErr)
		rep.ResizeConditions = s.deps.Allocations.ResizeConditions(pod.UID)
	}
	s.apply(pod, AfterRuntime(in, out, rep))
	return false, res.Err
}

// syncMirror makes sure a static pod has an up-to-date mirror pod. A failure is logged and
// never fails the pod's sync: the pod runs whether or not the API server shows it.
func (s *Syncer) syncMirror(ctx context.Context, pod *v1.Pod) {
	if s.deps.Mirrors == nil {
		return
	}
	if err := s.deps.Mirrors.Sync(ctx, pod); err != nil {
		klog.ErrorS(err, "Failed to create or update the mirror pod of a static pod; it runs anyway, and the next sync retries. Check that the API server is reachable and that the node is registered", "pod", klog.KObj(pod), "podUID", pod.UID)
	}
}

// SyncTerminatingPod stops every container within the grace period, then records the status of
// the stopped pod. A kill with a failure (an eviction) first records the pod as Failed, with
// why, so that it shows while the containers stop (upstream's PodStatusFunc).
func (s *Syncer) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, ps *container.PodStatus, gracePeriod int64, failure podworkers.Failure) error {
	pod = s.allocated(pod)
	if failure.Reason != "" {
		in := s.input(podworkers.TerminatingPod, pod, ps, s.deps.Clock.Now())
		in.Failure = failure
		s.apply(pod, Step(in))
	}
	if err := s.deps.Runtime.KillPod(ctx, pod, ps, &gracePeriod); err != nil {
		return err
	}
	after, err := s.deps.Runtime.GetPodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		return fmt.Errorf("status of pod %s after killing it: %w", klog.KObj(pod), err)
	}
	for _, c := range after.ContainerStatuses {
		if c.State == container.StateRunning {
			return errors.New("container " + c.Name + " of pod " + klog.KObj(pod).String() + " still runs after it was stopped")
		}
	}
	s.apply(pod, Step(s.input(podworkers.TerminatingPod, pod, after, s.deps.Clock.Now())))
	return nil
}

// SyncTerminatedPod records the final status, with every container that did not end reported
// as failed and a terminal phase (upstream's TerminatePod), releases the pod's volumes, and
// then forgets the pod's State (a failed release is retried with the State kept).
func (s *Syncer) SyncTerminatedPod(_ context.Context, pod *v1.Pod, ps *container.PodStatus) error {
	pod = s.allocated(pod)
	s.apply(pod, Step(s.input(podworkers.TerminatedPod, pod, ps, s.deps.Clock.Now())))
	if s.deps.Volumes != nil {
		if err := s.deps.Volumes.TearDownVolumes(pod.UID); err != nil {
			return fmt.Errorf("release the volumes of terminated pod %s: %w", klog.KObj(pod), err)
		}
	}
	s.mu.Lock()
	delete(s.states, pod.UID)
	delete(s.names, pod.UID)
	delete(s.restored, pod.UID)
	s.mu.Unlock()
	return nil
}

// restoredKept is how long start times restored from a checkpoint are kept for pods that have
// not synced since: their sources deliver them within seconds of a start; a pod deleted while
// nodelet was down never syncs, and is forgotten.
const restoredKept = 2 * time.Minute

// Restore takes the start times a checkpoint kept, before the first sync: each pod's first
// sync starts from it (a pod whose status already has a start time keeps that one).
func (s *Syncer) Restore(pods []checkpoint.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.restored = make(map[types.UID]checkpoint.Pod, len(pods))
	for _, p := range pods {
		s.restored[p.UID] = p
	}
	s.restoredUntil = s.deps.Clock.Now().Add(restoredKept)
}

// Pods returns the start time of every pod synced (checkpoint.Sources), and for a while after
// Restore those restored that have not synced yet.
func (s *Syncer) Pods() []checkpoint.Pod {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]checkpoint.Pod, 0, len(s.states)+len(s.restored))
	for uid, st := range s.states {
		if st.Status.StartTime == nil {
			continue
		}
		n := s.names[uid]
		out = append(out, checkpoint.Pod{UID: uid, Namespace: n.Namespace, Name: n.Name, StartTime: *st.Status.StartTime})
	}
	if s.deps.Clock.Now().Before(s.restoredUntil) {
		for uid, p := range s.restored {
			if _, synced := s.states[uid]; !synced {
				p.BackOffs = nil
				out = append(out, p)
			}
		}
	}
	return out
}
