package nodestatus

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	goruntime "runtime"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/resourcename"
)

// providedNodeIPAnnotation is cloud-provider's AnnotationAlphaProvidedIPAddr, which upstream
// removes from the node when no external cloud provider is used.
const providedNodeIPAnnotation = "alpha.kubernetes.io/provided-node-ip"

// observation is everything the status setters read from the world, gathered in one place so
// that the setters are pure functions of (node, config, observation).
type observation struct {
	now time.Time

	machine    MachineInfo
	machineErr error

	runtimeName       string
	runtimeVersion    string
	runtimeVersionErr error

	readinessErrs []error

	memoryPressure, diskPressure, pidPressure bool

	runtimeFeatures *runtimeapi.RuntimeFeatures // nil: the runtime has not said
	runtimeHandlers []*runtimeapi.RuntimeHandler

	images    []*runtimeapi.Image
	imagesErr error // the list failed: status.images keeps its previous value
}

// nodeEvent is an event upstream's setters record on the node.
type nodeEvent struct {
	eventType, reason, message string
}

// setNodeStatus fills in node.Status from the observation, as upstream's
// defaultNodeStatusFuncs do, in the same order. It returns the events to record and the
// errors of setters that could not do their job (their fields keep their previous values).
func setNodeStatus(node *v1.Node, cfg *Config, obs *observation) ([]nodeEvent, error) {
	var events []nodeEvent
	var errs []error
	if err := setAddresses(node, cfg.NodeIPs, cfg.Hostname); err != nil {
		errs = append(errs, err)
	}
	events = append(events, setMachineInfo(node, cfg, obs)...)
	if err := setVersionInfo(node, obs, cfg.Version); err != nil {
		errs = append(errs, err)
	}
	node.Status.DaemonEndpoints = v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: cfg.KubeletPort}}
	node.Status.NodeInfo.OperatingSystem = goruntime.GOOS
	node.Status.NodeInfo.Architecture = goruntime.GOARCH
	for _, pc := range pressureConditions() {
		events = append(events, setPressureCondition(node, obs.now, pc, pc.pressure(obs))...)
	}
	events = append(events, setReadyCondition(node, obs.now, obs.readinessErrs)...)
	setRuntimeFeatures(node, obs)
	if obs.imagesErr != nil {
		errs = append(errs, fmt.Errorf("error getting image list: %w", obs.imagesErr))
	} else {
		setImages(node, obs.images, cfg.MaxImages)
	}
	return events, errors.Join(errs...)
}

// maxNamesPerImage is upstream's MaxNamesPerImageInNodeStatus.
const maxNamesPerImage = 5

// setImages is upstream's Images setter: the largest images first, at most maxImages of them
// (-1: all), each with up to five names, its digests before its tags.
func setImages(node *v1.Node, images []*runtimeapi.Image, maxImages int32) {
	sorted := slices.Clone(images)
	slices.SortStableFunc(sorted, func(a, b *runtimeapi.Image) int { return cmp.Compare(b.GetSize(), a.GetSize()) })
	if maxImages > -1 && int(maxImages) < len(sorted) {
		sorted = sorted[:maxImages]
	}
	var out []v1.ContainerImage
	for _, img := range sorted {
		names := append(slices.Clone(img.GetRepoDigests()), img.GetRepoTags()...)
		if len(names) > maxNamesPerImage {
			names = names[:maxNamesPerImage]
		}
		out = append(out, v1.ContainerImage{Names: names, SizeBytes: int64(img.GetSize())})
	}
	node.Status.Images = out
}

// setRuntimeFeatures is upstream's NodeFeatures and RuntimeHandlers setters: what the runtime
// reports it can do, so that the scheduler places pods that need it (supplementalGroupsPolicy:
// Strict, user namespaces, recursive read-only mounts) on nodes that can. Nothing until the
// runtime has answered.
func setRuntimeFeatures(node *v1.Node, obs *observation) {
	if obs.runtimeFeatures == nil {
		return
	}
	node.Status.Features = &v1.NodeFeatures{SupplementalGroupsPolicy: ptr.To(obs.runtimeFeatures.GetSupplementalGroupsPolicy())}
	node.Status.RuntimeHandlers = make([]v1.NodeRuntimeHandler, len(obs.runtimeHandlers))
	for i, h := range obs.runtimeHandlers {
		node.Status.RuntimeHandlers[i] = v1.NodeRuntimeHandler{Name: h.GetName(), Features: &v1.NodeRuntimeHandlerFeatures{
			RecursiveReadOnlyMounts: ptr.To(h.GetFeatures().GetRecursiveReadOnlyMounts()),
			UserNamespaces:          ptr.To(h.GetFeatures().GetUserNamespaces()),
		}}
	}
}

