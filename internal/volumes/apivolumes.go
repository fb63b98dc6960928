package volumes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
)

// Upstream's escaped plugin names, kept so that the layout is the kubelet's.
const (
	configMapPluginDir   = "kubernetes.io~configmap"
	secretPluginDir      = "kubernetes.io~secret"
	projectedPluginDir   = "kubernetes.io~projected"
	downwardAPIPluginDir = "kubernetes.io~downward-api"
)

// pluginDirs are the plugin directories under <pod>/volumes whose volumes may be mounts.
func pluginDirs() []string {
	return []string{emptyDirPluginDir, configMapPluginDir, secretPluginDir, projectedPluginDir, downwardAPIPluginDir}
}

// apiVolumePlugin is the plugin directory of a configMap, secret, projected or downwardAPI
// volume and whether it lives on a tmpfs: as upstream, all but configMap do (configMap is on
// the node's disk, upstream's choice for memory accounting).
func apiVolumePlugin(vs *v1.VolumeSource) (dir string, memory bool, ok bool) {
	switch {
	case vs.ConfigMap != nil:
		return configMapPluginDir, false, true
	case vs.Secret != nil:
		return secretPluginDir, true, true
	case vs.Projected != nil:
		return projectedPluginDir, true, true
	case vs.DownwardAPI != nil:
		return downwardAPIPluginDir, true, true
	}
	return "", false, false
}

// readOnlyVolume says whether a volume is always mounted read-only into containers, whatever
// the volumeMount says: upstream's GetAttributes().ReadOnly of these plugins.
func readOnlyVolume(vs *v1.VolumeSource) bool {
	_, _, ok := apiVolumePlugin(vs)
	return ok
}

// setUpAPIVolume sets up a configMap, secret, projected or downwardAPI volume as upstream's
// plugins do: the content is gathered first (so that a missing object mounts nothing), the
// volume directory is created (and a tmpfs mounted on it for the memory-backed ones, once),
// directories for the pod's nested mount points are made, then the atomic writer puts the
// content in place. Each sync calls it again: unchanged content is left alone, changed content
// replaces the old set atomically.
func (m *Manager) setUpAPIVolume(pod *v1.Pod, vol *v1.Volume) (string, error) {
	kind := sourceKind(&vol.VolumeSource)
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("%s volume %q: %w", kind, vol.Name, err)
	}
	plugin, memory, _ := apiVolumePlugin(&vol.VolumeSource)
	dir := filepath.Join(m.volumesDir(pod.UID), plugin, vol.Name)
	payload, err := m.apiVolumePayload(pod, &vol.VolumeSource)
	if err != nil {
		if keepContent(err, dir) {
			// The objects cannot be fetched now (the API server is unreachable, e.g. after a
			// restart during an outage): the content written before stays, so the pod's
			// containers can still be (re)started; the next sync updates it.
			klog.V(2).InfoS("Keeping the volume's current content: its objects cannot be fetched now", "pod", klog.KObj(pod),
				"podUID", pod.UID, "volume", vol.Name, "type", kind, "err", err)
			return dir, nil
		}
		return fail(err)
	}
	if _, err := makeVolumeDir(dir); err != nil {
		return fail(err)
	}
	if memory {
		if err := m.ensureTmpfs(pod, vol.Name, dir); err != nil {
			return fail(err)
		}
	}
	if err := makeNestedMountPoints(pod, vol.Name, dir); err != nil {
		return fail(err)
	}
	w := atomicWriter{dir: dir, clock: m.cfg.Clock, fsGroup: fsGroup(pod)}
	written, err := w.write(payload)
	if err != nil {
		return fail(fmt.Errorf("writing the content into %s: %w", dir, err))
	}
	if written {
		klog.V(3).InfoS("Wrote volume content", "pod", klog.KObj(pod), "podUID", pod.UID, "volume", vol.Name,
			"type", kind, "files", len(payload), "path", dir)
	}
	return dir, nil
}

// keepContent decides (pure but for the stat) whether a volume whose payload failed keeps its
// current content: it has some (a ..data link from an earlier write), and the failure is not
// that an object is gone or the pod is not allowed it (then the mount fails, as upstream).
func keepContent(err error, dir string) bool {
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || errors.Is(err, ErrNeedsClusterMode) {
		return false
	}
	_, statErr := os.Lstat(filepath.Join(dir, dataDirName))
	return statErr == nil
}

