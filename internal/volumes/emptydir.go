package volumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// emptyDirPerm is upstream's mode for an emptyDir: world-writable so that any container user
// can write (https://issue.k8s.io/2630). spec.emptyDir.mode is alpha (EmptyDirVolumeMode, off
// by default in v1.37) and is ignored, as upstream does with the gate off.
const emptyDirPerm os.FileMode = 0777

// setUpEmptyDir creates <pod>/volumes/kubernetes.io~empty-dir/<name>; for medium Memory it
// mounts a tmpfs there unless one is already mounted.
func (m *Manager) setUpEmptyDir(pod *v1.Pod, vol *v1.Volume) (string, error) {
	ed := vol.EmptyDir
	dir := m.emptyDirPath(pod.UID, vol.Name)
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("emptyDir volume %q: %w", vol.Name, err)
	}
	switch ed.Medium {
	case v1.StorageMediumDefault:
		created, err := makeVolumeDir(dir)
		if err != nil {
			return fail(err)
		}
		if created {
			if err := applyFSGroup(dir, fsGroup(pod)); err != nil {
				return fail(err)
			}
		}
		return dir, nil
	case v1.StorageMediumMemory:
		if _, err := makeVolumeDir(dir); err != nil {
			return fail(err)
		}
		mounted, err := m.mounter.IsMountPoint(dir)
		if err != nil {
			return fail(fmt.Errorf("checking whether %s is a mount point: %w", dir, err))
		}
		if mounted { // already set up by an earlier sync (or before a nodelet restart)
			return dir, nil
		}
		size := memoryEmptyDirSize(pod, ed, m.cfg.NodeAllocatableMemory)
		klog.V(3).InfoS("Mounting tmpfs for emptyDir", "podUID", pod.UID, "volume", vol.Name, "path", dir, "sizeBytes", size)
		if err := m.mounter.MountTmpfs(dir, size); err != nil {
			return fail(fmt.Errorf("mounting tmpfs at %s: %w", dir, err))
		}
		if err := applyFSGroup(dir, fsGroup(pod)); err != nil {
			return fail(err)
		}
		return dir, nil
	default:
		return fail(fmt.Errorf("medium %q is not supported by nodelet (supported: \"\" and Memory)", ed.Medium))
	}
}

// makeVolumeDir creates dir with mode 0777 whatever the umask (upstream's setupDir), and says
// whether it created it. An existing directory is left as it is: a container may have changed
// its mode and a re-sync must not undo that. Anything else at dir (a symlink, a file) is an error.
func makeVolumeDir(dir string) (created bool, err error) {
	if err := os.MkdirAll(filepath.Dir(dir), podDirPerm); err != nil {
		return false, err
	}
	err = os.Mkdir(dir, emptyDirPerm)
	if errors.Is(err, fs.ErrExist) {
		fi, lerr := os.Lstat(dir)
		if lerr != nil {
			return false, lerr
		}
		if !fi.IsDir() {
			return false, fmt.Errorf("%s exists and is not a directory (%s)", dir, fi.Mode().Type())
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := os.Chmod(dir, emptyDirPerm); err != nil { // undo the umask
		return true, err
	}
	return true, nil
}

func fsGroup(pod *v1.Pod) *int64 {
	if sc := pod.Spec.SecurityContext; sc != nil {
		return sc.FSGroup
	}
	return nil
}

// applyFSGroup gives a freshly created volume root to the pod's fsGroup as upstream's
// SetVolumeOwnership does for a directory: group fsGroup, group rw and x, and setgid so that
// files created inside inherit the group. The volume is new and empty, so there is no tree to
// walk.
func applyFSGroup(dir string, gid *int64) error {
	if gid == nil {
		return nil
	}
	if err := os.Lchown(dir, -1, int(*gid)); err != nil {
		return fmt.Errorf("applying fsGroup %d: %w", *gid, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	mode := fi.Mode()&(os.ModePerm|os.ModeSticky|os.ModeSetuid) | 0o660 | 0o110 | os.ModeSetgid
	if err := os.Chmod(dir, mode); err != nil {
		return fmt.Errorf("applying fsGroup %d: %w", *gid, err)
	}
	return nil
}

// memoryEmptyDirSize is the tmpfs size of a medium: Memory emptyDir, as upstream's
// calculateEmptyDirMemorySize: the node's allocatable memory, lowered to the pod's memory limit
// when the pod has one, lowered to the volume's sizeLimit when set. A bound that is unknown (no
// allocatable configured, no pod limit, no sizeLimit) is skipped; 0 means "no size option"
// (the kernel's default, half of RAM). Either way the pages are charged to the pod's memory
// cgroup, so the pod's limit is what really caps the volume.
func memoryEmptyDirSize(pod *v1.Pod, ed *v1.EmptyDirVolumeSource, allocatable int64) int64 {
	size := allocatable
	lower := func(v int64) {
		if v > 0 && (size <= 0 || v <= size) {
			size = v
		}
	}
	lower(podMemoryLimit(pod))
	if ed.SizeLimit != nil {
		lower(ed.SizeLimit.Value())
	}
	if size < 0 {
		return 0
	}
	return size
}

// podMemoryLimit is the memory limit of the pod's cgroup as upstream's ResourceConfigForPod
// computes it, or 0 when the pod has none: the pod-level limit when set, else, when every
// container (init ones included) declares a limit, the larger of the app containers plus
// sidecars and of each init container plus the sidecars started before it; plus the overhead.
func podMemoryLimit(pod *v1.Pod) int64 {
	overhead := pod.Spec.Overhead.Memory().Value()
	if r := pod.Spec.Resources; r != nil {
		if q := r.Limits.Memory(); !q.IsZero() {
			return q.Value() + overhead
		}
	}
	limit := func(c *v1.Container) int64 { return c.Resources.Limits.Memory().Value() }
	var sum, sidecars, initMax int64
	for i := range pod.Spec.Containers {
		l := limit(&pod.Spec.Containers[i])
		if l <= 0 {
			return 0
		}
		sum += l
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		l := limit(c)
		if l <= 0 {
			return 0
		}
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			sum += l
			sidecars += l
			l = sidecars
		} else {
			l += sidecars
		}
		initMax = max(initMax, l)
	}
	return max(sum, initMax) + overhead
}
