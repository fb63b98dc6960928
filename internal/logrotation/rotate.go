package logrotation

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
)

// errReopen marks a rotation that failed because the runtime did not reopen the log; the log
// has been renamed back.
var errReopen = errors.New("runtime did not reopen the container log")

// checkContainer rotates one container's log if it reached MaxSize. Failures are logged and
// retried at the next interval.
func (m *Manager) checkContainer(ctx context.Context, id string, labels map[string]string) {
	unlock := m.locks.lock(id)
	defer unlock()

	if path, ok := m.knownPath(id); ok {
		if info, err := os.Stat(path); err == nil && info.Size() < m.cfg.MaxSize {
			return // below the rotation size: nothing to ask the runtime
		}
	}
	resp, err := m.runtime.ContainerStatus(ctx, id, false)
	if err != nil {
		if ctx.Err() == nil {
			klog.ErrorS(err, "Failed to get container status for log rotation; will retry at the next interval", logKeys(id, labels)...)
		}
		return
	}
	st := resp.GetStatus()
	if st == nil {
		klog.ErrorS(nil, "Container runtime returned no container status; not rotating its log, check the container runtime", logKeys(id, labels)...)
		return
	}
	if st.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
		klog.V(4).InfoS("Container stopped before its log was checked; not rotating", logKeys(id, labels, "state", st.GetState())...)
		return
	}
	path := st.GetLogPath()
	if path == "" {
		klog.V(4).InfoS("Container has no log path; nothing to rotate", logKeys(id, labels)...)
		return
	}
	if !filepath.IsAbs(path) {
		klog.ErrorS(nil, "Container log path is not absolute; not rotating it, check the container runtime", logKeys(id, labels, "path", path)...)
		return
	}
	m.rememberPath(id, path)

	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		// The log was removed, or renamed without a reopen: have the runtime recreate it, as
		// upstream does.
		if err := m.runtime.ReopenContainerLog(ctx, id); err != nil {
			klog.ErrorS(err, "Container log is missing and reopening it failed; will retry at the next interval", logKeys(id, labels, "path", path)...)
			return
		}
		info, err = os.Stat(path)
	}
	if err != nil {
		klog.ErrorS(err, "Failed to stat container log; check the log directory's permissions", logKeys(id, labels, "path", path)...)
		return
	}
	if info.Size() < m.cfg.MaxSize {
		klog.V(5).InfoS("Container log below the rotation size", logKeys(id, labels, "path", path, "size", info.Size(), "maxSize", m.cfg.MaxSize)...)
		return
	}

	rotated, err := m.rotate(ctx, id, path)
	switch {
	case err == nil:
		klog.V(2).InfoS("Rotated container log", logKeys(id, labels, "path", path, "rotated", rotated, "size", info.Size())...)
	case ctx.Err() != nil:
		klog.V(2).InfoS("Container log rotation interrupted by shutdown", logKeys(id, labels, "path", path, "err", err)...)
	case errors.Is(err, errReopen) && !m.running(ctx, id):
		klog.V(2).InfoS("Container stopped while its log was rotated; its log was left in place", logKeys(id, labels, "path", path, "err", err)...)
	default:
		klog.ErrorS(err, "Failed to rotate container log; will retry at the next interval, check the log directory and the container runtime",
			logKeys(id, labels, "path", path, "size", info.Size(), "maxSize", m.cfg.MaxSize)...)
	}
}

// rotate carries out planRotation for log and asks the runtime to reopen it. It returns the
// rotated name. If the runtime does not reopen the log, the log is renamed back (as upstream), so
// that the container keeps writing to the file under its name and the next interval tries again;
// the error then wraps errReopen.
func (m *Manager) rotate(ctx context.Context, id, log string) (string, error) {
	files, err := rotatedFiles(log)
	if err != nil {
		return "", err
	}
	p := planRotation(log, files, m.cfg.MaxFiles, m.clock.Now())
	if err := removeFiles(p.remove); err != nil {
		return "", fmt.Errorf("remove old logs of %s: %w", log, err)
	}
	for _, f := range p.compress {
		if err := compressFile(f); err != nil {
			return "", err
		}
	}
	if err := os.Rename(log, p.rotated); err != nil {
		return "", fmt.Errorf("rename %s to %s: %w", log, p.rotated, err)
	}
	if err := m.runtime.ReopenContainerLog(ctx, id); err != nil {
		if rerr := os.Rename(p.rotated, log); rerr != nil {
			return "", fmt.Errorf("%w: %w; renaming %s back to %s also failed, so the container's current output is in %s: %w",
				errReopen, err, p.rotated, log, p.rotated, rerr)
		}
		return "", fmt.Errorf("%w: %w", errReopen, err)
	}
	return p.rotated, nil
}

// running reports whether the runtime still has id running; on a status error it assumes so,
// so that the failure is reported.
func (m *Manager) running(ctx context.Context, id string) bool {
	resp, err := m.runtime.ContainerStatus(ctx, id, false)
	if err != nil {
		return status.Code(err) != codes.NotFound
	}
	return resp.GetStatus().GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING
}
