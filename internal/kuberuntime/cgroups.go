package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/cgroups"
)

// removePodCgroups removes the pod's cgroup directories once its containers are gone. With the
// cgroupfs driver runc creates <controller>/kubepods/[burstable|besteffort/]pod<uid> for the
// pod's cgroup parent and removes only the containers' own directories below it; the upstream
// kubelet's cgroup manager removes the pod level, and so does nodelet. Every controller
// hierarchy (cgroup v1), the unified one and a pure v2 mount are covered; a directory that is
// still busy is an error, retried at the next housekeeping. With the systemd driver the pod's
// slice unit is stopped through systemd first, which removes its directories.
func (m *Manager) removePodCgroups(uid types.UID) error {
	hierarchies, err := m.hierarchies()
	if err != nil {
		return err
	}
	var errs []error
	names := m.cgroupNames()
	for _, name := range cgroups.PodCgroupsOf(m.cfg.CgroupRoot, uid) {
		dirs := under(hierarchies, names.Literal(name))
		if names.Systemd() && anyExists(dirs) && m.deps.PodCgroups != nil {
			if err := m.deps.PodCgroups.Destroy(name); err != nil {
				errs = append(errs, err)
			}
		}
		for _, dir := range dirs {
			if err := removeCgroupTree(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove pod cgroup %s: %w", dir, err))
			}
		}
	}
	return errors.Join(errs...)
}

func anyExists(dirs []string) bool {
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			return true
		}
	}
	return false
}

// hierarchies returns the cgroup file system's root (a pure v2 mount, or v1's parent of its
// hierarchies) and every hierarchy under it (cgroup v1's controllers, the unified one). It
// returns none without a cgroup file system root (tests).
func (m *Manager) hierarchies() ([]string, error) {
	root := m.cfg.CgroupFSRoot
	if root == "" {
		return nil, nil
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("list cgroup hierarchies in %s: %w", root, err)
	}
	out := []string{root}
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, filepath.Join(root, e.Name()))
		}
	}
	return out, nil
}

// under returns the directories of the cgroup literal (the driver's name) in each hierarchy.
func under(hierarchies []string, literal string) []string {
	out := make([]string, 0, len(hierarchies))
	for _, h := range hierarchies {
		out = append(out, filepath.Join(h, literal))
	}
	return out
}

// podCgroupDirs returns the directories pod uid's cgroup may have, whatever its QoS class, in
// every hierarchy.
func (m *Manager) podCgroupDirs(uid types.UID) ([]string, error) {
	hierarchies, err := m.hierarchies()
	if err != nil {
		return nil, err
	}
	var out []string
	names := m.cgroupNames()
	for _, name := range cgroups.PodCgroupsOf(m.cfg.CgroupRoot, uid) {
		out = append(out, under(hierarchies, names.Literal(name))...)
	}
	return out, nil
}

// killPodProcesses sends SIGKILL to every process left in the pod's cgroups, in every hierarchy,
// as upstream's pod container manager does before it destroys the cgroup of a pod that should not
// be running (tryKillingCgroupProcesses). It is called only once the runtime says nothing of the
// pod runs, so a process found there was lost by the runtime: containerd 2.4 leaves a container's
// task running, with the container reported exited, when a StartContainer is cancelled while it
// creates the task, and the container can then never be removed. It returns the PIDs killed.
func (m *Manager) killPodProcesses(uid types.UID) ([]int, error) {
	dirs, err := m.podCgroupDirs(uid)
	if err != nil {
		return nil, err
	}
	pids := sets.New[int]()
	for _, dir := range dirs {
		collectCgroupPIDs(dir, pids)
	}
	pids.Delete(os.Getpid())
	var errs []error
	killed := make([]int, 0, pids.Len())
	for _, pid := range sets.List(pids) {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("kill process %d left in the cgroup of pod %s: %w", pid, uid, err))
			continue
		}
		killed = append(killed, pid)
	}
	return killed, errors.Join(errs...)
}

