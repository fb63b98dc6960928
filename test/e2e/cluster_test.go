package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nodeCondition returns the node's condition of the given type.
func nodeCondition(n *v1.Node, t v1.NodeConditionType) *v1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// waitNodeReady waits until the Node is registered and Ready.
func (cn *clusterNode) waitNodeReady(timeout time.Duration) *v1.Node {
	cn.t.Helper()
	deadline := time.Now().Add(timeout)
	var last *v1.Node
	for time.Now().Before(deadline) {
		n, err := cn.cp.client.CoreV1().Nodes().Get(context.Background(), cn.name, metav1.GetOptions{})
		if err == nil {
			last = n
			if c := nodeCondition(n, v1.NodeReady); c != nil && c.Status == v1.ConditionTrue {
				return n
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	js, _ := json.MarshalIndent(last, "", "  ")
	cn.t.Fatalf("node %s not Ready within %v; last seen:\n%s\nnodelet log:\n%s", cn.name, timeout, js, cn.logs.dump())
	return nil
}

// Acceptance 1: nodelet registers; the Node turns Ready in `kubectl get nodes`; its Lease renews.
func TestClusterNodeRegistersReadyAndLeaseRenews(t *testing.T) {
	cn := startClusterNode(t, "--node-labels", "nodelet.io/e2e=true")
	node := cn.waitNodeReady(60 * time.Second)

	for k, want := range map[string]string{"kubernetes.io/hostname": cn.name, "kubernetes.io/os": "linux",
		"kubernetes.io/arch": "amd64", "nodelet.io/e2e": "true"} {
		if got := node.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	var internal string
	for _, a := range node.Status.Addresses {
		if a.Type == v1.NodeInternalIP {
			internal = a.Address
		}
	}
	if internal != "127.0.0.1" {
		t.Errorf("InternalIP %q, want --node-ip 127.0.0.1; addresses %v", internal, node.Status.Addresses)
	}
	for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, v1.ResourcePods} {
		c, a := node.Status.Capacity[r], node.Status.Allocatable[r]
		if c.IsZero() || a.IsZero() || a.Cmp(c) > 0 {
			t.Errorf("%s: capacity %s allocatable %s, want both set and allocatable <= capacity", r, c.String(), a.String())
		}
	}
	if p := node.Status.Capacity[v1.ResourcePods]; p.Value() != 110 {
		t.Errorf("pods capacity %d, want maxPods 110", p.Value())
	}
	info := node.Status.NodeInfo
	if !strings.HasPrefix(info.ContainerRuntimeVersion, "containerd://") || info.KubeletVersion == "" ||
		info.KernelVersion == "" || info.OSImage == "" || info.OperatingSystem != "linux" {
		t.Errorf("nodeInfo incomplete: %+v", info)
	}
	for _, ct := range []v1.NodeConditionType{v1.NodeMemoryPressure, v1.NodeDiskPressure, v1.NodePIDPressure} {
		if c := nodeCondition(node, ct); c == nil || c.Status != v1.ConditionFalse {
			t.Errorf("condition %s = %+v, want False", ct, c)
		}
	}
	if r := nodeCondition(node, v1.NodeReady); r.Reason != "KubeletReady" {
		t.Errorf("Ready reason %q, want KubeletReady", r.Reason)
	}
	// What containerd 2.4.2 says it can do (CRI RuntimeStatus), as upstream's node reports it.
	if f := node.Status.Features; f == nil || f.SupplementalGroupsPolicy == nil || !*f.SupplementalGroupsPolicy {
		t.Errorf("status.features %+v, want supplementalGroupsPolicy true (containerd 2.4.2 reports it)", f)
	}
	handlers := map[string]bool{}
	for _, h := range node.Status.RuntimeHandlers {
		handlers[h.Name] = h.Features != nil && h.Features.RecursiveReadOnlyMounts != nil && *h.Features.RecursiveReadOnlyMounts
	}
	if !handlers[""] || !handlers["runc"] {
		t.Errorf("status.runtimeHandlers %+v, want the default and runc handlers with recursive read-only mounts", node.Status.RuntimeHandlers)
	}
	// status.images (issue 15): the runtime's images, largest first, with their names.
	var pauseListed bool
	for i, img := range node.Status.Images {
		if i > 0 && img.SizeBytes > node.Status.Images[i-1].SizeBytes {
			t.Errorf("status.images not largest first: %+v", node.Status.Images)
		}
		for _, name := range img.Names {
			pauseListed = pauseListed || strings.HasPrefix(name, "registry.k8s.io/pause")
		}
	}
	if !pauseListed || len(node.Status.Images) > 50 {
		t.Errorf("status.images %+v: want at most 50, the sandbox image among them", node.Status.Images)
	}
	out := cn.cp.kubectl(t, "get", "nodes", cn.name, "--no-headers")
	if f := strings.Fields(out); len(f) < 2 || f[0] != cn.name || f[1] != "Ready" {
		t.Errorf("kubectl get nodes: %q, want %s Ready", out, cn.name)
	}

	leases := cn.cp.client.CoordinationV1().Leases("kube-node-lease")
	var first time.Time
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		l, err := leases.Get(context.Background(), cn.name, metav1.GetOptions{})
		if err == nil && l.Spec.RenewTime != nil {
			if first.IsZero() {
				first = l.Spec.RenewTime.Time
				if *l.Spec.HolderIdentity != cn.name || *l.Spec.LeaseDurationSeconds != 40 {
					t.Errorf("lease holder %q duration %d, want %s and 40", *l.Spec.HolderIdentity, *l.Spec.LeaseDurationSeconds, cn.name)
				}
			} else if l.Spec.RenewTime.After(first) {
				return
			}
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("lease %s not renewed within 30 s (first renew time %v)", cn.name, first)
}
