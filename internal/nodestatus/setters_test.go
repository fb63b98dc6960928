package nodestatus

import (
	"errors"
	"net"
	"reflect"
	goruntime "runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestSetAddresses(t *testing.T) {
	tests := []struct {
		name     string
		ips      []net.IP
		hostname string
		want     []v1.NodeAddress
		wantErr  bool
	}{
		{
			name: "one IP", ips: []net.IP{net.ParseIP("10.0.0.5")}, hostname: "node-a",
			want: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.5"}, {Type: v1.NodeHostName, Address: "node-a"}},
		},
		{
			name: "dual stack", ips: []net.IP{net.ParseIP("fd00::5"), net.ParseIP("10.0.0.5")}, hostname: "node-a",
			want: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "fd00::5"}, {Type: v1.NodeInternalIP, Address: "10.0.0.5"}, {Type: v1.NodeHostName, Address: "node-a"}},
		},
		{
			name: "unspecified IP falls back to a hostname that is an IP", ips: []net.IP{net.IPv4zero}, hostname: "192.168.1.9",
			want: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "192.168.1.9"}, {Type: v1.NodeHostName, Address: "192.168.1.9"}},
		},
		{name: "no IP", hostname: "node-a", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", Annotations: map[string]string{providedNodeIPAnnotation: "10.0.0.1"}}}
			err := setAddresses(node, tc.ips, tc.hostname)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			check(t, "addresses", tc.want, node.Status.Addresses)
			if _, ok := node.Annotations[providedNodeIPAnnotation]; ok {
				t.Errorf("stale %s annotation kept", providedNodeIPAnnotation)
			}
		})
	}
}

