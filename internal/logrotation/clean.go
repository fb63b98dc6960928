package logrotation

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"k8s.io/klog/v2"
)

// Clean removes all logs of a container, its current log and every rotated file (<log>.*), as
// upstream's ContainerLogManager.Clean. Call it before removing the container from the runtime,
// since the log path comes from the container's status. It waits for a rotation of the container
// in progress. A container without a log path has nothing to clean.
func (m *Manager) Clean(ctx context.Context, containerID string) error {
	unlock := m.locks.lock(containerID)
	defer unlock()

	resp, err := m.runtime.ContainerStatus(ctx, containerID, false)
	if err != nil {
		return fmt.Errorf("clean logs of container %s: get status: %w", containerID, err)
	}
	st := resp.GetStatus()
	if st == nil {
		return fmt.Errorf("clean logs of container %s: runtime returned no status", containerID)
	}
	log := st.GetLogPath()
	if log == "" {
		klog.V(4).InfoS("Container has no log path; no logs to clean", logKeys(containerID, st.GetLabels())...)
		return nil
	}
	if !filepath.IsAbs(log) {
		return fmt.Errorf("clean logs of container %s: log path %q is not absolute", containerID, log)
	}
	files, err := rotatedFiles(log)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // the log directory is gone: nothing left
	}
	if err != nil {
		return fmt.Errorf("clean logs of container %s: %w", containerID, err)
	}
	if err := removeFiles(append(files, log)); err != nil {
		return fmt.Errorf("clean logs of container %s: %w", containerID, err)
	}
	return nil
}
