package podworkers

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/container"
)

// UpdateType says why a pod is being synced; it is upstream's kubetypes.SyncPodType, with the
// same values and names.
type UpdateType int

const (
	// SyncPodSync is a periodic or requeued sync to keep the pod in its desired state.
	SyncPodSync UpdateType = iota
	// SyncPodUpdate is a change to the pod from its source.
	SyncPodUpdate
	// SyncPodCreate is a pod new to its source.
	SyncPodCreate
	// SyncPodKill asks for the pod to have no running containers.
	SyncPodKill
)

func (t UpdateType) String() string {
	switch t {
	case SyncPodSync:
		return "sync"
	case SyncPodUpdate:
		return "update"
	case SyncPodCreate:
		return "create"
	case SyncPodKill:
		return "kill"
	}
	return "unknown"
}

// WorkType is where a pod is in its life as the pod worker sees it (upstream's PodWorkerState).
type WorkType int

const (
	// SyncPod: the pod should be running; SyncPod is called.
	SyncPod WorkType = iota
	// TerminatingPod: no new container may start and the running ones are being stopped;
	// SyncTerminatingPod is called.
	TerminatingPod
	// TerminatedPod: no container runs; SyncTerminatedPod cleans up what is left.
	TerminatedPod
)

func (w WorkType) String() string {
	switch w {
	case SyncPod:
		return "sync"
	case TerminatingPod:
		return "terminating"
	case TerminatedPod:
		return "terminated"
	}
	return "unknown"
}

// UpdatePodOptions is one request to the pod worker.
type UpdatePodOptions struct {
	UpdateType UpdateType
	// Pod is required. Pods are treated as immutable: the caller must not change a pod after
	// passing it (send a new object instead).
	Pod *v1.Pod
	// KillPodOptions applies to kills (and to any update of a terminating pod); it is dropped
	// from updates to a pod that is syncing or already terminated.
	KillPodOptions *KillPodOptions
}

// KillPodOptions tunes a kill.
type KillPodOptions struct {
	// PodTerminationGracePeriodSecondsOverride asks for a shorter grace period; a grace period
	// only ever shrinks. On the updates the pod worker hands out it is always set, to the
	// effective grace period.
	PodTerminationGracePeriodSecondsOverride *int64
	// Reason says why the pod is killed (e.g. "Evicted", "Preempting"). A kill with a reason
	// fails the pod: its status gets phase Failed, the reason and Message, and with
	// DisruptionTarget the DisruptionTarget condition (reason TerminationByKubelet), as
	// upstream's PodStatusFunc of an eviction. The last non-empty reason wins, with its message.
	Reason           string
	Message          string
	DisruptionTarget bool
	// Evict marks a kubelet eviction: an evicted pod's content may be removed at once
	// (ShouldPodContentBeRemoved). It counts only on the kill that starts the termination, as
	// upstream.
	Evict bool
}

// Syncer does the work; the runtime-facing code implements it. Every method must return
// promptly once ctx is cancelled (the pod worker cancels a sync when the pod starts
// terminating, when its grace period shrinks, and on Stop). ctx lives for one call only:
// do not keep it for goroutines that outlive the call.
type Syncer interface {
	// SyncPod makes the runtime match the pod. isTerminal reports that the pod has reached a
	// terminal phase by itself (all containers exited and will not restart); the worker then
	// moves it to terminating.
	SyncPod(ctx context.Context, updateType UpdateType, pod *v1.Pod, status *container.PodStatus) (isTerminal bool, err error)
	// SyncTerminatingPod stops every container of the pod within gracePeriod seconds (>= 1).
	// Once it returns nil, no container of the pod may run again.
	// failure, when its Reason is set, is how the kill fails the pod (see KillPodOptions).
	SyncTerminatingPod(ctx context.Context, pod *v1.Pod, status *container.PodStatus, gracePeriod int64, failure Failure) error
	// SyncTerminatedPod releases what a stopped pod still holds (volumes, cgroups, final
	// status). Once it returns nil the pod worker is finished with the pod.
	SyncTerminatedPod(ctx context.Context, pod *v1.Pod, status *container.PodStatus) error
}

// Cache is the runtime view the worker syncs on.
type Cache interface {
	// GetNewerThan blocks until the cache holds a status of the pod taken after minTime (or
	// ctx is done) and returns it.
	GetNewerThan(ctx context.Context, uid types.UID, minTime time.Time) (*container.PodStatus, error)
}

// Requeuer is the sync loop's work queue: after each sync the pod worker asks for the pod to be
// synced again after ResyncInterval (success) or BackOffPeriod (error). The sync loop answers
// with UpdatePod(SyncPodSync).
type Requeuer interface {
	Enqueue(uid types.UID, after time.Duration)
}

// Config holds the pod worker's timing.
type Config struct {
	// Clock gives the time of state changes and of each sync; nil means the real clock.
	Clock clock.PassiveClock
	// ResyncInterval is the delay before a pod is synced again after a successful sync
	// (syncFrequency); 0 means one minute.
	ResyncInterval time.Duration
	// BackOffPeriod is the delay before retrying a failed sync (upstream's backOffPeriod),
	// capped at ResyncInterval; 0 means ten seconds.
	BackOffPeriod time.Duration
	// JitterFactor, if positive, adds up to that fraction of random delay to each requeue
	// (upstream uses 0.5); 0 requeues after exactly the interval.
	JitterFactor float64
}

// Deps are the pod worker's collaborators; all are required.
type Deps struct {
	Syncer   Syncer
	Cache    Cache
	Requeuer Requeuer
	// Metrics, if set, times each sync (kubelet_pod_worker_duration_seconds).
	Metrics Metrics
	// Finished, if set, receives the UID of each pod whose worker has finished with it
	// (SyncTerminatedPod succeeded): what the pod left in the runtime may be removed at once,
	// rather than at the next housekeeping. The worker's goroutine blocks on the send until it
	// is received or Stop is called, so the receiver must keep reading (the sync loop does).
	Finished chan<- types.UID
}

// Metrics times pod syncs; operation is upstream's label: the update type (create, update,
// sync, kill) or "terminated" for the final cleanup.
type Metrics interface {
	ObservePodWorker(operation string, d time.Duration)
}

const (
	defaultResyncInterval = time.Minute
	defaultBackOffPeriod  = 10 * time.Second
)

// RetryAt is implemented by sync errors that know when the sync is worth retrying, such as a
// container waiting out its CrashLoopBackOff: the pod is requeued at that time exactly (no
// jitter), as upstream requeues a BackoffError at its back-off's end.
type RetryAt interface {
	RetryAt() time.Time
}

// Failure is how a kill with a reason fails the pod: KillPodOptions' Reason, Message and
// DisruptionTarget, as the worker hands them to SyncTerminatingPod.
type Failure struct {
	Reason, Message  string
	DisruptionTarget bool
}
