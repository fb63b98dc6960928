package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// removePodCgroups removes the pod's cgroup directories once its containers are gone. With the
// cgroupfs driver runc creates <controller>/kubepods/[burstable|besteffort/]pod<uid> for the
// pod's cgroup parent and removes only the containers' own directories below it; the upstream
// kubelet's cgroup manager removes the pod level, and so does nodelet. Every controller
// hierarchy (cgroup v1), the unified one and a pure v2 mount are covered; a directory that is
// still busy is an error, retried at the next housekeeping.
func (m *Manager) removePodCgroups(uid types.UID) error {
	root := m.cfg.CgroupFSRoot
	if root == "" {
		return nil
	}
	hierarchies := []string{root}
	ents, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("list cgroup hierarchies in %s: %w", root, err)
	}
	for _, e := range ents {
		if e.IsDir() {
			hierarchies = append(hierarchies, filepath.Join(root, e.Name()))
		}
	}
	pod := "pod" + string(uid)
	var errs []error
	for _, h := range hierarchies {
		for _, qos := range []string{"", "burstable", "besteffort"} {
			dir := filepath.Join(h, m.cfg.CgroupRoot, qos, pod)
			if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove pod cgroup %s: %w", dir, err))
			}
		}
	}
	return errors.Join(errs...)
}

// removePodLogDirs removes the pod's log directory, <podLogsDir>/<namespace>_<name>_<uid>, as
// upstream's container GC removes the log directories of pods that are gone. It is found by the
// UID alone (housekeeping knows no more): neither a namespace nor a name holds "_".
func (m *Manager) removePodLogDirs(uid types.UID) error {
	if uid == "" || strings.ContainsAny(string(uid), `/\*?[`) {
		return nil // never a pattern or a path: the UID is validated long before this
	}
	dirs, err := filepath.Glob(filepath.Join(m.cfg.PodLogsDir, "*_"+string(uid)))
	if err != nil {
		return fmt.Errorf("find the log directory of pod %s: %w", uid, err)
	}
	var errs []error
	for _, dir := range dirs {
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("remove pod log directory %s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}
