package cri

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The stats verbs, with cri-api's RuntimeService / ImageManagerService signatures (see
// services.go), for the summary and resource-metrics provider (internal/stats).

// ListContainerStats returns the stats of the containers matching the filter (containerd: the
// running ones).
func (c *Client) ListContainerStats(ctx context.Context, filter *runtimeapi.ContainerStatsFilter) ([]*runtimeapi.ContainerStats, error) {
	ctx, cancel := call(ctx)
	defer cancel()
	r, err := c.Runtime.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{Filter: filter})
	if err != nil {
		return nil, err
	}
	return r.Stats, nil
}

// ListPodSandboxStats returns the stats of the sandboxes matching the filter (containerd: the
// ready ones), each with its containers' stats. Runtimes without it answer codes.Unimplemented.
func (c *Client) ListPodSandboxStats(ctx context.Context, filter *runtimeapi.PodSandboxStatsFilter) ([]*runtimeapi.PodSandboxStats, error) {
	ctx, cancel := call(ctx)
	defer cancel()
	r, err := c.Runtime.ListPodSandboxStats(ctx, &runtimeapi.ListPodSandboxStatsRequest{Filter: filter})
	if err != nil {
		return nil, err
	}
	return r.Stats, nil
}

// ImageFsInfo returns the usage of the filesystems holding images (and, when the runtime
// reports them apart, containers' writable layers).
func (c *Client) ImageFsInfo(ctx context.Context) (*runtimeapi.ImageFsInfoResponse, error) {
	ctx, cancel := call(ctx)
	defer cancel()
	return c.Image.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
}
