package volumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Config is the node-level settings of the volume manager.
type Config struct {
	// RootDir is the node agent's state directory (--root-dir, e.g. /var/lib/nodelet). Pod
	// directories live in <RootDir>/pods/<uid>.
	RootDir string
	// ClusterDomain is the kubelet's clusterDomain, used for the FQDN in a pod's managed hosts
	// file when the pod sets spec.subdomain. Empty: the FQDN ends at "<subdomain>.<ns>.svc".
	ClusterDomain string
	// NodeAllocatableMemory is the node's allocatable memory in bytes; it bounds the size of a
	// memory-backed emptyDir as upstream does. 0 means unknown: no node bound.
	NodeAllocatableMemory int64
	// RecursiveReadOnly says the runtime handler supports recursive read-only mounts (the
	// CRI RuntimeHandlerFeatures); it decides recursiveReadOnly IfPossible and Enabled.
	RecursiveReadOnly bool
	// HostsFile is the node's hosts file copied for hostNetwork pods; default /etc/hosts.
	HostsFile string
	// SubPathEnv resolves a container's environment for subPathExpr expansion. Nil: a built-in
	// resolver that knows literal values and the pod's name, namespace, uid, node name,
	// service account and IPs (see basicEnv). Wire criconfig.Env here for the full downward API.
	SubPathEnv func(pod *v1.Pod, c *v1.Container, podIPs []string) (func(string) (string, bool), error)
	// Objects gives configMap, secret and projected volumes their content (cluster mode:
	// internal/apiobjects). Nil in standalone mode: those volumes then fail with
	// ErrNeedsClusterMode; downwardAPI volumes need nothing from it.
	Objects Objects
	// NodeAllocatable is the node's allocatable resources: the value of a downwardAPI
	// resourceFieldRef to a cpu, memory or ephemeral-storage limit the container does not set,
	// as upstream. Memory defaults to NodeAllocatableMemory.
	NodeAllocatable v1.ResourceList
	// Clock names the atomic writer's version directories (..<UTC timestamp>.<n>); default
	// the real clock.
	Clock clock.PassiveClock
}

// Manager sets up and tears down the pods' node-side volumes and builds container mounts.
// It is safe for concurrent use; calls for one pod are serialized.
type Manager struct {
	cfg     Config
	mounter Mounter
	locks   podLocks
}

// New returns a Manager. m mounts and unmounts tmpfs (NewSystemMounter in production).
func New(cfg Config, m Mounter) *Manager {
	if cfg.HostsFile == "" {
		cfg.HostsFile = "/etc/hosts"
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Manager{cfg: cfg, mounter: m, locks: podLocks{m: map[types.UID]*podLock{}}}
}

const (
	// emptyDirPluginDir is upstream's escaped plugin name, kept so the layout is the kubelet's.
	emptyDirPluginDir = "kubernetes.io~empty-dir"
	// podDirPerm is upstream's mode for the pod directory and its volumes/containers dirs.
	podDirPerm os.FileMode = 0750
)

func (m *Manager) podsDir() string                 { return filepath.Join(m.cfg.RootDir, "pods") }
func (m *Manager) podDir(uid types.UID) string     { return filepath.Join(m.podsDir(), string(uid)) }
func (m *Manager) hostsPath(uid types.UID) string  { return filepath.Join(m.podDir(uid), "etc-hosts") }
func (m *Manager) volumesDir(uid types.UID) string { return filepath.Join(m.podDir(uid), "volumes") }
func (m *Manager) emptyDirPath(uid types.UID, name string) string {
	return filepath.Join(m.volumesDir(uid), emptyDirPluginDir, name)
}

// checkName rejects names that would not stay one path component: pod UIDs, volume and
// container names all become directory names.
func checkName(what, name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("invalid %s %q: must be a single path component", what, name)
	}
	return nil
}

