package nodestatus

import (
	goruntime "runtime"
	"sort"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodelet/nodelet/internal/resourcename"
)

const (
	// controllerManagedAttachAnnotation tells the attach/detach controller it manages the
	// node's volumes; upstream sets it by default (enableControllerAttachDetach).
	controllerManagedAttachAnnotation = "volumes.kubernetes.io/controller-managed-attach-detach"

	// The deprecated OS and architecture labels (k8s.io/kubelet/pkg/apis.LabelOS/LabelArch).
	betaLabelOS   = "beta.kubernetes.io/os"
	betaLabelArch = "beta.kubernetes.io/arch"
)

// defaultLabels are the labels upstream's updateDefaultLabels reconciles on an existing node.
func defaultLabels() []string {
	return []string{
		v1.LabelHostname,
		v1.LabelTopologyZone,
		v1.LabelTopologyRegion,
		v1.LabelFailureDomainBetaZone,
		v1.LabelFailureDomainBetaRegion,
		v1.LabelInstanceTypeStable,
		v1.LabelInstanceType,
		v1.LabelOSStable,
		v1.LabelArchStable,
		v1.LabelWindowsBuild,
		betaLabelOS,
		betaLabelArch,
	}
}

// nodeMeta is the Node without status: name, default labels overridden by the configured
// ones, the register-with taints and the attach/detach annotation (upstream's initialNode
// before setNodeStatus).
func nodeMeta(cfg *Config) *v1.Node {
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: cfg.NodeName,
			Labels: map[string]string{
				v1.LabelHostname:   cfg.Hostname,
				v1.LabelOSStable:   goruntime.GOOS,
				v1.LabelArchStable: goruntime.GOARCH,
				betaLabelOS:        goruntime.GOOS,
				betaLabelArch:      goruntime.GOARCH,
			},
			Annotations: map[string]string{controllerManagedAttachAnnotation: "true"},
		},
	}
	for k, v := range cfg.Labels {
		node.Labels[k] = v
	}
	if len(cfg.Taints) > 0 {
		node.Spec.Taints = append([]v1.Taint(nil), cfg.Taints...)
	}
	return node
}

// initialNode is the Node nodelet registers: nodeMeta with its status set.
func initialNode(cfg *Config, obs *observation) (*v1.Node, []nodeEvent, error) {
	node := nodeMeta(cfg)
	events, err := setNodeStatus(node, cfg, obs)
	return node, events, err
}

// reconcileExistingNode is what upstream's tryRegisterWithAPIServer does to a node that was
// registered before: it reconciles the attach/detach annotation, the default labels and the
// default and huge page resources with the initial node. It mutates existing and reports
// whether it changed. Extended resources others advertised are kept: nodelet has no device
// plugins, like an upstream kubelet whose device manager checkpoint exists.
func reconcileExistingNode(initial, existing *v1.Node) bool {
	changed := reconcileCMADAnnotation(initial, existing)
	changed = updateDefaultLabels(initial, existing) || changed
	changed = updateDefaultResources(initial, existing) || changed
	changed = reconcileHugePageResources(initial, existing) || changed
	return changed
}

func reconcileCMADAnnotation(initial, existing *v1.Node) bool {
	want, set := initial.Annotations[controllerManagedAttachAnnotation]
	if want == existing.Annotations[controllerManagedAttachAnnotation] {
		return false
	}
	if !set {
		delete(existing.Annotations, controllerManagedAttachAnnotation)
		return true
	}
	if existing.Annotations == nil {
		existing.Annotations = map[string]string{}
	}
	existing.Annotations[controllerManagedAttachAnnotation] = want
	return true
}

// updateDefaultLabels is upstream's: the default labels the initial node has are copied to
// the existing node; an empty value removes the label. Other labels (--node-labels included)
// are left as they are.
func updateDefaultLabels(initial, existing *v1.Node) bool {
	changed := false
	if existing.Labels == nil {
		existing.Labels = map[string]string{}
	}
	for _, label := range defaultLabels() {
		want, ok := initial.Labels[label]
		if !ok {
			continue
		}
		if existing.Labels[label] != want {
			existing.Labels[label] = want
			changed = true
		}
		if existing.Labels[label] == "" {
			delete(existing.Labels, label)
		}
	}
	return changed
}