// setAddresses is upstream's NodeAddress setter without a cloud provider and with the node
// IPs already chosen: the InternalIP(s), then the Hostname.
func setAddresses(node *v1.Node, nodeIPs []net.IP, hostname string) error {
	delete(node.Annotations, providedNodeIPAnnotation)
	var specified []net.IP
	for _, ip := range nodeIPs {
		if ip != nil && !ip.IsUnspecified() {
			specified = append(specified, ip)
		}
	}
	if len(specified) == 0 {
		if ip := net.ParseIP(hostname); ip != nil {
			specified = []net.IP{ip}
		} else {
			return fmt.Errorf("can't get ip address of node %s: no node IP given", node.Name)
		}
	}
	if len(specified) > 2 {
		specified = specified[:2]
	}
	addrs := make([]v1.NodeAddress, 0, len(specified)+1)
	for _, ip := range specified {
		addrs = append(addrs, v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip.String()})
	}
	node.Status.Addresses = append(addrs, v1.NodeAddress{Type: v1.NodeHostName, Address: hostname})
	return nil
}

// setMachineInfo is upstream's MachineInfo setter: capacity from the machine's facts, pods
// from MaxPods, allocatable = capacity − (kube reserved + system reserved + hard eviction
// thresholds), huge pages taken out of allocatable memory. Capacity entries it does not own
// (extended resources advertised by others) are kept.
func setMachineInfo(node *v1.Node, cfg *Config, obs *observation) []nodeEvent {
	var events []nodeEvent
	if node.Status.Capacity == nil {
		node.Status.Capacity = v1.ResourceList{}
	}
	if obs.machineErr != nil {
		node.Status.Capacity[v1.ResourceCPU] = *resource.NewMilliQuantity(0, resource.DecimalSI)
		node.Status.Capacity[v1.ResourceMemory] = resource.MustParse("0Gi")
		node.Status.Capacity[v1.ResourcePods] = *resource.NewQuantity(int64(cfg.MaxPods), resource.DecimalSI)
	} else {
		info := obs.machine
		node.Status.NodeInfo.MachineID = info.MachineID
		node.Status.NodeInfo.SystemUUID = info.SystemUUID
		node.Status.Capacity[v1.ResourceCPU] = *resource.NewMilliQuantity(int64(info.NumCPU)*1000, resource.DecimalSI)
		node.Status.Capacity[v1.ResourceMemory] = *resource.NewQuantity(info.MemoryCapacity, resource.BinarySI)
		for _, hp := range info.HugePages {
			node.Status.Capacity[hugePageResourceName(hp.PageSize)] = *resource.NewQuantity(hp.PageSize*hp.Pages, resource.BinarySI)
		}
		node.Status.Capacity[v1.ResourcePods] = *resource.NewQuantity(int64(cfg.MaxPods), resource.DecimalSI)
		if node.Status.NodeInfo.BootID != "" && node.Status.NodeInfo.BootID != info.BootID {
			events = append(events, nodeEvent{v1.EventTypeWarning, "Rebooted",
				fmt.Sprintf("Node %s has been rebooted, boot id: %s", node.Name, info.BootID)})
		}
		node.Status.NodeInfo.BootID = info.BootID
		if info.EphemeralStorageCapacity > 0 {
			node.Status.Capacity[v1.ResourceEphemeralStorage] = *resource.NewQuantity(info.EphemeralStorageCapacity, resource.BinarySI)
		}
		if info.SwapCapacity != 0 {
			node.Status.NodeInfo.Swap = &v1.NodeSwapStatus{Capacity: ptr.To(info.SwapCapacity)}
		}
	}

	if node.Status.Allocatable == nil {
		node.Status.Allocatable = v1.ResourceList{}
	}
	for k := range node.Status.Allocatable {
		if _, found := node.Status.Capacity[k]; !found && resourcename.IsExtended(k) {
			delete(node.Status.Allocatable, k)
		}
	}
	reservation := allocatableReservation(node.Status.Capacity, cfg)
	for k, v := range node.Status.Capacity {
		value := v.DeepCopy()
		if res, ok := reservation[k]; ok {
			value.Sub(res)
		}
		if value.Sign() < 0 {
			value.Set(0)
		}
		node.Status.Allocatable[k] = value
	}
	for k, v := range node.Status.Capacity {
		if resourcename.IsHugePages(k) {
			mem := node.Status.Allocatable[v1.ResourceMemory]
			mem.Sub(v)
			if mem.Sign() < 0 {
				mem.Set(0)
			}
			node.Status.Allocatable[v1.ResourceMemory] = mem
		}
	}
	return events
}