// SetUp makes the pod's volumes exist and returns the host path of each, by volume name.
// It is idempotent: a re-sync calls it again, finds what exists and mounts nothing twice.
// Supported: emptyDir (disk or Memory), hostPath, configMap, secret, projected and downwardAPI
// (see setUpAPIVolume), and image volumes, which have no host path (the runtime mounts the
// image; see Mounts); any other volume type is an error naming the volume. On error the map
// still holds the volumes that were set up.
func (m *Manager) SetUp(pod *v1.Pod) (map[string]string, error) {
	if err := checkName("pod UID", string(pod.UID)); err != nil {
		return nil, err
	}
	unlock := m.locks.lock(pod.UID)
	defer unlock()
	if err := os.MkdirAll(m.volumesDir(pod.UID), podDirPerm); err != nil {
		return nil, fmt.Errorf("pod %s: creating the pod directory: %w", pod.UID, err)
	}
	paths := make(map[string]string, len(pod.Spec.Volumes))
	var errs []error
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if err := checkName("volume name", vol.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		var (
			path string
			err  error
		)
		switch {
		case vol.EmptyDir != nil:
			path, err = m.setUpEmptyDir(pod, vol)
		case vol.HostPath != nil:
			path, err = setUpHostPath(vol)
		case readOnlyVolume(&vol.VolumeSource):
			path, err = m.setUpAPIVolume(pod, vol)
		case vol.Image != nil:
			continue // the runtime mounts the image itself: nothing on the host
		default:
			err = fmt.Errorf("volume %q: %s volumes are not supported by nodelet (supported: emptyDir, hostPath, configMap, secret, projected, downwardAPI, image)",
				vol.Name, sourceKind(&vol.VolumeSource))
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		paths[vol.Name] = path
	}
	return paths, errors.Join(errs...)
}

// sourceKind is the JSON name of the volume source that is set, e.g. "configMap".
func sourceKind(vs *v1.VolumeSource) string {
	v := reflect.ValueOf(vs).Elem()
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			return name
		}
	}
	return "unknown"
}

// TearDown unmounts whatever is mounted under the pod directory (the tmpfs of emptyDir,
// secret, projected and downwardAPI volumes, and with a MountLister any other mount, e.g. one propagated back by a Bidirectional mount), then removes
// <root>/pods/<uid> entirely. The removal never follows symlinks and refuses to descend into
// another filesystem, so nothing outside the pod directory can be deleted. Idempotent.
func (m *Manager) TearDown(podUID types.UID) error {
	if err := checkName("pod UID", string(podUID)); err != nil {
		return err
	}
	unlock := m.locks.lock(podUID)
	defer unlock()
	dir := m.podDir(podUID)
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("tearing down pod %s: %w", podUID, err)
	case !fi.IsDir(): // a symlink or a stray file: remove the entry itself, never its target
		if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("tearing down pod %s: %w", podUID, err)
		}
		return nil
	}
	if err := m.unmountUnder(dir); err != nil {
		return fmt.Errorf("tearing down pod %s: %w", podUID, err)
	}
	if err := removeTree(dir); err != nil {
		return fmt.Errorf("tearing down pod %s: %w", podUID, err)
	}
	klog.V(3).InfoS("Removed pod directory", "podUID", podUID, "path", dir)
	return nil
}

// TearDownVolumes is what upstream's volume manager does once a pod has terminated, before the
// pod is deleted: every mount under the pod directory (tmpfs of emptyDir, secret, projected...,
// subPath binds) is unmounted and the volumes directory removed with the emptyDirs' content, so
// a finished or evicted pod holds neither memory nor disk. The pod directory itself (etc-hosts,
// termination messages) stays until the pod is removed (TearDown). Idempotent.
func (m *Manager) TearDownVolumes(podUID types.UID) error {
	if err := checkName("pod UID", string(podUID)); err != nil {
		return err
	}
	unlock := m.locks.lock(podUID)
	defer unlock()
	dir := m.podDir(podUID)
	if fi, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.IsDir()) {
		return nil
	}
	if err := m.unmountUnder(dir); err != nil {
		return fmt.Errorf("tearing down the volumes of pod %s: %w", podUID, err)
	}
	vols := m.volumesDir(podUID)
	if _, err := os.Lstat(vols); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := removeTree(vols); err != nil {
		return fmt.Errorf("tearing down the volumes of pod %s: %w", podUID, err)
	}
	klog.V(3).InfoS("Removed the volumes of a terminated pod", "podUID", podUID, "path", vols)
	return nil
}