func TestSetMachineInfo(t *testing.T) {
	gi := int64(1 << 30)
	defaulted := func(mod func(*Config)) *Config {
		cfg := Config{NodeName: "node-a", MaxPods: 110}
		if mod != nil {
			mod(&cfg)
		}
		cfg = cfg.withDefaults()
		return &cfg
	}
	// 10% is a float32, as upstream's evictionapi percentages: 10% of 100Gi is 10737418400.
	nodefs100Gi := *resource.NewQuantity(96636764000, resource.BinarySI)
	machine := MachineInfo{NumCPU: 4, MemoryCapacity: 8 * gi, EphemeralStorageCapacity: 100 * gi, BootID: "boot-1", MachineID: "m", SystemUUID: "u"}
	tests := []struct {
		name            string
		cfg             *Config
		machine         MachineInfo
		machineErr      error
		node            v1.NodeStatus
		wantCapacity    v1.ResourceList
		wantAllocatable v1.ResourceList
		wantEvents      []string
	}{
		{
			name: "defaults reserve 100Mi of memory and 10% of ephemeral-storage", cfg: defaulted(nil), machine: machine,
			wantCapacity:    v1.ResourceList{"cpu": q("4"), "memory": q("8Gi"), "ephemeral-storage": q("100Gi"), "pods": q("110")},
			wantAllocatable: v1.ResourceList{"cpu": q("4"), "memory": *resource.NewQuantity(8*gi-100<<20, resource.BinarySI), "ephemeral-storage": nodefs100Gi, "pods": q("110")},
		},
		{
			name: "kube and system reserved add up with the eviction threshold",
			cfg: defaulted(func(c *Config) {
				c.KubeReserved = v1.ResourceList{"cpu": q("500m"), "memory": q("1Gi")}
				c.SystemReserved = v1.ResourceList{"cpu": q("250m"), "memory": q("512Mi"), "ephemeral-storage": q("10Gi")}
				c.EvictionHardMemory = &Threshold{Quantity: ptrQ("500Mi")}
				c.EvictionHardNodefs = &Threshold{}
				c.MaxPods = 50
			}),
			machine:         machine,
			wantCapacity:    v1.ResourceList{"cpu": q("4"), "memory": q("8Gi"), "ephemeral-storage": q("100Gi"), "pods": q("50")},
			wantAllocatable: v1.ResourceList{"cpu": q("3250m"), "memory": q("6156Mi"), "ephemeral-storage": q("90Gi"), "pods": q("50")},
		},
		{
			name:            "reservations larger than capacity clamp to zero",
			cfg:             defaulted(func(c *Config) { c.KubeReserved = v1.ResourceList{"cpu": q("8")} }),
			machine:         MachineInfo{NumCPU: 2, MemoryCapacity: 50 << 20, EphemeralStorageCapacity: gi},
			wantCapacity:    v1.ResourceList{"cpu": q("2"), "memory": q("50Mi"), "ephemeral-storage": q("1Gi"), "pods": q("110")},
			wantAllocatable: v1.ResourceList{"cpu": q("0"), "memory": q("0"), "ephemeral-storage": q("966367640"), "pods": q("110")},
		},
		{
			name:            "huge pages are capacity and come out of allocatable memory",
			cfg:             defaulted(func(c *Config) { c.EvictionHardMemory = &Threshold{Percentage: 0} }),
			machine:         MachineInfo{NumCPU: 1, MemoryCapacity: 4 * gi, EphemeralStorageCapacity: 10 * gi, HugePages: []HugePages{{PageSize: 2 << 20, Pages: 512}, {PageSize: gi, Pages: 0}}},
			wantCapacity:    v1.ResourceList{"cpu": q("1"), "memory": q("4Gi"), "ephemeral-storage": q("10Gi"), "pods": q("110"), "hugepages-2Mi": q("1Gi"), "hugepages-1Gi": q("0")},
			wantAllocatable: v1.ResourceList{"cpu": q("1"), "memory": q("3Gi"), "ephemeral-storage": q("9663676400"), "pods": q("110"), "hugepages-2Mi": q("1Gi"), "hugepages-1Gi": q("0")},
		},
		{
			name: "extended resources others advertise are kept; stale allocatable ones go", cfg: defaulted(nil), machine: machine,
			node: v1.NodeStatus{
				Capacity:    v1.ResourceList{"example.com/dongle": q("2")},
				Allocatable: v1.ResourceList{"example.com/dongle": q("2"), "example.com/gone": q("1")},
			},
			wantCapacity:    v1.ResourceList{"cpu": q("4"), "memory": q("8Gi"), "ephemeral-storage": q("100Gi"), "pods": q("110"), "example.com/dongle": q("2")},
			wantAllocatable: v1.ResourceList{"cpu": q("4"), "memory": *resource.NewQuantity(8*gi-100<<20, resource.BinarySI), "ephemeral-storage": nodefs100Gi, "pods": q("110"), "example.com/dongle": q("2")},
		},
		{
			name: "machine info error reports zero cpu and memory", cfg: defaulted(nil), machineErr: errors.New("no /proc"),
			wantCapacity:    v1.ResourceList{"cpu": q("0"), "memory": q("0"), "pods": q("110")},
			wantAllocatable: v1.ResourceList{"cpu": q("0"), "memory": q("0"), "pods": q("110")},
		},
		{
			name: "a new boot ID records a reboot", cfg: defaulted(nil), machine: machine,
			node:            v1.NodeStatus{NodeInfo: v1.NodeSystemInfo{BootID: "boot-0"}},
			wantCapacity:    v1.ResourceList{"cpu": q("4"), "memory": q("8Gi"), "ephemeral-storage": q("100Gi"), "pods": q("110")},
			wantAllocatable: v1.ResourceList{"cpu": q("4"), "memory": *resource.NewQuantity(8*gi-100<<20, resource.BinarySI), "ephemeral-storage": nodefs100Gi, "pods": q("110")},
			wantEvents:      []string{"Warning Rebooted Node node-a has been rebooted, boot id: boot-1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}, Status: tc.node}
			events := setMachineInfo(node, tc.cfg, &observation{machine: tc.machine, machineErr: tc.machineErr})
			check(t, "capacity", tc.wantCapacity, node.Status.Capacity)
			check(t, "allocatable", tc.wantAllocatable, node.Status.Allocatable)
			check(t, "events", tc.wantEvents, eventStrings(events))
			if tc.machineErr == nil && node.Status.NodeInfo.BootID != tc.machine.BootID {
				t.Errorf("bootID = %q, want %q", node.Status.NodeInfo.BootID, tc.machine.BootID)
			}
		})
	}
}

