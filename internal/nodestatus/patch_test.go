package nodestatus

import (
	"encoding/json"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

func TestNodeStatusPatch(t *testing.T) {
	base := func() *v1.Node {
		return &v1.Node{Spec: v1.NodeSpec{PodCIDR: "10.0.0.0/24"}, Status: v1.NodeStatus{
			Addresses:  []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.5"}, {Type: v1.NodeHostName, Address: "a"}},
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}}
	}
	for _, tc := range []struct {
		name   string
		change func(*v1.Node)
		want   func(t *testing.T, patched *v1.Node)
	}{
		{"condition changed", func(n *v1.Node) { n.Status.Conditions[0].Status = v1.ConditionFalse }, func(t *testing.T, p *v1.Node) {
			if p.Status.Conditions[0].Status != v1.ConditionFalse {
				t.Errorf("conditions = %v", p.Status.Conditions)
			}
		}},
		{"spec changes are not patched", func(n *v1.Node) { n.Spec.PodCIDR = "10.9.0.0/24"; n.Spec.Unschedulable = true }, func(t *testing.T, p *v1.Node) {
			if p.Spec.PodCIDR != "10.0.0.0/24" || p.Spec.Unschedulable {
				t.Errorf("spec = %+v, want unchanged", p.Spec)
			}
		}},
		{"addresses replaced whole", func(n *v1.Node) {
			n.Status.Addresses = []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.6"}}
		}, func(t *testing.T, p *v1.Node) {
			if len(p.Status.Addresses) != 1 || p.Status.Addresses[0].Address != "10.0.0.6" {
				t.Errorf("addresses = %v, want only 10.0.0.6", p.Status.Addresses)
			}
		}},
		{"labels patched", func(n *v1.Node) { n.Labels = map[string]string{"zone": "b"} }, func(t *testing.T, p *v1.Node) {
			if p.Labels["zone"] != "b" {
				t.Errorf("labels = %v", p.Labels)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, updated := base(), base()
			tc.change(updated)
			patch, err := nodeStatusPatch(old, updated)
			if err != nil {
				t.Fatal(err)
			}
			oldJSON, _ := json.Marshal(old)
			out, err := strategicpatch.StrategicMergePatch(oldJSON, patch, v1.Node{})
			if err != nil {
				t.Fatalf("apply %s: %v", patch, err)
			}
			var patched v1.Node
			if err := json.Unmarshal(out, &patched); err != nil {
				t.Fatal(err)
			}
			tc.want(t, &patched)
		})
	}
}
