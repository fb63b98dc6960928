package cri

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ReopenContainerLog asks the runtime to reopen a running container's stdout/stderr log file at
// its LogPath, creating it if it was renamed away (log rotation). The runtime fails the call when
// the container is not running.
func (c *Client) ReopenContainerLog(ctx context.Context, id string) error {
	ctx, cancel := call(ctx)
	defer cancel()
	_, err := c.Runtime.ReopenContainerLog(ctx, &runtimeapi.ReopenContainerLogRequest{ContainerId: id})
	return err
}