func TestSetVersionInfo(t *testing.T) {
	tests := []struct {
		name    string
		obs     observation
		want    string
		wantErr bool
	}{
		{name: "v prefix dropped", obs: observation{runtimeName: "containerd", runtimeVersion: "v2.4.2"}, want: "containerd://2.4.2"},
		{name: "generic version", obs: observation{runtimeName: "cri-o", runtimeVersion: "1.31"}, want: "cri-o://1.31"},
		{name: "runtime down", obs: observation{runtimeName: "containerd", runtimeVersionErr: errors.New("unavailable")}, want: "containerd://Unknown"},
		{name: "unparsable version", obs: observation{runtimeName: "containerd", runtimeVersion: "main-dirty"}, want: "containerd://Unknown"},
		{name: "machine info error leaves the fields", obs: observation{runtimeName: "containerd", machineErr: errors.New("x")}, want: "old", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.obs.machine = MachineInfo{KernelVersion: "6.8.0", OSImage: "Debian GNU/Linux 13 (trixie)"}
			node := &v1.Node{Status: v1.NodeStatus{NodeInfo: v1.NodeSystemInfo{ContainerRuntimeVersion: "old", KubeProxyVersion: "v1.30.0"}}}
			err := setVersionInfo(node, &tc.obs, "v1.37.1")
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			info := node.Status.NodeInfo
			if info.ContainerRuntimeVersion != tc.want {
				t.Errorf("containerRuntimeVersion = %q, want %q", info.ContainerRuntimeVersion, tc.want)
			}
			if tc.wantErr {
				return
			}
			want := v1.NodeSystemInfo{KernelVersion: "6.8.0", OSImage: "Debian GNU/Linux 13 (trixie)", ContainerRuntimeVersion: tc.want, KubeletVersion: "v1.37.1"}
			check(t, "nodeInfo", want, info)
		})
	}
}

func TestPressureConditions(t *testing.T) {
	old := metav1.NewTime(t0.Add(-time.Hour))
	now := t0
	mem := pressureConditions()[0]
	tests := []struct {
		name       string
		existing   []v1.NodeCondition
		pressure   bool
		want       v1.NodeCondition
		wantEvents []string
	}{
		{
			name: "new condition without pressure",
			want: v1.NodeCondition{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientMemory",
				Message: "kubelet has sufficient memory available", LastHeartbeatTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)},
			wantEvents: []string{"Normal NodeHasSufficientMemory Node node-a status is now: NodeHasSufficientMemory"},
		},
		{
			name: "unchanged keeps its transition time and gets a heartbeat",
			existing: []v1.NodeCondition{{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientMemory",
				Message: "kubelet has sufficient memory available", LastHeartbeatTime: old, LastTransitionTime: old}},
			want: v1.NodeCondition{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientMemory",
				Message: "kubelet has sufficient memory available", LastHeartbeatTime: metav1.NewTime(now), LastTransitionTime: old},
		},
		{
			name: "pressure starts",
			existing: []v1.NodeCondition{{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientMemory",
				Message: "kubelet has sufficient memory available", LastHeartbeatTime: old, LastTransitionTime: old}},
			pressure: true,
			want: v1.NodeCondition{Type: v1.NodeMemoryPressure, Status: v1.ConditionTrue, Reason: "KubeletHasInsufficientMemory",
				Message: "kubelet has insufficient memory available", LastHeartbeatTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)},
			wantEvents: []string{"Normal NodeHasInsufficientMemory Node node-a status is now: NodeHasInsufficientMemory"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}, Status: v1.NodeStatus{Conditions: tc.existing}}
			events := setPressureCondition(node, now, mem, tc.pressure)
			if len(node.Status.Conditions) != 1 {
				t.Fatalf("conditions = %+v, want one", node.Status.Conditions)
			}
			check(t, "condition", tc.want, node.Status.Conditions[0])
			check(t, "events", tc.wantEvents, eventStrings(events))
		})
	}
}

