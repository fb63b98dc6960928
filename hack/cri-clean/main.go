package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/cri"
)

func main() {
	klog.InitFlags(nil)
	endpoint := flag.String("endpoint", os.Getenv("CONTAINER_RUNTIME_ENDPOINT"), "CRI endpoint (unix:///path or /path)")
	timeout := flag.Duration("timeout", 2*time.Minute, "overall time limit")
	flag.Parse()
	if *endpoint == "" {
		klog.ErrorS(nil, "No endpoint: set -endpoint or CONTAINER_RUNTIME_ENDPOINT")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	err := clean(ctx, *endpoint)
	cancel()
	if err != nil {
		klog.ErrorS(err, "Cleaning the runtime failed", "endpoint", *endpoint)
		klog.Flush()
		os.Exit(1)
	}
	klog.Flush()
}

func clean(ctx context.Context, endpoint string) error {
	c, err := cri.Dial(ctx, endpoint, 10*time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()

	sbs, err := c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("listing pod sandboxes: %w", err)
	}
	var errs []error
	for _, sb := range sbs.GetItems() {
		id := sb.GetId()
		if _, err := c.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id}); err != nil {
			errs = append(errs, fmt.Errorf("stopping sandbox %s: %w", id, err))
			continue
		}
		if _, err := c.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id}); err != nil {
			errs = append(errs, fmt.Errorf("removing sandbox %s: %w", id, err))
			continue
		}
		klog.InfoS("Removed pod sandbox", "id", id, "pod", klog.KRef(sb.GetMetadata().GetNamespace(), sb.GetMetadata().GetName()))
	}
	// Removing a sandbox removes its containers; anything left is an orphan.
	ctrs, err := c.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("listing containers: %w", err))...)
	}
	for _, ctr := range ctrs.GetContainers() {
		id := ctr.GetId()
		if _, err := c.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id}); err != nil {
			errs = append(errs, fmt.Errorf("stopping container %s: %w", id, err))
		}
		if _, err := c.Runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id}); err != nil {
			errs = append(errs, fmt.Errorf("removing container %s: %w", id, err))
			continue
		}
		klog.InfoS("Removed orphan container", "id", id)
	}
	klog.InfoS("Runtime cleaned", "endpoint", endpoint, "sandboxes", len(sbs.GetItems()), "orphanContainers", len(ctrs.GetContainers()))
	return errors.Join(errs...)
}
