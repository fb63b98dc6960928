package container

import (
	"math"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// State is a container's state as the runtime reports it.
type State string

const (
	StateCreated State = "created"
	StateRunning State = "running"
	StateExited  State = "exited"
	StateUnknown State = "unknown"
)

// StateFromCRI maps a CRI container state.
func StateFromCRI(s runtimeapi.ContainerState) State {
	switch s {
	case runtimeapi.ContainerState_CONTAINER_CREATED:
		return StateCreated
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return StateRunning
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		return StateExited
	}
	return StateUnknown
}

// Status is one container as the runtime reports it.
type Status struct {
	ID           string // the CRI container ID
	SandboxID    string // the sandbox the container belongs to
	Name         string // the container's name in the pod spec
	State        State
	CreatedAt    time.Time
	StartedAt    time.Time
	FinishedAt   time.Time
	ExitCode     int
	Image        string // the image as the pod spec names it
	ImageRef     string // the image's digest reference (imageID)
	Hash         uint64 // HashContainer of the spec it was created from
	RestartCount int
	Reason       string // e.g. OOMKilled, Completed, Error
	Message      string // the termination message
	// Resources are what the runtime says the container runs with (CRI ContainerStatus
	// resources); nil when it says nothing.
	Resources *Resources
}

// Resources are a container's cpu and memory as the runtime applies them (upstream's
// kubecontainer.ContainerResources); a nil field is unknown.
type Resources struct {
	CPURequest, CPULimit, MemoryRequest, MemoryLimit *resource.Quantity
}

// ResourcesFromCRI is upstream's toKubeContainerResources: cpu shares back to a request, the
// CFS quota back to a limit, the memory limit; nil when the runtime reports none of them.
func ResourcesFromCRI(r *runtimeapi.ContainerResources) *Resources {
	l := r.GetLinux()
	if l == nil {
		return nil
	}
	out := &Resources{}
	if l.CpuPeriod > 0 && l.CpuQuota > 0 {
		if m := l.CpuQuota * 1000 / l.CpuPeriod; m > 0 {
			out.CPULimit = resource.NewMilliQuantity(m, resource.DecimalSI)
		}
	}
	if l.CpuShares >= 2 { // upstream's SharesToMilliCPU: MinShares and above
		out.CPURequest = resource.NewMilliQuantity(int64(math.Ceil(float64(l.CpuShares*1000)/1024)), resource.DecimalSI)
	}
	if l.MemoryLimitInBytes > 0 {
		out.MemoryLimit = resource.NewQuantity(l.MemoryLimitInBytes, resource.BinarySI)
	}
	if out.CPULimit == nil && out.CPURequest == nil && out.MemoryLimit == nil {
		return nil
	}
	return out
}

// PodStatus is everything the runtime says about one pod: its sandboxes (newest first) and
// containers (newest first), and the time the view was taken.
type PodStatus struct {
	ID        types.UID
	Name      string
	Namespace string
	IPs       []string
	// SandboxStatuses lists the pod's sandboxes, newest first.
	SandboxStatuses []*runtimeapi.PodSandboxStatus
	// ContainerStatuses lists every container the runtime still has, newest first.
	ContainerStatuses []*Status
	// ActiveContainerStatuses are the containers of the newest sandbox, newest first
	// (upstream's ActiveContainerStatuses): init progress is read from them only.
	ActiveContainerStatuses []*Status
	// TimeStamp is when the runtime was asked; a worker waits for a view newer than its last sync.
	TimeStamp time.Time
}

// FindContainerStatusByName returns the newest status of the named container, or nil.
func (s *PodStatus) FindContainerStatusByName(name string) *Status {
	if s == nil {
		return nil
	}
	for _, c := range s.ContainerStatuses {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// ContainerStatusesByName returns the statuses of the named container, newest first.
func (s *PodStatus) ContainerStatusesByName(name string) []*Status {
	if s == nil {
		return nil
	}
	var out []*Status
	for _, c := range s.ContainerStatuses {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}
