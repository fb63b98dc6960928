package cri

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The streaming verbs return the URL of the runtime's own streaming server (containerd serves it
// on 127.0.0.1 and a random port by default), which the kubelet API then proxies: the runtime
// prepares the session, the client's connection is upgraded end to end.

// Exec prepares an exec session in a running container.
func (c *Client) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	ctx, cancel := call(ctx)
	defer cancel()
	return c.Runtime.Exec(ctx, req)
}

// Attach prepares an attach session to a running container's main process.
func (c *Client) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	ctx, cancel := call(ctx)
	defer cancel()
	return c.Runtime.Attach(ctx, req)
}

// PortForward prepares a port-forward session into a sandbox's network namespace.
func (c *Client) PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	ctx, cancel := call(ctx)
	defer cancel()
	return c.Runtime.PortForward(ctx, req)
}
