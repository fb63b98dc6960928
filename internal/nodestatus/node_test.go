package nodestatus

import (
	goruntime "runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNodeMeta(t *testing.T) {
	cfg := Config{
		NodeName: "node-a",
		Hostname: "node-a.example.com",
		Labels:   map[string]string{"role": "edge", v1.LabelArchStable: "override"},
		Taints:   []v1.Taint{{Key: "dedicated", Value: "edge", Effect: v1.TaintEffectNoSchedule}},
	}
	node := nodeMeta(&cfg)
	wantLabels := map[string]string{
		v1.LabelHostname:   "node-a.example.com",
		v1.LabelOSStable:   goruntime.GOOS,
		v1.LabelArchStable: "override",
		betaLabelOS:        goruntime.GOOS,
		betaLabelArch:      goruntime.GOARCH,
		"role":             "edge",
	}
	check(t, "labels", wantLabels, node.Labels)
	check(t, "taints", cfg.Taints, node.Spec.Taints)
	check(t, "annotations", map[string]string{controllerManagedAttachAnnotation: "true"}, node.Annotations)
	if node.Name != "node-a" {
		t.Errorf("name = %q", node.Name)
	}
	cfg.Taints[0].Key = "mutated"
	if node.Spec.Taints[0].Key != "dedicated" {
		t.Error("node shares the config's taints slice")
	}
}

func TestReconcileExistingNode(t *testing.T) {
	cfg := Config{NodeName: "node-a", Hostname: "node-a", Labels: map[string]string{"role": "new"}}
	initial := nodeMeta(&cfg)
	initial.Status.Capacity = v1.ResourceList{"cpu": q("4"), "memory": q("8Gi"), "hugepages-2Mi": q("1Gi")}
	initial.Status.Allocatable = v1.ResourceList{"cpu": q("4"), "memory": q("7Gi"), "hugepages-2Mi": q("1Gi")}

	tests := []struct {
		name        string
		existing    v1.Node
		wantChanged bool
		check       func(t *testing.T, n *v1.Node)
	}{
		{
			name: "up to date",
			existing: v1.Node{
				ObjectMeta: metav1.ObjectMeta{Labels: copyMap(initial.Labels), Annotations: copyMap(initial.Annotations)},
				Status:     *initial.Status.DeepCopy(),
			},
		},
		{
			name: "default labels reconciled, other labels kept, node-labels not reapplied",
			existing: v1.Node{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      map[string]string{v1.LabelHostname: "old-host", "role": "old", "team": "a"},
					Annotations: copyMap(initial.Annotations),
				},
				Status: *initial.Status.DeepCopy(),
			},
			wantChanged: true,
			check: func(t *testing.T, n *v1.Node) {
				if n.Labels[v1.LabelHostname] != "node-a" || n.Labels[v1.LabelOSStable] != goruntime.GOOS || n.Labels[betaLabelArch] != goruntime.GOARCH {
					t.Errorf("default labels not reconciled: %v", n.Labels)
				}
				if n.Labels["role"] != "old" || n.Labels["team"] != "a" {
					t.Errorf("non-default labels changed: %v", n.Labels)
				}
			},
		},
		{
			name: "attach/detach annotation added",
			existing: v1.Node{
				ObjectMeta: metav1.ObjectMeta{Labels: copyMap(initial.Labels)},
				Status:     *initial.Status.DeepCopy(),
			},
			wantChanged: true,
			check: func(t *testing.T, n *v1.Node) {
				if n.Annotations[controllerManagedAttachAnnotation] != "true" {
					t.Errorf("annotations = %v", n.Annotations)
				}
			},
		},
		{
			name:        "missing capacity and allocatable copied",
			existing:    v1.Node{ObjectMeta: metav1.ObjectMeta{Labels: copyMap(initial.Labels), Annotations: copyMap(initial.Annotations)}},
			wantChanged: true,
			check: func(t *testing.T, n *v1.Node) {
				check(t, "capacity", initial.Status.Capacity, n.Status.Capacity)
				check(t, "allocatable", initial.Status.Allocatable, n.Status.Allocatable)
			},
		},
		{
			name: "huge pages updated and stale sizes removed; extended resources kept",
			existing: v1.Node{
				ObjectMeta: metav1.ObjectMeta{Labels: copyMap(initial.Labels), Annotations: copyMap(initial.Annotations)},
				Status: v1.NodeStatus{
					Capacity:    v1.ResourceList{"cpu": q("4"), "memory": q("8Gi"), "hugepages-2Mi": q("0"), "hugepages-1Gi": q("2Gi"), "example.com/gpu": q("1")},
					Allocatable: v1.ResourceList{"cpu": q("4"), "memory": q("7Gi"), "hugepages-2Mi": q("0"), "hugepages-1Gi": q("2Gi"), "example.com/gpu": q("1")},
				},
			},
			wantChanged: true,
			check: func(t *testing.T, n *v1.Node) {
				check(t, "capacity", v1.ResourceList{"cpu": q("4"), "memory": q("8Gi"), "hugepages-2Mi": q("1Gi"), "example.com/gpu": q("1")}, n.Status.Capacity)
				check(t, "allocatable", v1.ResourceList{"cpu": q("4"), "memory": q("7Gi"), "hugepages-2Mi": q("1Gi"), "example.com/gpu": q("1")}, n.Status.Allocatable)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			existing := tc.existing.DeepCopy()
			if got := reconcileExistingNode(initial, existing); got != tc.wantChanged {
				t.Errorf("changed = %v, want %v", got, tc.wantChanged)
			}
			if tc.check != nil {
				tc.check(t, existing)
			}
		})
	}
}