// allocatableReservation is upstream's GetNodeAllocatableReservation: per capacity resource,
// system reserved + kube reserved + the hard eviction reservation (memory.available for memory,
// nodefs.available for ephemeral-storage); zero reservations are left out.
func allocatableReservation(capacity v1.ResourceList, cfg *Config) v1.ResourceList {
	eviction := v1.ResourceList{}
	if cfg.EvictionHardMemory != nil {
		eviction[v1.ResourceMemory] = cfg.EvictionHardMemory.quantity(capacity[v1.ResourceMemory])
	}
	if cfg.EvictionHardNodefs != nil {
		eviction[v1.ResourceEphemeralStorage] = cfg.EvictionHardNodefs.quantity(capacity[v1.ResourceEphemeralStorage])
	}
	result := v1.ResourceList{}
	for k := range capacity {
		value := resource.NewQuantity(0, resource.DecimalSI)
		value.Add(cfg.SystemReserved[k])
		value.Add(cfg.KubeReserved[k])
		value.Add(eviction[k])
		if !value.IsZero() {
			result[k] = *value
		}
	}
	return result
}

// setVersionInfo is upstream's VersionInfo setter: kernel and OS image from the machine,
// "<runtime name>://<version>" ("Unknown" version when the runtime does not answer), the
// agent's version, and no kube-proxy version (DisableNodeKubeProxyVersion is locked on).
func setVersionInfo(node *v1.Node, obs *observation, kubeletVersion string) error {
	if obs.machineErr != nil {
		return fmt.Errorf("error getting version info: %w", obs.machineErr)
	}
	node.Status.NodeInfo.KernelVersion = obs.machine.KernelVersion
	node.Status.NodeInfo.OSImage = obs.machine.OSImage
	node.Status.NodeInfo.ContainerRuntimeVersion = fmt.Sprintf("%s://%s", obs.runtimeName,
		runtimeVersionString(obs.runtimeVersion, obs.runtimeVersionErr))
	node.Status.NodeInfo.KubeletVersion = kubeletVersion
	node.Status.NodeInfo.KubeProxyVersion = ""
	return nil
}

// runtimeVersionString is upstream's newRuntimeVersion(...).String(): "v2.4.2" → "2.4.2".
func runtimeVersionString(version string, err error) string {
	if err != nil {
		return "Unknown"
	}
	if v, err := utilversion.ParseSemantic(version); err == nil {
		return v.String()
	}
	if v, err := utilversion.ParseGeneric(version); err == nil {
		return v.String()
	}
	return "Unknown"
}

func hugePageResourceName(pageSize int64) v1.ResourceName {
	return v1.ResourceName(v1.ResourceHugePagesPrefix + resource.NewQuantity(pageSize, resource.BinarySI).String())
}

// NodeResources is what the MachineInfo setter gives a Node's status: capacity, and allocatable
// (capacity minus kube and system reserved and the hard eviction thresholds, huge pages out of
// memory). Standalone admission checks pods against it, as a registered node's would be.
func NodeResources(cfg Config, info MachineInfo) (capacity, allocatable v1.ResourceList) {
	cfg = cfg.withDefaults()
	n := &v1.Node{}
	setMachineInfo(n, &cfg, &observation{machine: info})
	return n.Status.Capacity, n.Status.Allocatable
}