func TestReadyCondition(t *testing.T) {
	old := metav1.NewTime(t0.Add(-time.Hour))
	now := metav1.NewTime(t0)
	fullCapacity := v1.ResourceList{"cpu": q("1"), "memory": q("1Gi"), "pods": q("110"), "ephemeral-storage": q("1Gi")}
	ready := v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady",
		Message: "kubelet is posting ready status", LastHeartbeatTime: old, LastTransitionTime: old}
	notReady := v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionFalse, Reason: "KubeletNotReady",
		Message: "container runtime is down", LastHeartbeatTime: old, LastTransitionTime: old}
	tests := []struct {
		name       string
		capacity   v1.ResourceList
		existing   []v1.NodeCondition
		errs       []error
		want       v1.NodeCondition
		wantEvents []string
	}{
		{
			name: "new and ready: appended without an event", capacity: fullCapacity,
			want: v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady",
				Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now},
		},
		{
			name: "still ready keeps the transition time", capacity: fullCapacity, existing: []v1.NodeCondition{ready},
			want: v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady",
				Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: old},
		},
		{
			name: "runtime down", capacity: fullCapacity, existing: []v1.NodeCondition{ready},
			errs: []error{errors.New("container runtime is down")},
			want: v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionFalse, Reason: "KubeletNotReady",
				Message: "container runtime is down", LastHeartbeatTime: now, LastTransitionTime: now},
			wantEvents: []string{"Normal NodeNotReady Node node-a status is now: NodeNotReady"},
		},
		{
			name: "a new message without a new status keeps the transition time", capacity: fullCapacity, existing: []v1.NodeCondition{notReady},
			errs: []error{errors.New("PLEG is not healthy: pleg was last seen active 3m0s ago; threshold is 3m0s")},
			want: v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionFalse, Reason: "KubeletNotReady",
				Message: "PLEG is not healthy: pleg was last seen active 3m0s ago; threshold is 3m0s", LastHeartbeatTime: now, LastTransitionTime: old},
		},
		{
			name: "runtime back up", capacity: fullCapacity, existing: []v1.NodeCondition{notReady},
			want: v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady",
				Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now},
			wantEvents: []string{"Normal NodeReady Node node-a status is now: NodeReady"},
		},
		{
			name: "errors and missing capacity aggregate", capacity: v1.ResourceList{"cpu": q("1"), "pods": q("110")},
			errs: []error{errors.New("container runtime is down"), errors.New("network plugin not ready")},
			want: v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionFalse, Reason: "KubeletNotReady",
				Message:           "[container runtime is down, network plugin not ready, missing node capacity for resources: memory, ephemeral-storage]",
				LastHeartbeatTime: now, LastTransitionTime: now},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"},
				Status: v1.NodeStatus{Capacity: tc.capacity, Conditions: append([]v1.NodeCondition(nil), tc.existing...)}}
			events := setReadyCondition(node, t0, tc.errs)
			check(t, "conditions", []v1.NodeCondition{tc.want}, node.Status.Conditions)
			check(t, "events", tc.wantEvents, eventStrings(events))
		})
	}
}

func TestSetNodeStatus(t *testing.T) {
	cfg := Config{NodeName: "node-a", NodeIPs: []net.IP{net.ParseIP("10.0.0.5")}, Version: "v1.37.1", KubeletPort: 10250}
	cfg = cfg.withDefaults()
	obs := &observation{now: t0, machine: testMachine().info, runtimeName: "containerd", runtimeVersion: "v2.4.2"}
	node := nodeMeta(&cfg)
	events, err := setNodeStatus(node, &cfg, obs)
	if err != nil {
		t.Fatalf("setNodeStatus: %v", err)
	}
	var types []v1.NodeConditionType
	for _, c := range node.Status.Conditions {
		types = append(types, c.Type)
	}
	check(t, "condition order", []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure, v1.NodeReady}, types)
	if c := condition(node, v1.NodeReady); c.Status != v1.ConditionTrue {
		t.Errorf("Ready = %+v, want True", c)
	}
	wantInfo := v1.NodeSystemInfo{
		MachineID: "machine-1", SystemUUID: "uuid-1", BootID: "boot-1", KernelVersion: "6.8.0-generic",
		OSImage: "Ubuntu 24.04 LTS", ContainerRuntimeVersion: "containerd://2.4.2", KubeletVersion: "v1.37.1",
		OperatingSystem: goruntime.GOOS, Architecture: goruntime.GOARCH,
	}
	check(t, "nodeInfo", wantInfo, node.Status.NodeInfo)
	if got := node.Status.DaemonEndpoints.KubeletEndpoint.Port; got != 10250 {
		t.Errorf("kubelet port = %d, want 10250", got)
	}
	wantEvents := []string{
		"Normal NodeHasSufficientMemory Node node-a status is now: NodeHasSufficientMemory",
		"Normal NodeHasNoDiskPressure Node node-a status is now: NodeHasNoDiskPressure",
		"Normal NodeHasSufficientPID Node node-a status is now: NodeHasSufficientPID",
	}
	check(t, "events", wantEvents, eventStrings(events))
}

// check compares semantically (quantities by value, nil and empty alike).
func check(t *testing.T, what string, want, got any) {
	t.Helper()
	if !apiequality.Semantic.DeepEqual(want, got) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func ptrQ(s string) *resource.Quantity {
	v := resource.MustParse(s)
	return &v
}

func eventStrings(events []nodeEvent) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.eventType+" "+e.reason+" "+e.message)
	}
	return out
}

