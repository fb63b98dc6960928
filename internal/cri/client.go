package cri

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
)

// MaxMsgSize is the largest gRPC message the client sends or accepts. It
// matches the kubelet's limit (16 MiB): ListContainers and ListImages answers
// on a busy node can be large.
const MaxMsgSize = 16 * 1024 * 1024

// NewBufferPool returns the buffer pool for gRPC's messages that cmd/nodelet makes the
// process's default (experimental.SetDefaultBufferPool: the proto codec assembles every
// message of more than one frame in a buffer of the default pool, whatever the connection's
// pool). It pools 256 B to 32 KiB, gRPC's default tiers without its 1 MiB one: with that
// tier every answer between 32 KiB and 1 MiB (ListContainers, ListPodSandbox,
// ListContainerStats on a node with tens of pods) takes a 1 MiB buffer that the pool then
// keeps, about 2.5 MiB of a 100-pod node's 20 MiB of anonymous memory. Larger answers are
// allocated at their size instead (gRPC's fallback pool).
func NewBufferPool() mem.BufferPool {
	pool, err := mem.NewBinaryTieredBufferPool(8, 12, 14, 15)
	if err != nil {
		panic(fmt.Sprintf("cri: gRPC buffer pool: %v", err)) // constant, valid exponents
	}
	return pool
}

// kubeletAPIVersion is the version string the kubelet sends in VersionRequest.
const kubeletAPIVersion = "0.1.0"

// ErrNotCRIv1 is wrapped into the error Dial returns when the endpoint answers
// but does not implement runtime.v1.RuntimeService.
var ErrNotCRIv1 = errors.New("runtime does not implement CRI v1 (runtime.v1.RuntimeService)")

// Client is a connection to one CRI v1 runtime endpoint.
type Client struct {
	// Runtime is the CRI v1 RuntimeService client.
	Runtime runtimeapi.RuntimeServiceClient
	// Image is the CRI v1 ImageService client (served on the same endpoint).
	Image runtimeapi.ImageServiceClient

	conn     *grpc.ClientConn
	endpoint string
	version  atomic.Pointer[runtimeapi.VersionResponse] // Ready's answer

}

// Dial connects to the CRI runtime at endpoint ("unix:///path/to/sock" or a
// bare "/path/to/sock") and verifies with a Version call, bounded by timeout,
// that it serves CRI v1: New, then Ready. The connection itself is not bound to ctx or timeout.
// extra are added to the connection's options (interceptors that record metrics).
func Dial(ctx context.Context, endpoint string, timeout time.Duration, extra ...grpc.DialOption) (*Client, error) {
	c, err := New(endpoint, extra...)
	if err != nil {
		return nil, err
	}
	if err := c.Ready(ctx, timeout); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// New returns a client of the runtime at endpoint without talking to it: gRPC connects on the
// first call (and again after the runtime restarts). Ready waits for the runtime's answer.
func New(endpoint string, extra ...grpc.DialOption) (*Client, error) {
	path, err := socketPath(endpoint)
	if err != nil {
		return nil, err
	}
	opts := append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}),
		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(MaxMsgSize),
			grpc.MaxCallSendMsgSize(MaxMsgSize),
		),
	}, extra...)
	conn, err := grpc.NewClient("passthrough:///"+path, opts...)
	if err != nil {
		return nil, fmt.Errorf("cri: creating client for %q: %w", endpoint, err)
	}
	return &Client{
		Runtime:  runtimeapi.NewRuntimeServiceClient(conn),
		Image:    runtimeapi.NewImageServiceClient(conn),
		conn:     conn,
		endpoint: endpoint,
	}, nil
}

// Ready asks the runtime for its version, bounded by timeout, and checks that it serves CRI
// v1; Version returns the answer from then on.
func (c *Client) Ready(ctx context.Context, timeout time.Duration) error {
	vctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := c.Runtime.Version(vctx, &runtimeapi.VersionRequest{Version: kubeletAPIVersion})
	if err != nil {
		if status.Code(err) == codes.Unimplemented {
			return fmt.Errorf("cri: endpoint %q: %w: %w", c.endpoint, ErrNotCRIv1, err)
		}
		return fmt.Errorf("cri: Version on endpoint %q: %w", c.endpoint, err)
	}
	if strings.HasPrefix(v.GetRuntimeApiVersion(), "v1alpha") {
		return fmt.Errorf("cri: endpoint %q reports runtime API %q: %w",
			c.endpoint, v.GetRuntimeApiVersion(), ErrNotCRIv1)
	}
	c.version.Store(v)
	klog.V(2).InfoS("Connected to CRI runtime", "endpoint", c.endpoint,
		"runtimeName", v.GetRuntimeName(), "runtimeVersion", v.GetRuntimeVersion(),
		"runtimeAPIVersion", v.GetRuntimeApiVersion())
	return nil
}

// Endpoint returns the endpoint the client was dialed with.
func (c *Client) Endpoint() string { return c.endpoint }

// Version returns the runtime's answer to the Version call made by Ready (nil before; its
// getters answer "" then).
func (c *Client) Version() *runtimeapi.VersionResponse { return c.version.Load() }

// Close closes the connection. The Runtime and Image clients fail afterwards.
func (c *Client) Close() error {
	if err := c.conn.Close(); err != nil {
		return fmt.Errorf("cri: closing connection to %q: %w", c.endpoint, err)
	}
	return nil
}

// socketPath turns "unix:///path" or a bare path into a socket path.
func socketPath(endpoint string) (string, error) {
	path := endpoint
	if scheme, rest, ok := strings.Cut(endpoint, "://"); ok {
		if scheme != "unix" {
			return "", fmt.Errorf("cri: endpoint %q: unsupported scheme %q (want unix)", endpoint, scheme)
		}
		path = rest
	}
	if path == "" {
		return "", fmt.Errorf("cri: endpoint %q: empty socket path", endpoint)
	}
	return path, nil
}
