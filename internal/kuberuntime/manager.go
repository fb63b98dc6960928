package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/flowcontrol"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/containergc"
	"github.com/nodelet/nodelet/internal/kuberuntime/criconfig"
)

// SandboxService is the part of CRI that handles sandboxes.
type SandboxService interface {
	RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error)
	StopPodSandbox(ctx context.Context, podSandboxID string) error
	RemovePodSandbox(ctx context.Context, podSandboxID string) error
	PodSandboxStatus(ctx context.Context, podSandboxID string, verbose bool) (*runtimeapi.PodSandboxStatusResponse, error)
	ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error)
}

// ContainerService is the part of CRI that changes containers.
type ContainerService interface {
	CreateContainer(ctx context.Context, podSandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error)
	StartContainer(ctx context.Context, containerID string) error
	StopContainer(ctx context.Context, containerID string, timeout int64) error
	RemoveContainer(ctx context.Context, containerID string) error
	UpdateContainerResources(ctx context.Context, containerID string, linux *runtimeapi.LinuxContainerResources) error
}

// ContainerReader is the part of CRI that reads containers.
type ContainerReader interface {
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
	ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error)
}

// ImageService pulls and inspects images.
type ImageService interface {
	PullImage(ctx context.Context, image *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, podSandboxConfig *runtimeapi.PodSandboxConfig) (string, error)
	ImageStatus(ctx context.Context, image *runtimeapi.ImageSpec, verbose bool) (*runtimeapi.ImageStatusResponse, error)
}

// APIObjects reads the configMaps and secrets a pod references (apiobjects.Manager in cluster
// mode): for the environment (configMapKeyRef, secretKeyRef, envFrom) and the imagePullSecrets.
// A missing object is an apierrors NotFound error.
type APIObjects interface {
	GetConfigMap(namespace, name string) (*v1.ConfigMap, error)
	GetSecret(namespace, name string) (*v1.Secret, error)
}

// Volumes prepares a pod's volumes and a container's mounts.
type Volumes interface {
	SetUp(pod *v1.Pod) (map[string]string, error)
	Mounts(pod *v1.Pod, c *v1.Container, volumePaths map[string]string, images map[string]*runtimeapi.ImageSpec, restartCount int, podIPs []string) ([]*runtimeapi.Mount, error)
	ReadTerminationMessage(podUID types.UID, container string, restartCount int) (string, error)
	TearDown(podUID types.UID) error
}

// HookRunner runs a container's lifecycle handler (internal/lifecycle.Runner): msg is the
// failure's message for the status, err its cause. ctx bounds the hook; podIP is the host of an
// httpGet handler that names none.
type HookRunner interface {
	Run(ctx context.Context, pod *v1.Pod, c *v1.Container, containerID string, h *v1.LifecycleHandler, podIP string) (msg string, err error)
}

// Recorder records events about a pod (upstream's event reasons).
type Recorder interface {
	Eventf(pod *v1.Pod, eventType, reason, messageFmt string, args ...any)
}

// Config is the node-level settings the manager applies to every pod.
type Config struct {
	NodeName       string
	PodLogsDir     string // /var/log/pods
	CgroupRoot     string // the kubepods cgroup, "/kubepods"
	ClusterDNS     criconfig.ClusterDNS
	HostResolv     criconfig.ResolvConf
	HostIPs        []string
	MemoryCapacity int64
	Allocatable    v1.ResourceList
	// OOMGroup sets memory.oom.group on every container's cgroup (cgroups.OOMGroup: cgroup v2
	// without singleProcessOOMKill).
	OOMGroup bool
	// PodPidsLimit is set as pids.max on each pod's cgroup when it is created (podPidsLimit;
	// zero or less: no limit), as upstream's pod container manager.
	PodPidsLimit int64
	// SerializeImagePulls pulls one image at a time (serializeImagePulls, default true).
	SerializeImagePulls bool
	// CgroupFSRoot is where the cgroup hierarchies are mounted (/sys/fs/cgroup); the pod's
	// cgroup directories are removed with the pod. Empty leaves them alone.
	CgroupFSRoot string
	// Seccomp is seccompDefault and the root of Localhost profiles (<root-dir>/seccomp).
	Seccomp criconfig.Seccomp
	// HostMaskedPaths are masked in every container besides criconfig.DefaultMaskedPaths: the
	// host's per-CPU thermal_throttle directories, as upstream.
	HostMaskedPaths []string
	// DeadContainers is the container garbage collection policy, which SyncPod applies at once
	// to the pod it synced: a container's exited instances beyond its newest
	// MaxPerPodContainer+1 (the newest may be about to restart) and created at least MinAge
	// ago are removed; a negative MaxPerPodContainer keeps them all (internal/containergc
	// removes the rest). Nil: containergc.DefaultPolicy().
	DeadContainers *containergc.Policy
}

