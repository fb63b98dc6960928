package nodestatus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/kubeclient"
)

// Defaults, as upstream's KubeletConfiguration v1beta1 defaults them.
const (
	DefaultMaxPods = 110
	// DefaultMaxImages is upstream's nodeStatusMaxImages default.
	DefaultMaxImages       = 50
	DefaultUpdateFrequency = 10 * time.Second
	DefaultReportFrequency = 5 * time.Minute
	DefaultLeaseDuration   = 40 * time.Second
	DefaultKubeletPort     = 10250

	// nodeStatusUpdateRetry is how many times a tick tries to patch the node status
	// (upstream's nodeStatusUpdateRetry).
	nodeStatusUpdateRetry = 5
	// leaseRenewIntervalFraction is the share of the lease duration after which the lease is
	// renewed (upstream's nodeLeaseRenewIntervalFraction).
	leaseRenewIntervalFraction = 0.25
)

// Threshold is a hard eviction threshold's value: an absolute quantity or a share of capacity
// (upstream's evictionapi.ThresholdValue).
type Threshold struct {
	Quantity   *resource.Quantity
	Percentage float32
}

// quantity is upstream's evictionapi.GetThresholdQuantity.
func (t Threshold) quantity(capacity resource.Quantity) resource.Quantity {
	if t.Quantity != nil {
		return t.Quantity.DeepCopy()
	}
	return *resource.NewQuantity(int64(float64(capacity.Value())*float64(t.Percentage)), resource.BinarySI)
}

// Config is what the node agent was configured with.
type Config struct {
	// NodeName is the Node's name (--hostname-override or the host name). Required.
	NodeName string
	// Hostname is the kubernetes.io/hostname label and the Hostname address; default NodeName.
	Hostname string
	// NodeIPs are the InternalIP addresses, at most one per family, as upstream's --node-ip
	// after the caller has chosen and validated them.
	NodeIPs []net.IP
	// Labels are --node-labels; they override the default labels at registration.
	Labels map[string]string
	// Taints are --register-with-taints.
	Taints []v1.Taint
	// MaxPods is the pods capacity; default DefaultMaxPods.
	MaxPods int32
	// MaxImages is nodeStatusMaxImages: how many images status.images lists, largest first
	// (upstream's default: DefaultMaxImages); -1 lists every image, 0 none.
	MaxImages int32
	// KubeReserved and SystemReserved are subtracted from capacity to give allocatable.
	KubeReserved, SystemReserved v1.ResourceList
	// EvictionHardMemory is evictionHard["memory.available"]; nil means upstream's 100Mi.
	EvictionHardMemory *Threshold
	// EvictionHardNodefs is evictionHard["nodefs.available"]; nil means upstream's 10%.
	EvictionHardNodefs *Threshold
	// UpdateFrequency is nodeStatusUpdateFrequency: how often the status is computed.
	UpdateFrequency time.Duration
	// ReportFrequency is nodeStatusReportFrequency: how often an unchanged status is posted.
	ReportFrequency time.Duration
	// LeaseDuration is nodeLeaseDurationSeconds; the lease is renewed every quarter of it.
	LeaseDuration time.Duration
	// KubeletPort is status.daemonEndpoints.kubeletEndpoint.Port; default DefaultKubeletPort.
	KubeletPort int32
	// Version is reported as status.nodeInfo.kubeletVersion.
	Version string
	// Clock drives every timer; default the real clock.
	Clock clock.WithTicker
}

// MachineInfo is what the node status reports about the machine.
type MachineInfo struct {
	NumCPU         int
	MemoryCapacity int64 // bytes (MemTotal)
	SwapCapacity   int64 // bytes (SwapTotal)
	HugePages      []HugePages
	// EphemeralStorageCapacity is the size in bytes of the filesystem holding the root
	// directory; 0 when unknown.
	EphemeralStorageCapacity int64
	MachineID, SystemUUID    string
	BootID                   string
	KernelVersion            string
	OSImage                  string
}

// HugePages is one huge page size and how many pages of it the machine has.
type HugePages struct {
	PageSize int64 // bytes
	Pages    int64
}

// MachineInfoGetter reads the machine's facts; HostMachine in production.
type MachineInfoGetter interface {
	MachineInfo() (MachineInfo, error)
}

// RuntimeFeaturesReporter is what the runtime said of itself in its last CRI Status: nil
// features before it answered.
type RuntimeFeaturesReporter interface {
	RuntimeFeatures() (*runtimeapi.RuntimeFeatures, []*runtimeapi.RuntimeHandler)
}

// ImageLister is the CRI image service as status.images reads it.
type ImageLister interface {
	ListImages(ctx context.Context, filter *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error)
}

// RuntimeVersioner is the container runtime as the node status reports it.
type RuntimeVersioner interface {
	// RuntimeName is the CRI Version call's RuntimeName, such as "containerd".
	RuntimeName() string
	// RuntimeVersion is the CRI Version call's RuntimeVersion, such as "v2.4.2".
	RuntimeVersion(ctx context.Context) (string, error)
}

