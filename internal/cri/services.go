package cri

import (
	"context"
	"fmt"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// RequestTimeout bounds every CRI call but StopContainer (which gets its grace period on top)
// and PullImage (unbounded, as upstream: an image takes as long as it takes). It is the
// kubelet's runtimeRequestTimeout default.
const RequestTimeout = 2 * time.Minute

// The methods below give the Client the signatures of k8s.io/cri-api/pkg/apis (RuntimeService,
// ImageManagerService) for the verbs nodelet uses, so that consumers can declare small
// interfaces that both this client and cri-api's fake runtime satisfy.

func call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, RequestTimeout)
}

// Status returns the runtime's conditions (RuntimeReady, NetworkReady).
func (c *Client) Status(ctx context.Context, verbose bool) (*runtimeapi.StatusResponse, error) {
	ctx, cancel := call(ctx)
	defer cancel()
	return c.Runtime.Status(ctx, &runtimeapi.StatusRequest{Verbose: verbose})
}

// RuntimeConfig returns the runtime's configuration (its cgroup driver); a runtime that does
// not implement it answers codes.Unimplemented.
func (c *Client) RuntimeConfig(ctx context.Context) (*runtimeapi.RuntimeConfigResponse, error) {
	ctx, cancel := call(ctx)
	defer cancel()
	return c.Runtime.RuntimeConfig(ctx, &runtimeapi.RuntimeConfigRequest{})
}

// RunPodSandbox creates and starts a pod sandbox and returns its ID.
func (c *Client) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	// Sandbox creation includes CNI set-up; upstream gives it the request timeout too.
	ctx, cancel := call(ctx)
	defer cancel()
	r, err := c.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: config, RuntimeHandler: runtimeHandler})
	if err != nil {
		return "", err
	}
	if r.PodSandboxId == "" {
		return "", fmt.Errorf("RunPodSandbox of %s returned an empty sandbox ID", config.GetMetadata().GetName())
	}
	return r.PodSandboxId, nil
}

// StopPodSandbox stops a sandbox's processes and tears its network down.
func (c *Client) StopPodSandbox(ctx context.Context, id string) error {
	ctx, cancel := call(ctx)
	defer cancel()
	_, err := c.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id})
	return err
}

// RemovePodSandbox removes a sandbox and its containers.
func (c *Client) RemovePodSandbox(ctx context.Context, id string) error {
	ctx, cancel := call(ctx)
	defer cancel()
	_, err := c.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id})
	return err
}

// PodSandboxStatus returns a sandbox's status.
func (c *Client) PodSandboxStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.PodSandboxStatusResponse, error) {
	ctx, cancel := call(ctx)
	defer cancel()
	return c.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id, Verbose: verbose})
}

// ListPodSandbox lists sandboxes matching the filter.
func (c *Client) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	ctx, cancel := call(ctx)
	defer cancel()
	r, err := c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: filter})
	if err != nil {
		return nil, err
	}
	return r.Items, nil
}

// CreateContainer creates a container in a sandbox and returns its ID.
func (c *Client) CreateContainer(ctx context.Context, sandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	ctx, cancel := call(ctx)
	defer cancel()
	r, err := c.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sandboxID, Config: config, SandboxConfig: sandboxConfig})
	if err != nil {
		return "", err
	}
	if r.ContainerId == "" {
		return "", fmt.Errorf("CreateContainer of %s returned an empty container ID", config.GetMetadata().GetName())
	}
	return r.ContainerId, nil
}

// StartContainer starts a created container.
func (c *Client) StartContainer(ctx context.Context, id string) error {
	ctx, cancel := call(ctx)
	defer cancel()
	_, err := c.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
	return err
}

// StopContainer stops a container, sending SIGKILL after timeout seconds.
func (c *Client) StopContainer(ctx context.Context, id string, timeout int64) error {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout+time.Duration(timeout)*time.Second)
	defer cancel()
	_, err := c.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: timeout})
	return err
}

// UpdateContainerResources changes a running container's resources (in-place resize).
func (c *Client) UpdateContainerResources(ctx context.Context, id string, linux *runtimeapi.LinuxContainerResources) error {
	ctx, cancel := call(ctx)
	defer cancel()
	_, err := c.Runtime.UpdateContainerResources(ctx, &runtimeapi.UpdateContainerResourcesRequest{ContainerId: id, Linux: linux})
	return err
}

// RemoveContainer removes a container.
func (c *Client) RemoveContainer(ctx context.Context, id string) error {
	ctx, cancel := call(ctx)
	defer cancel()
	_, err := c.Runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id})
	return err
}

// ListContainers lists containers matching the filter.
func (c *Client) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	ctx, cancel := call(ctx)
	defer cancel()
	r, err := c.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: filter})
	if err != nil {
		return nil, err
	}
	return r.Containers, nil
}

// ContainerStatus returns a container's status.
func (c *Client) ContainerStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	ctx, cancel := call(ctx)
	defer cancel()
	return c.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: verbose})
}

// PullImage pulls an image and returns its reference (digest).
func (c *Client) PullImage(ctx context.Context, image *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	r, err := c.Image.PullImage(ctx, &runtimeapi.PullImageRequest{Image: image, Auth: auth, SandboxConfig: sandboxConfig})
	if err != nil {
		return "", err
	}
	return r.ImageRef, nil
}

// ListImages lists the runtime's images.
func (c *Client) ListImages(ctx context.Context, filter *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error) {
	ctx, cancel := call(ctx)
	defer cancel()
	r, err := c.Image.ListImages(ctx, &runtimeapi.ListImagesRequest{Filter: filter})
	if err != nil {
		return nil, err
	}
	return r.Images, nil
}

// RemoveImage removes an image; removing one that is gone is not an error (CRI).
func (c *Client) RemoveImage(ctx context.Context, image *runtimeapi.ImageSpec) error {
	ctx, cancel := call(ctx)
	defer cancel()
	_, err := c.Image.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: image})
	return err
}

// ImageStatus returns the image's status; Image is nil when the image is not present.
func (c *Client) ImageStatus(ctx context.Context, image *runtimeapi.ImageSpec, verbose bool) (*runtimeapi.ImageStatusResponse, error) {
	ctx, cancel := call(ctx)
	defer cancel()
	return c.Image.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: image, Verbose: verbose})
}

// ExecSync runs cmd in a running container and waits for it, at most timeout (0: no bound but
// the request timeout). The exit code is the command's; err is for failing to run it at all.
func (c *Client) ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (stdout, stderr []byte, exitCode int32, err error) {
	bound := RequestTimeout
	if timeout > 0 {
		bound = timeout + 2*time.Second // the runtime enforces timeout; the call gets a little more
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	r, err := c.Runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: containerID, Cmd: cmd, Timeout: int64(timeout.Seconds())})
	if err != nil {
		return nil, nil, 0, err
	}
	return r.Stdout, r.Stderr, r.ExitCode, nil
}
