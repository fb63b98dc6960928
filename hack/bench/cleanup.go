package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/cri"
)

// cleanupTimeout bounds a clean-up; it runs on a fresh context, as the run's may have ended.
const cleanupTimeout = 2 * time.Minute

// settleTime is how long a clean-up after a failure waits before its second pass: a sandbox
// creation cancelled mid-way may still be completing or rolling back in containerd.
const settleTime = 2 * time.Second

// cleanup stops the agent if it still runs, then removes whatever the run left: the node's
// sandboxes (through CRI), mounts below its directories, its pods' empty cgroups, what it
// changed on the host (hostChanges) and the directories themselves; after a failed run it
// makes a second pass after settleTime. It returns how many of its pods the agent had left a
// cgroup of below /kubepods.
func (a *agent) cleanup(c *cri.Client, failed bool) (cgroups int, err error) {
	var errs []error
	if err := a.stop(stopTimeout); err != nil {
		errs = append(errs, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	for pass := 1; pass <= 2; pass++ {
		if pass == 2 {
			if !failed {
				break
			}
			time.Sleep(settleTime)
		}
		sbs, err := nodeSandboxes(ctx, c, a.name)
		if err != nil {
			errs = append(errs, err)
		}
		for _, s := range sbs {
			if uid := s.Labels[container.PodUIDLabel]; uid != "" {
				a.uids[uid] = true
			}
			if err := removeSandbox(ctx, c, s.Id); err != nil {
				errs = append(errs, fmt.Errorf("node %s: %w", a.name, err))
			}
		}
		for _, m := range mountsUnder(a.base) {
			if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
				errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
			}
		}
		for uid := range a.uids {
			if removePodCgroups(uid) && pass == 1 {
				cgroups++
			}
		}
	}
	if a.host != nil {
		if err := a.host.undo(); err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", a.name, err))
		}
	}
	if left := mountsUnder(a.base); len(left) > 0 {
		errs = append(errs, fmt.Errorf("mounts remain below %s, so it is kept: %v", a.base, left))
	} else if err := os.RemoveAll(a.base); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", a.base, err))
	}
	return cgroups, errors.Join(errs...)
}

// removeSandbox stops and removes a sandbox (and so its containers); one already gone is fine.
func removeSandbox(ctx context.Context, c *cri.Client, id string) error {
	if err := c.StopPodSandbox(ctx, id); err != nil && status.Code(err) != codes.NotFound {
		return fmt.Errorf("stop sandbox %s: %w", id, err)
	}
	if err := c.RemovePodSandbox(ctx, id); err != nil && status.Code(err) != codes.NotFound {
		return fmt.Errorf("remove sandbox %s: %w", id, err)
	}
	return nil
}

// removePodCgroups removes the empty pod-level cgroups pod<uid> (cgroupfs layout under
// /kubepods, any QoS class, every v1 hierarchy and v2) and reports whether there was one.
// rmdir only succeeds on a cgroup without processes or children, so nothing live is touched.
func removePodCgroups(uid string) bool {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods") // the pattern is valid
	roots = append(roots, "/sys/fs/cgroup/kubepods")
	removed := false
	for _, root := range roots {
		for _, qos := range []string{"", "burstable", "besteffort"} {
			if syscall.Rmdir(filepath.Join(root, qos, "pod"+uid)) == nil {
				removed = true
			}
		}
	}
	return removed
}