// PressureReporter is the eviction manager as the pressure conditions report it.
type PressureReporter interface {
	IsUnderMemoryPressure() bool
	IsUnderDiskPressure() bool
	IsUnderPIDPressure() bool
}

// EventRecorder records node events; client-go's record.EventRecorder satisfies it.
type EventRecorder interface {
	Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...interface{})
}

// Clients are the API groups the manager talks to: client-go's typed clients of the two groups
// rather than the whole clientset, whose other groups would only weigh on the binary.
type Clients struct {
	Core   kubeclient.CoreV1
	Leases kubeclient.LeasesGetter
}

// Deps are the components the node agent talks to.
type Deps struct {
	// Client has the node's credentials (system:node:<name>). Required.
	Client Clients
	// HeartbeatClient, when set, is used for status updates and the lease: upstream gives them
	// a client of their own whose requests time out after min(nodeStatusUpdateFrequency,
	// nodeLeaseDuration), so that a request hanging on a restarting API server does not hold
	// back the heartbeat. Default: Client.
	HeartbeatClient *Clients
	// Machine reports the machine's facts. Required.
	Machine MachineInfoGetter
	// Runtime reports the container runtime's name and version. Required.
	Runtime RuntimeVersioner
	// ReadinessErrors lists why the node is not ready (container runtime down, PLEG not
	// healthy...); none means Ready. Optional.
	ReadinessErrors func() []error
	// Pressure reports resource pressure; nil means none.
	Pressure PressureReporter
	// RuntimeFeatures reports what the runtime and its handlers can do (CRI RuntimeStatus), for
	// status.features and status.runtimeHandlers. Optional: nil reports neither.
	RuntimeFeatures RuntimeFeaturesReporter
	// Images lists the runtime's images, for status.images. Optional: nil lists none.
	Images ImageLister
	// Recorder records the node events upstream records; nil records none.
	Recorder EventRecorder
	// OnRepeatedHeartbeatFailure is called when status or lease updates fail repeatedly
	// (upstream closes the client's connections). Optional.
	OnRepeatedHeartbeatFailure func()
}

// withDefaults returns cfg with upstream's defaults filled in.
func (cfg Config) withDefaults() Config {
	if cfg.Hostname == "" {
		cfg.Hostname = cfg.NodeName
	}
	if cfg.MaxPods == 0 {
		cfg.MaxPods = DefaultMaxPods
	}
	if cfg.EvictionHardMemory == nil {
		q := resource.MustParse("100Mi")
		cfg.EvictionHardMemory = &Threshold{Quantity: &q}
	}
	if cfg.EvictionHardNodefs == nil {
		cfg.EvictionHardNodefs = &Threshold{Percentage: 0.1}
	}
	if cfg.UpdateFrequency == 0 {
		cfg.UpdateFrequency = DefaultUpdateFrequency
	}
	if cfg.ReportFrequency == 0 {
		cfg.ReportFrequency = DefaultReportFrequency
	}
	if cfg.LeaseDuration == 0 {
		cfg.LeaseDuration = DefaultLeaseDuration
	}
	if cfg.KubeletPort == 0 {
		cfg.KubeletPort = DefaultKubeletPort
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return cfg
}

func (cfg Config) validate() error {
	var errs []error
	if cfg.NodeName == "" {
		errs = append(errs, errors.New("NodeName is required"))
	}
	if len(cfg.NodeIPs) > 2 {
		errs = append(errs, fmt.Errorf("NodeIPs: at most two addresses (one per family), got %d", len(cfg.NodeIPs)))
	}
	if cfg.MaxPods < 0 {
		errs = append(errs, fmt.Errorf("MaxPods: must not be negative, got %d", cfg.MaxPods))
	}
	if cfg.LeaseDuration < time.Second {
		errs = append(errs, fmt.Errorf("LeaseDuration: must be at least 1s, got %s", cfg.LeaseDuration))
	}
	if cfg.UpdateFrequency < 0 || cfg.ReportFrequency < 0 {
		errs = append(errs, errors.New("UpdateFrequency and ReportFrequency must be positive"))
	}
	return errors.Join(errs...)
}

func (d Deps) validate() error {
	var errs []error
	if d.Client.Core == nil || d.Client.Leases == nil {
		errs = append(errs, errors.New("Deps.Client: Core and Leases are required"))
	}
	if d.Machine == nil {
		errs = append(errs, errors.New("Deps.Machine is required"))
	}
	if d.Runtime == nil {
		errs = append(errs, errors.New("Deps.Runtime is required"))
	}
	return errors.Join(errs...)
}

// heartbeat is the client for status updates and the lease.
func (d Deps) heartbeat() Clients {
	if d.HeartbeatClient != nil {
		return *d.HeartbeatClient
	}
	return d.Client
}