// apiVolumePayload gathers the files of the volume. Without Config.Objects, configMap and
// secret volumes and projected sources other than downwardAPI fail with ErrNeedsClusterMode.
func (m *Manager) apiVolumePayload(pod *v1.Pod, vs *v1.VolumeSource) (map[string]fileProjection, error) {
	objs := m.cfg.Objects
	switch {
	case vs.ConfigMap != nil:
		if objs == nil {
			return nil, ErrNeedsClusterMode
		}
		src := vs.ConfigMap
		optional := src.Optional != nil && *src.Optional
		cm, err := getConfigMap(objs, pod.Namespace, src.Name, optional)
		if err != nil {
			return nil, err
		}
		return configMapPayload(src.Items, cm, src.DefaultMode, optional)
	case vs.Secret != nil:
		if objs == nil {
			return nil, ErrNeedsClusterMode
		}
		src := vs.Secret
		optional := src.Optional != nil && *src.Optional
		s, err := getSecret(objs, pod.Namespace, src.SecretName, optional)
		if err != nil {
			return nil, err
		}
		return secretPayload(src.Items, s, src.DefaultMode, optional)
	case vs.Projected != nil:
		return projectedPayload(objs, pod, vs.Projected, m.nodeAllocatable())
	case vs.DownwardAPI != nil:
		return downwardAPIPayload(vs.DownwardAPI.Items, pod, vs.DownwardAPI.DefaultMode, m.nodeAllocatable())
	}
	return nil, errors.New("not an API-backed volume")
}

// nodeAllocatable is Config.NodeAllocatable, with memory from NodeAllocatableMemory when it
// has none.
func (m *Manager) nodeAllocatable() v1.ResourceList {
	alloc := m.cfg.NodeAllocatable
	if _, ok := alloc[v1.ResourceMemory]; !ok && m.cfg.NodeAllocatableMemory > 0 {
		alloc = alloc.DeepCopy()
		if alloc == nil {
			alloc = v1.ResourceList{}
		}
		alloc[v1.ResourceMemory] = *resource.NewQuantity(m.cfg.NodeAllocatableMemory, resource.BinarySI)
	}
	return alloc
}

// ensureTmpfs mounts a tmpfs at dir unless one is there, sized as a memory-backed emptyDir
// without sizeLimit (upstream wraps these volumes in one).
func (m *Manager) ensureTmpfs(pod *v1.Pod, volume, dir string) error {
	mounted, err := m.mounter.IsMountPoint(dir)
	if err != nil {
		return fmt.Errorf("checking whether %s is a mount point: %w", dir, err)
	}
	if mounted {
		return nil
	}
	size := memoryEmptyDirSize(pod, &v1.EmptyDirVolumeSource{}, m.cfg.NodeAllocatableMemory)
	klog.V(3).InfoS("Mounting tmpfs for volume", "pod", klog.KObj(pod), "podUID", pod.UID, "volume", volume,
		"path", dir, "sizeBytes", size)
	if err := m.mounter.MountTmpfs(dir, size); err != nil {
		return fmt.Errorf("mounting tmpfs at %s: %w", dir, err)
	}
	return nil
}

// makeNestedMountPoints is upstream's MakeNestedMountpoints: when a container mounts another
// volume below this one's mount path, the directory is made inside this volume so that the
// runtime need not create it in a read-only mount.
func makeNestedMountPoints(pod *v1.Pod, volume, dir string) error {
	nested, err := nestedMountPoints(pod, volume)
	if err != nil || len(nested) == 0 {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, p := range nested {
		if err := root.MkdirAll(p, 0o755); err != nil {
			return fmt.Errorf("unable to create nested volume mountpoints: %w", err)
		}
	}
	return nil
}

// nestedMountPoints is upstream's getNestedMountpoints: for each container (init and
// ephemeral ones included) and each of its mounts of volume, the mount paths of the
// container's other mounts directly below it, relative to it (a mount below another nested
// one is left to that one).
func nestedMountPoints(pod *v1.Pod, volume string) ([]string, error) {
	var out []string
	check := func(mounts []v1.VolumeMount) error {
		all := make([]string, 0, len(mounts))
		var mine []string
		for _, vm := range mounts {
			p := filepath.Clean(vm.MountPath)
			all = append(all, p)
			if vm.Name == volume {
				mine = append(mine, p)
			}
		}
		slices.Sort(all)
		for _, my := range mine {
			if strings.HasPrefix(my, "../") {
				return fmt.Errorf("invalid container mount point %v", my)
			}
			prefix := my + "/"
			var seen []string
			for _, p := range all {
				if !strings.HasPrefix(p, prefix) || slices.ContainsFunc(seen, func(s string) bool { return strings.HasPrefix(p, s) }) {
					continue
				}
				seen = append(seen, p+"/")
				out = append(out, p[len(prefix):])
			}
		}
		return nil
	}
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if err := check(cs[i].VolumeMounts); err != nil {
				return nil, err
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if err := check(pod.Spec.EphemeralContainers[i].VolumeMounts); err != nil {
			return nil, err
		}
	}
	return out, nil
}
