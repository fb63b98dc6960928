package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/cri"
	"github.com/nodelet/nodelet/internal/testharness"
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
// cgroup of below /kubepods. With keepLogs, the agent's log is first copied there.
func (a *agent) cleanup(c *cri.Client, failed bool, keepLogs string) (cgroups int, err error) {
	var errs []error
	if err := a.stop(stopTimeout); err != nil {
		errs = append(errs, err)
	}
	if keepLogs != "" {
		if err := copyFile(a.logPath, filepath.Join(keepLogs, a.name+"-"+string(a.kind)+".log")); err != nil {
			errs = append(errs, fmt.Errorf("keep %s's log: %w", a.name, err))
		}
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
		sbs, err := testharness.NodeSandboxes(ctx, c, a.name)
		if err != nil {
			errs = append(errs, err)
		}
		for _, s := range sbs {
			if uid := s.Labels[container.PodUIDLabel]; uid != "" {
				a.uids[uid] = true
			}
			if err := testharness.RemoveSandbox(ctx, c, s.Id); err != nil {
				errs = append(errs, fmt.Errorf("node %s: %w", a.name, err))
			}
		}
		for _, m := range testharness.MountsUnder(a.base) {
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
	if left := testharness.MountsUnder(a.base); len(left) > 0 {
		errs = append(errs, fmt.Errorf("mounts remain below %s, so it is kept: %v", a.base, left))
	} else if err := os.RemoveAll(a.base); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", a.base, err))
	}
	return cgroups, errors.Join(errs...)
}

// copyFile copies src to dst, creating dst's directory.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

// removePodCgroups removes the empty pod-level cgroups pod<uid> (any QoS class, every v1
// hierarchy and v2) and reports whether there was one. rmdir only succeeds on a cgroup without
// processes or children, so nothing live is touched.
func removePodCgroups(uid string) bool {
	removed := false
	for _, dir := range testharness.PodCgroups(uid) {
		if syscall.Rmdir(dir) == nil {
			removed = true
		}
	}
	return removed
}
