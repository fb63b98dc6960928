package nodestatus

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/nodelet/nodelet/internal/kubeclient"
)

// patchNodeStatus patches the Node's status (and metadata) from old to updated, as
// component-helpers' node/util.PatchNodeStatus, which upstream's kubelet uses. That package
// also holds helpers over the whole clientset, which nodelet does not link.
func patchNodeStatus(ctx context.Context, nodes kubeclient.CoreV1, old, updated *v1.Node) (*v1.Node, error) {
	patch, err := nodeStatusPatch(old, updated)
	if err != nil {
		return nil, fmt.Errorf("prepare the status patch of node %q: %w", old.Name, err)
	}
	node, err := nodes.Nodes().Patch(ctx, old.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return nil, fmt.Errorf("failed to patch status %q for node %q: %w", patch, old.Name, err)
	}
	return node, nil
}

// nodeStatusPatch is the strategic merge patch from old to updated without spec changes. The
// addresses are replaced whole when they changed: status.addresses is (wrongly) annotated as
// merged by type, so a two-way merge patch of a changed list would be wrong.
func nodeStatusPatch(old, updated *v1.Node) ([]byte, error) {
	oldData, err := json.Marshal(old)
	if err != nil {
		return nil, err
	}
	replaceAddresses := len(old.Status.Addresses) > 0 && !equality.Semantic.DeepEqual(old.Status.Addresses, updated.Status.Addresses)
	diff := updated.DeepCopy()
	diff.Spec = old.Spec
	if replaceAddresses {
		diff.Status.Addresses = old.Status.Addresses
	}
	newData, err := json.Marshal(diff)
	if err != nil {
		return nil, err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, v1.Node{})
	if err != nil || !replaceAddresses {
		return patch, err
	}
	var patchMap map[string]any
	if err := json.Unmarshal(patch, &patchMap); err != nil {
		return nil, err
	}
	addresses := make([]any, 0, len(updated.Status.Addresses)+1)
	for _, a := range updated.Status.Addresses {
		addresses = append(addresses, map[string]any{"type": string(a.Type), "address": a.Address})
	}
	addresses = append(addresses, map[string]any{"$patch": "replace"})
	status, _ := patchMap["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		patchMap["status"] = status
	}
	status["addresses"] = addresses
	return json.Marshal(patchMap)
}