func TestSetRuntimeFeatures(t *testing.T) {
	node := &v1.Node{}
	setRuntimeFeatures(node, &observation{})
	if node.Status.Features != nil || node.Status.RuntimeHandlers != nil {
		t.Errorf("before the runtime answered: features %v handlers %v, want none", node.Status.Features, node.Status.RuntimeHandlers)
	}
	// What containerd 2.4.2 with runc 1.1.5 reports here.
	setRuntimeFeatures(node, &observation{
		runtimeFeatures: &runtimeapi.RuntimeFeatures{SupplementalGroupsPolicy: true},
		runtimeHandlers: []*runtimeapi.RuntimeHandler{
			{Features: &runtimeapi.RuntimeHandlerFeatures{RecursiveReadOnlyMounts: true}},
			{Name: "runc", Features: &runtimeapi.RuntimeHandlerFeatures{RecursiveReadOnlyMounts: true}},
		},
	})
	if f := node.Status.Features; f == nil || f.SupplementalGroupsPolicy == nil || !*f.SupplementalGroupsPolicy {
		t.Errorf("features %+v, want supplementalGroupsPolicy true", f)
	}
	hs := node.Status.RuntimeHandlers
	if len(hs) != 2 || hs[0].Name != "" || hs[1].Name != "runc" ||
		!*hs[1].Features.RecursiveReadOnlyMounts || *hs[1].Features.UserNamespaces {
		t.Errorf("runtime handlers %+v", hs)
	}
}

// status.images is upstream's Images setter: largest first, at most nodeStatusMaxImages, five
// names each, digests before tags.
func TestSetImages(t *testing.T) {
	images := []*runtimeapi.Image{
		{Id: "small", Size: 10, RepoTags: []string{"small:1"}},
		{Id: "big", Size: 300, RepoDigests: []string{"big@sha256:1"}, RepoTags: []string{"big:1", "big:2", "big:3", "big:4", "big:5"}},
		{Id: "mid", Size: 200, RepoTags: []string{"mid:1"}},
	}
	for _, tc := range []struct {
		max  int32
		want []v1.ContainerImage
	}{
		{-1, []v1.ContainerImage{{Names: []string{"big@sha256:1", "big:1", "big:2", "big:3", "big:4"}, SizeBytes: 300},
			{Names: []string{"mid:1"}, SizeBytes: 200}, {Names: []string{"small:1"}, SizeBytes: 10}}},
		{2, []v1.ContainerImage{{Names: []string{"big@sha256:1", "big:1", "big:2", "big:3", "big:4"}, SizeBytes: 300},
			{Names: []string{"mid:1"}, SizeBytes: 200}}},
		{0, nil},
	} {
		node := &v1.Node{}
		setImages(node, images, tc.max)
		if !reflect.DeepEqual(node.Status.Images, tc.want) {
			t.Errorf("max %d: %+v, want %+v", tc.max, node.Status.Images, tc.want)
		}
	}
	if images[0].Id != "small" {
		t.Error("setImages reordered its input")
	}
}

// Standalone admission checks pods against what a registered node would report: ephemeral-storage
// is the root dir's filesystem minus the hard nodefs threshold, memory minus memory.available's.
func TestNodeResources(t *testing.T) {
	tenPct := &Threshold{Percentage: 0.1}
	q := resource.MustParse("100Mi")
	capacity, allocatable := NodeResources(Config{NodeName: "n", MaxPods: 20, EvictionHardNodefs: tenPct,
		EvictionHardMemory: &Threshold{Quantity: &q}, KubeReserved: v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}},
		MachineInfo{NumCPU: 2, MemoryCapacity: 4 << 30, EphemeralStorageCapacity: 100 << 30})
	want := map[v1.ResourceName][2]string{
		v1.ResourceCPU:              {"2", "1500m"},
		v1.ResourceMemory:           {"4Gi", "3996Mi"},
		v1.ResourceEphemeralStorage: {"100Gi", "96636764000"}, // 10% as float32, as upstream,
		v1.ResourcePods:             {"20", "20"},
	}
	for r, w := range want {
		c, a := capacity[r], allocatable[r]
		if c.Cmp(resource.MustParse(w[0])) != 0 || a.Cmp(resource.MustParse(w[1])) != 0 {
			t.Errorf("%s: capacity %s allocatable %s, want %s and %s", r, c.String(), a.String(), w[0], w[1])
		}
	}
}