func TestEnsureOSArchLabels(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{name: "present", labels: map[string]string{v1.LabelOSStable: goruntime.GOOS, v1.LabelArchStable: goruntime.GOARCH}},
		{name: "missing", labels: nil, want: true},
		{name: "wrong arch", labels: map[string]string{v1.LabelOSStable: goruntime.GOOS, v1.LabelArchStable: "s390x-not-this"}, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}}
			if got := ensureOSArchLabels(node); got != tc.want {
				t.Errorf("changed = %v, want %v", got, tc.want)
			}
			if node.Labels[v1.LabelOSStable] != goruntime.GOOS || node.Labels[v1.LabelArchStable] != goruntime.GOARCH {
				t.Errorf("labels = %v", node.Labels)
			}
		})
	}
}

func TestNodeStatusHasChanged(t *testing.T) {
	ts := func(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }
	base := v1.NodeStatus{
		Capacity: v1.ResourceList{"cpu": q("4")},
		Conditions: []v1.NodeCondition{
			{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse, LastHeartbeatTime: ts(0), LastTransitionTime: ts(0)},
			{Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: ts(0), LastTransitionTime: ts(0)},
		},
	}
	tests := []struct {
		name   string
		modify func(s *v1.NodeStatus)
		want   bool
	}{
		{name: "identical", modify: func(*v1.NodeStatus) {}},
		{name: "heartbeats only", modify: func(s *v1.NodeStatus) {
			s.Conditions[0].LastHeartbeatTime, s.Conditions[1].LastHeartbeatTime = ts(time.Minute), ts(time.Minute)
		}},
		{name: "conditions reordered", modify: func(s *v1.NodeStatus) { s.Conditions[0], s.Conditions[1] = s.Conditions[1], s.Conditions[0] }},
		{name: "condition status", modify: func(s *v1.NodeStatus) { s.Conditions[1].Status = v1.ConditionFalse }, want: true},
		{name: "condition message", modify: func(s *v1.NodeStatus) { s.Conditions[1].Message = "x" }, want: true},
		{name: "condition added", modify: func(s *v1.NodeStatus) {
			s.Conditions = append(s.Conditions, v1.NodeCondition{Type: v1.NodeDiskPressure})
		}, want: true},
		{name: "capacity", modify: func(s *v1.NodeStatus) { s.Capacity["cpu"] = q("8") }, want: true},
		{name: "same capacity written differently", modify: func(s *v1.NodeStatus) { s.Capacity["cpu"] = q("4000m") }},
		{name: "node info", modify: func(s *v1.NodeStatus) { s.NodeInfo.ContainerRuntimeVersion = "containerd://Unknown" }, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status := base.DeepCopy()
			tc.modify(status)
			if got := nodeStatusHasChanged(&base, status); got != tc.want {
				t.Errorf("changed = %v, want %v", got, tc.want)
			}
		})
	}
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