// killLeftovers is killPodProcesses for a pod the runtime runs nothing of (why says which), with
// what it did logged: the PIDs killed, or the failure (the removal that follows then fails and
// housekeeping retries).
func (m *Manager) killLeftovers(uid types.UID, why string) {
	killed, err := m.killPodProcesses(uid)
	if len(killed) > 0 {
		klog.InfoS("Killed processes the container runtime left in the cgroup of "+why+
			"; if this repeats, check the runtime's log for failed container starts", "podUID", uid, "pids", killed)
	}
	if err != nil {
		klog.ErrorS(err, "Failed to kill processes left in the cgroup of "+why, "podUID", uid)
	}
}

// collectCgroupPIDs adds the PIDs of cgroup.procs in dir and every cgroup below it; a cgroup
// that is gone or unreadable adds none.
func collectCgroupPIDs(dir string, pids sets.Set[int]) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil {
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				pids.Insert(pid)
			}
		}
	}
	for _, e := range ents {
		if e.IsDir() {
			collectCgroupPIDs(filepath.Join(dir, e.Name()), pids)
		}
	}
}

// removeCgroupTree removes a cgroup and its child cgroups, children first, as
// opencontainers/cgroups' RemovePath: a container whose creation was cut short (its runtime
// killed meanwhile) leaves an empty child cgroup that would keep the pod's busy for ever. A
// cgroup that still holds processes is not removed (EBUSY).
func removeCgroupTree(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range ents {
		if e.IsDir() {
			if err := removeCgroupTree(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return os.Remove(dir)
}

// podCgroupUIDs lists the UIDs of the pod cgroup directories in every hierarchy.
func (m *Manager) podCgroupUIDs() (sets.Set[types.UID], error) {
	hierarchies, err := m.hierarchies()
	if err != nil {
		return nil, err
	}
	names := m.cgroupNames()
	var parents []string
	for _, p := range cgroups.PodParents(m.cfg.CgroupRoot) {
		parents = append(parents, under(hierarchies, names.Literal(p))...)
	}
	uids := sets.New[types.UID]()
	for _, parent := range parents {
		dirs, err := os.ReadDir(parent)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list pod cgroups: %w", err)
		}
		for _, d := range dirs {
			if uid, ok := names.PodUID(d.Name()); ok && d.IsDir() {
				uids.Insert(uid)
			}
		}
	}
	return uids, nil
}

// Housekeep is upstream's cleanupOrphanedPodCgroups, run by housekeeping: the cgroups of pods
// that are neither desired nor in the runtime are removed, once the processes left in them are
// killed. Pods normally lose their cgroups with their containers (RemovePod); this catches those
// whose containers and sandboxes went another way (the container garbage collector, a restart in
// between). A cgroup still busy stays until the next housekeeping.
//
// desired is read after each listing: a pod added since has its cgroup made by its worker
// before its sandbox is in the runtime's list, and is neither killed nor loses its cgroup.
func (m *Manager) Housekeep(ctx context.Context, desired func() []*v1.Pod) {
	uids, err := m.podCgroupUIDs()
	if err != nil {
		klog.ErrorS(err, "Housekeeping could not list pod cgroups; retrying next time")
		return
	}
	deleteDesired := func() {
		for _, p := range desired() {
			uids.Delete(p.UID)
		}
	}
	if deleteDesired(); uids.Len() == 0 {
		return
	}
	pods, err := m.GetPods(ctx)
	if err != nil {
		klog.ErrorS(err, "Housekeeping could not list the runtime's pods for orphaned pod cgroups; retrying next time")
		return
	}
	for _, p := range pods {
		uids.Delete(p.ID)
	}
	deleteDesired()
	for _, uid := range sets.List(uids) {
		klog.V(2).InfoS("Removing the cgroup of a pod that is gone", "podUID", uid)
		// As upstream (pcm.Destroy): what still runs in the cgroup of a pod that is neither
		// desired nor in the runtime was lost by the runtime; it is killed first.
		m.killLeftovers(uid, "a pod the runtime no longer has")
		if err := m.removePodCgroups(uid); err != nil {
			klog.ErrorS(err, "Failed to remove the cgroup of a pod that is gone; a process may be left in it (retrying at the next housekeeping)", "podUID", uid)
		}
	}
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