// Deps are the manager's collaborators.
type Deps struct {
	Sandboxes  SandboxService
	Containers ContainerService
	Reader     ContainerReader
	Images     ImageService
	Volumes    Volumes
	Recorder   Recorder
	Clock      clock.Clock
	// Hooks runs postStart and preStop hooks. Optional: without it no hook runs (a container
	// with hooks is started and stopped as if it had none), for tests of everything else.
	Hooks HookRunner
	// Objects resolves the environment's references to configMaps and secrets and the pod's
	// imagePullSecrets. Optional: without it (standalone mode) such references fail the
	// container with CreateContainerConfigError and images are pulled anonymously.
	Objects APIObjects
	// CredentialPlugins gives image pull credentials from credential provider plugins
	// (--image-credential-provider-config), tried after the pod's imagePullSecrets'. Optional.
	CredentialPlugins CredentialPlugins
	// Logs removes a container's rotated log files before the container is removed (the
	// log rotation manager). Optional.
	Logs LogCleaner
	// Services gives the service environment variables (KUBERNETES_SERVICE_HOST...). Optional:
	// without it (standalone mode) containers get none, as upstream.
	Services ServiceLister
	// RuntimeClasses resolves a pod's runtimeClassName to the CRI runtime handler of its
	// sandbox (cluster mode: internal/apiobjects). Optional: without it a pod that names a
	// class gets no sandbox.
	RuntimeClasses RuntimeHandlerResolver
	// Actuations records what each container was told and gives it back to the plan, for
	// in-place resize (internal/allocation). Optional: without it containers are never resized.
	Actuations Actuations
	// QoS, when set, updates the QoS cgroups before each new sandbox, so that a new pod's
	// requests count in its QoS cgroup's cpu shares from its start (upstream's
	// UpdateQOSCgroups in SyncPod).
	QoS QoSUpdater
	// PodCgroups, when set, gives each pod's cgroup its own shares and limits before the pod's
	// sandbox (upstream's pod container manager), and changes them around an in-place resize.
	PodCgroups PodCgroups
	// CgroupNames turns nodelet's cgroup names into the driver's, for the CRI cgroup_parent and
	// the host's cgroup file system (cgroups.Layout). Optional: without it, the cgroupfs driver.
	CgroupNames CgroupNames
	// Version is the runtime's name and version (CRI Version, known once the runtime answered),
	// for what it can do: image volumes need containerd 2.1 or CRI-O 1.31. Optional: without
	// it the runtime is trusted to mount image volumes.
	Version Versioner
}

// Versioner is the runtime's answer to CRI Version (cri.Client.Version), nil before it answered.
type Versioner interface {
	Version() *runtimeapi.VersionResponse
}

// RuntimeHandlerResolver is upstream's runtime class manager: the handler of a RuntimeClass,
// "" for nil or "".
type RuntimeHandlerResolver interface {
	LookupRuntimeHandler(runtimeClassName *string) (string, error)
}

// LogCleaner removes the rotated logs of a container about to be removed.
type LogCleaner interface {
	Clean(ctx context.Context, containerID string) error
}

