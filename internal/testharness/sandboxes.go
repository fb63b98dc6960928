package testharness

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/cri"
)

// NodeSandboxes lists the runtime's sandboxes of the pods of node name: static pod names end
// in -<node name>. Other nodes' sandboxes and raw CRI ones are never returned.
func NodeSandboxes(ctx context.Context, c *cri.Client, name string) ([]*runtimeapi.PodSandbox, error) {
	all, err := c.ListPodSandbox(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("list pod sandboxes: %w", err)
	}
	return OfNode(all, name, (*runtimeapi.PodSandbox).GetLabels), nil
}

// OfNode keeps the sandboxes or containers of the pods of node name: static pod names end in
// -<node name>.
func OfNode[T any](all []T, name string, labels func(T) map[string]string) []T {
	var out []T
	for _, x := range all {
		if strings.HasSuffix(labels(x)[container.PodNameLabel], "-"+name) {
			out = append(out, x)
		}
	}
	return out
}

// RemoveSandbox stops and removes a sandbox (and so its containers); one already gone is fine.
func RemoveSandbox(ctx context.Context, c *cri.Client, id string) error {
	if err := c.StopPodSandbox(ctx, id); err != nil && status.Code(err) != codes.NotFound {
		return fmt.Errorf("stop sandbox %s: %w", id, err)
	}
	if err := c.RemovePodSandbox(ctx, id); err != nil && status.Code(err) != codes.NotFound {
		return fmt.Errorf("remove sandbox %s: %w", id, err)
	}
	return nil
}