// updateDefaultResources gives the existing node the initial capacity and allocatable when it
// has none.
func updateDefaultResources(initial, existing *v1.Node) bool {
	changed := false
	if existing.Status.Capacity == nil {
		if initial.Status.Capacity != nil {
			existing.Status.Capacity = initial.Status.Capacity.DeepCopy()
			changed = true
		} else {
			existing.Status.Capacity = v1.ResourceList{}
		}
	}
	if existing.Status.Allocatable == nil {
		if initial.Status.Allocatable != nil {
			existing.Status.Allocatable = initial.Status.Allocatable.DeepCopy()
			changed = true
		} else {
			existing.Status.Allocatable = v1.ResourceList{}
		}
	}
	return changed
}

// reconcileHugePageResources is upstream's reconcileHugePageResource: huge page sizes take the
// initial node's values and sizes the machine no longer has are removed.
func reconcileHugePageResources(initial, existing *v1.Node) bool {
	changed := false
	supported := map[v1.ResourceName]bool{}
	for name, capacity := range initial.Status.Capacity {
		if !resourcename.IsHugePages(name) {
			continue
		}
		supported[name] = true
		allocatable := initial.Status.Allocatable[name]
		oldCapacity, ok := existing.Status.Capacity[name]
		oldAllocatable := existing.Status.Allocatable[name]
		if !ok || oldCapacity.Cmp(capacity) != 0 {
			existing.Status.Capacity[name] = capacity.DeepCopy()
			changed = true
		}
		if !ok || oldAllocatable.Cmp(allocatable) != 0 {
			existing.Status.Allocatable[name] = allocatable.DeepCopy()
			changed = true
		}
	}
	for name := range existing.Status.Capacity {
		if resourcename.IsHugePages(name) && !supported[name] {
			delete(existing.Status.Capacity, name)
			delete(existing.Status.Allocatable, name)
			changed = true
		}
	}
	return changed
}

// ensureOSArchLabels is what upstream's updateNode does to labels: the stable OS and
// architecture labels must match the machine.
func ensureOSArchLabels(node *v1.Node) bool {
	changed := false
	for label, want := range map[string]string{v1.LabelOSStable: goruntime.GOOS, v1.LabelArchStable: goruntime.GOARCH} {
		if got, ok := node.Labels[label]; !ok || got != want {
			if node.Labels == nil {
				node.Labels = map[string]string{}
			}
			node.Labels[label] = want
			changed = true
		}
	}
	return changed
}

// nodeStatusHasChanged is upstream's: any difference but the conditions' heartbeat times.
func nodeStatusHasChanged(original, status *v1.NodeStatus) bool {
	if original == nil && status == nil {
		return false
	}
	if original == nil || status == nil {
		return true
	}
	if nodeConditionsHaveChanged(original.Conditions, status.Conditions) {
		return true
	}
	a, b := original.DeepCopy(), status.DeepCopy()
	a.Conditions, b.Conditions = nil, nil
	return !apiequality.Semantic.DeepEqual(a, b)
}

func nodeConditionsHaveChanged(original, conditions []v1.NodeCondition) bool {
	if len(original) != len(conditions) {
		return true
	}
	a := append([]v1.NodeCondition(nil), original...)
	b := append([]v1.NodeCondition(nil), conditions...)
	sort.SliceStable(a, func(i, j int) bool { return a[i].Type < a[j].Type })
	sort.SliceStable(b, func(i, j int) bool { return b[i].Type < b[j].Type })
	for i := range a {
		a[i].LastHeartbeatTime, b[i].LastHeartbeatTime = metav1.Time{}, metav1.Time{}
		if !apiequality.Semantic.DeepEqual(&a[i], &b[i]) {
			return true
		}
	}
	return false
}