// removeContainer removes a container and, first, its log files (the current one and the rotated
// ones), as upstream's removeContainerLog.
func (m *Manager) removeContainer(ctx context.Context, id string) error {
	if m.deps.Logs != nil {
		if err := m.deps.Logs.Clean(ctx, id); err != nil {
			klog.ErrorS(err, "Failed to remove the rotated logs of a container; they stay until the pod's log directory goes", "containerID", id)
		}
	}
	return m.deps.Containers.RemoveContainer(ctx, id)
}

// RemoveContainer removes a dead container and its logs for the container garbage collector; a
// container already gone is no error.
func (m *Manager) RemoveContainer(ctx context.Context, containerID string) error {
	if err := m.removeContainer(ctx, containerID); err != nil && !isNotFound(err) {
		return fmt.Errorf("remove container %s: %w", containerID, err)
	}
	return nil
}

// KillContainer stops a container the garbage collector found in an unknown state, as an orphan
// (its preStop hook from its annotation, the minimum grace period), as upstream's GC does.
func (m *Manager) KillContainer(ctx context.Context, containerID, name string) error {
	return m.killContainer(ctx, nil, containerID, name, "", "", nil)
}

// Manager drives the CRI runtime.
type Manager struct {
	cfg  Config
	deps Deps
	// crashBackOff and pullBackOff are keyed by pod, container and spec hash (upstream's keys).
	crashBackOff *flowcontrol.Backoff
	pullBackOff  *flowcontrol.Backoff
	pullMu       sync.Mutex // held across a pull when SerializeImagePulls
	pullFailMu   sync.Mutex
	pullFailed   map[string]time.Time // pull back-off key → time of the last failed pull
	backOffMu    sync.Mutex
	backOffs     map[string]backOffRecord // crash back-off key → its pod and delay (the checkpoint's)
}

// CrashLoopBackOff timings, as upstream: 10 s doubling to 300 s; a container that ran for
// 2 × 300 s resets its back-off.
const (
	crashBackOffInitial = 10 * time.Second
	crashBackOffMax     = 300 * time.Second
	pullBackOffInitial  = 10 * time.Second
	pullBackOffMax      = 300 * time.Second
)

// New validates deps and returns a Manager.
func New(cfg Config, deps Deps) (*Manager, error) {
	if deps.Sandboxes == nil || deps.Containers == nil || deps.Reader == nil || deps.Images == nil ||
		deps.Volumes == nil || deps.Recorder == nil || deps.Clock == nil {
		return nil, errors.New("runtime: every dependency is required")
	}
	if cfg.PodLogsDir == "" {
		cfg.PodLogsDir = "/var/log/pods"
	}
	if cfg.CgroupRoot == "" {
		cfg.CgroupRoot = "/kubepods"
	}
	policy := containergc.DefaultPolicy()
	if cfg.DeadContainers != nil {
		policy = *cfg.DeadContainers
	}
	cfg.DeadContainers = &policy
	m := &Manager{cfg: cfg, deps: deps, pullFailed: map[string]time.Time{}, backOffs: map[string]backOffRecord{},
		crashBackOff: flowcontrol.NewBackOff(crashBackOffInitial, crashBackOffMax),
		pullBackOff:  flowcontrol.NewBackOff(pullBackOffInitial, pullBackOffMax),
	}
	m.crashBackOff.Clock = deps.Clock
	m.pullBackOff.Clock = deps.Clock
	return m, nil
}

// GCBackOff forgets back-off entries that have not been used for a while (housekeeping).
func (m *Manager) GCBackOff() {
	m.crashBackOff.GC()
	m.pullBackOff.GC()
	m.forgetBackOffs()
	m.pullFailMu.Lock()
	defer m.pullFailMu.Unlock()
	for key, t := range m.pullFailed {
		if m.deps.Clock.Since(t) > 2*pullBackOffMax {
			delete(m.pullFailed, key)
		}
	}
}
