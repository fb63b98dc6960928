package cri

import (
	"context"
	"errors"
	"fmt"
	"io"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// GetContainerEvents opens the runtime's container event stream, calls connected (if not nil)
// once it is open, and delivers every event on ch until the stream breaks or ctx ends; it then
// returns why, wrapped: the gRPC status stays readable with status.Code (codes.Unimplemented from
// a runtime without the stream, such as containerd before 1.7). A stream the runtime closes
// cleanly returns an error wrapping io.EOF. The signature is cri-api's
// RuntimeService.GetContainerEvents.
//
// The stream is long-lived: unlike the other calls it has no RequestTimeout, only ctx. Note that
// gRPC opens a server stream without waiting for the runtime, so connected means "requested";
// an Unimplemented answer arrives as the first receive's error.
func (c *Client) GetContainerEvents(ctx context.Context, ch chan *runtimeapi.ContainerEventResponse,
	connected func(runtimeapi.RuntimeService_GetContainerEventsClient)) error {
	stream, err := c.Runtime.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		return fmt.Errorf("cri: opening the container event stream of %q: %w", c.endpoint, err)
	}
	if connected != nil {
		connected(stream)
	}
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("cri: container event stream of %q closed by the runtime: %w", c.endpoint, err)
		}
		if err != nil {
			return fmt.Errorf("cri: receiving container events from %q: %w", c.endpoint, err)
		}
		if resp == nil {
			continue
		}
		select {
		case ch <- resp:
		case <-ctx.Done():
			return fmt.Errorf("cri: container event stream of %q: %w", c.endpoint, ctx.Err())
		}
	}
}