// maxStackedMounts bounds the unmount loop on one path (mounts may be stacked).
const maxStackedMounts = 16

// unmountUnder unmounts what is mounted at or under dir. With a MountLister: every mount, one
// unmount per mount-table entry, innermost first (children before parents, stacked mounts top
// first). Without: the volume directories of every plugin (pluginDirs), where all the mounts
// nodelet makes are, each until it is no longer a mount point.
func (m *Manager) unmountUnder(dir string) error {
	if l, ok := m.mounter.(MountLister); ok {
		mounts, err := l.MountPointsUnder(dir)
		if err != nil {
			return fmt.Errorf("listing mounts under %s: %w", dir, err)
		}
		for _, p := range mounts {
			if err := m.unmountOnce(p); err != nil && !errors.Is(err, errNotMounted) {
				return err
			}
		}
		return nil
	}
	for _, plugin := range pluginDirs() {
		if err := m.unmountVolumeDirs(filepath.Join(dir, "volumes", plugin)); err != nil {
			return err
		}
	}
	return nil
}

// unmountVolumeDirs unmounts each volume directory of one plugin directory, until it is no
// longer a mount point.
func (m *Manager) unmountVolumeDirs(base string) error {
	entries, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() { // ReadDir does not follow symlinks: a symlink is not IsDir
			continue
		}
		p := filepath.Join(base, e.Name())
		for i := 0; ; i++ {
			if i == maxStackedMounts {
				return fmt.Errorf("unmounting %s: still a mount point after %d unmounts", p, i)
			}
			if err := m.unmountOnce(p); errors.Is(err, errNotMounted) {
				break
			} else if err != nil {
				return err
			}
		}
	}
	return nil
}

var errNotMounted = errors.New("not a mount point")

// unmountOnce unmounts the top mount at p, or returns errNotMounted.
func (m *Manager) unmountOnce(p string) error {
	mnt, err := m.mounter.IsMountPoint(p)
	if errors.Is(err, fs.ErrNotExist) {
		return errNotMounted
	}
	if err != nil {
		return fmt.Errorf("checking mount point %s: %w", p, err)
	}
	if !mnt {
		return errNotMounted
	}
	if err := m.mounter.Unmount(p); err != nil {
		return fmt.Errorf("unmounting %s: %w", p, err)
	}
	klog.V(3).InfoS("Unmounted", "path", p)
	return nil
}

// PodDirs lists the pod UIDs that have a directory under <root>/pods, sorted, for the
// housekeeping of orphans (a pod directory with no pod: TearDown it).
func (m *Manager) PodDirs() ([]types.UID, error) {
	entries, err := os.ReadDir(m.podsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing pod directories: %w", err)
	}
	var uids []types.UID
	for _, e := range entries {
		if e.Type().IsRegular() || checkName("pod UID", e.Name()) != nil {
			continue
		}
		uids = append(uids, types.UID(e.Name()))
	}
	slices.Sort(uids)
	return uids, nil
}

// podLocks serializes the calls for one pod (SetUp, TearDown, Mounts) without serializing pods.
type podLocks struct {
	mu sync.Mutex
	m  map[types.UID]*podLock
}

type podLock struct {
	sync.Mutex
	refs int
}

func (l *podLocks) lock(uid types.UID) (unlock func()) {
	l.mu.Lock()
	pl := l.m[uid]
	if pl == nil {
		pl = &podLock{}
		l.m[uid] = pl
	}
	pl.refs++
	l.mu.Unlock()
	pl.Lock()
	return func() {
		pl.Unlock()
		l.mu.Lock()
		if pl.refs--; pl.refs == 0 {
			delete(l.m, uid)
		}
		l.mu.Unlock()
	}
}
