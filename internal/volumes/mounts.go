package volumes

import (
	"fmt"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Mounts builds the container's CRI mounts as upstream's makeMounts and kuberuntime's
// makeMounts do, in upstream's order:
//
//   - each volumeMount: the volume's host path from volumePaths (SetUp's result), joined with
//     subPath or the expanded subPathExpr (created if missing, and kept inside the volume),
//     readOnly, recursiveReadOnly, mountPropagation and bindMountOptions; configMap, secret,
//     projected and downwardAPI volumes are always read-only, as upstream;
//   - /etc/hosts from the pod's managed hosts file, when the pod has IPs or uses the host
//     network (upstream's shouldMountHostsFile) and the container does not mount /etc/hosts;
//   - the termination message file at terminationMessagePath, created empty with mode 0666
//     at TerminationMessagePath(pod, container, restartCount).
//
// A volumeMount of an image volume mounts the image the runtime pulled (images, by volume
// name: the runtime mounts it read-only, with subPath as the image's sub-path).
//
// Errors name the container and the volumeMount.
func (m *Manager) Mounts(pod *v1.Pod, c *v1.Container, volumePaths map[string]string, images map[string]*runtimeapi.ImageSpec,
	restartCount int, podIPs []string) ([]*runtimeapi.Mount, error) {
	if err := checkName("pod UID", string(pod.UID)); err != nil {
		return nil, err
	}
	if err := checkName("container name", c.Name); err != nil {
		return nil, err
	}
	unlock := m.locks.lock(pod.UID)
	defer unlock()

	mountHosts := len(podIPs) > 0 || pod.Spec.HostNetwork
	forceRO := map[string]bool{}
	for i := range pod.Spec.Volumes {
		if readOnlyVolume(&pod.Spec.Volumes[i].VolumeSource) {
			forceRO[pod.Spec.Volumes[i].Name] = true
		}
	}
	var env func(string) (string, bool) // resolved on the first subPathExpr
	mounts := make([]*runtimeapi.Mount, 0, len(c.VolumeMounts)+2)
	for i := range c.VolumeMounts {
		vm := &c.VolumeMounts[i]
		fail := func(err error) ([]*runtimeapi.Mount, error) {
			return nil, fmt.Errorf("container %q volumeMount %q at %s: %w", c.Name, vm.Name, vm.MountPath, err)
		}
		containerPath := absolute(vm.MountPath)
		if containerPath == etcHostsPath {
			mountHosts = false
		}
		hostPath, ok := volumePaths[vm.Name]
		subPath := vm.SubPath
		if vm.SubPathExpr != "" {
			if env == nil {
				var err error
				if env, err = m.subPathEnv(pod, c, podIPs); err != nil {
					return fail(fmt.Errorf("resolving the environment for subPathExpr: %w", err))
				}
			}
			var err error
			if subPath, err = expandSubPathExpr(vm.SubPathExpr, env); err != nil {
				return fail(fmt.Errorf("subPathExpr %q: %w", vm.SubPathExpr, err))
			}
		}
		propagation, err := mountPropagation(vm.MountPropagation)
		if err != nil {
			return fail(err)
		}
		rro, err := recursiveReadOnly(vm, m.cfg.RecursiveReadOnly)
		if err != nil {
			return fail(err)
		}
		if image, ok := images[vm.Name]; ok {
			if err := checkImageSubPath(subPath); err != nil {
				return fail(err)
			}
			mounts = append(mounts, &runtimeapi.Mount{ContainerPath: containerPath, Image: image, ImageSubPath: subPath,
				Readonly: true, RecursiveReadOnly: rro, Propagation: propagation})
			continue
		}
		if !ok {
			return nil, fmt.Errorf("cannot find volume %q to mount into container %q", vm.Name, c.Name)
		}
		if subPath != "" {
			if hostPath, err = joinSubPath(hostPath, subPath); err != nil {
				return fail(err)
			}
		}
		mounts = append(mounts, &runtimeapi.Mount{
			ContainerPath:     containerPath,
			HostPath:          hostPath,
			Readonly:          vm.ReadOnly || forceRO[vm.Name],
			RecursiveReadOnly: rro,
			Propagation:       propagation,
			MountOptions:      vm.BindMountOptions,
		})
	}
	if mountHosts {
		hostname, _, err := HostnameAndDomain(pod, m.cfg.ClusterDomain)
		if err != nil {
			return nil, err
		}
		path, err := m.ensureHostsFile(pod, podIPs, hostname)
		if err != nil {
			return nil, err
		}
		mounts = append(mounts, &runtimeapi.Mount{ContainerPath: etcHostsPath, HostPath: path})
	}
	if c.TerminationMessagePath != "" {
		path, err := m.createTerminationFile(pod.UID, c.Name, restartCount)
		if err != nil {
			return nil, fmt.Errorf("container %q: %w", c.Name, err)
		}
		mounts = append(mounts, &runtimeapi.Mount{ContainerPath: absolute(c.TerminationMessagePath), HostPath: path})
	}
	return mounts, nil
}

// checkImageSubPath is upstream's check of a subPath in makeMounts: relative, no "..". The
// runtime resolves it inside the image.
func checkImageSubPath(subPath string) error {
	if strings.HasPrefix(subPath, "/") {
		return fmt.Errorf("error SubPath `%s` must not be an absolute path", subPath)
	}
	for _, part := range strings.Split(filepath.ToSlash(subPath), "/") {
		if part == ".." {
			return fmt.Errorf("unable to provision SubPath `%s`: must not contain '..'", subPath)
		}
	}
	return nil
}

// absolute is upstream's MakeAbsolutePath on Linux.
func absolute(p string) string {
	return filepath.Clean("/" + p)
}

// mountPropagation is upstream's translateMountPropagation: unset and None are private.
func mountPropagation(mode *v1.MountPropagationMode) (runtimeapi.MountPropagation, error) {
	switch {
	case mode == nil, *mode == v1.MountPropagationNone:
		return runtimeapi.MountPropagation_PROPAGATION_PRIVATE, nil
	case *mode == v1.MountPropagationHostToContainer:
		return runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER, nil
	case *mode == v1.MountPropagationBidirectional:
		return runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL, nil
	default:
		return 0, fmt.Errorf("invalid MountPropagation mode: %q", *mode)
	}
}

// recursiveReadOnly is upstream's resolveRecursiveReadOnly; supported is whether the runtime
// handler supports recursive read-only mounts.
func recursiveReadOnly(vm *v1.VolumeMount, supported bool) (bool, error) {
	if vm.RecursiveReadOnly == nil || *vm.RecursiveReadOnly == v1.RecursiveReadOnlyDisabled {
		return false, nil
	}
	if !vm.ReadOnly {
		return false, fmt.Errorf("volume %q requested recursive read-only mode, but it is not read-only", vm.Name)
	}
	if vm.MountPropagation != nil && *vm.MountPropagation != v1.MountPropagationNone {
		return false, fmt.Errorf("volume %q requested recursive read-only mode, but it is not compatible with propagation %q",
			vm.Name, *vm.MountPropagation)
	}
	switch mode := *vm.RecursiveReadOnly; mode {
	case v1.RecursiveReadOnlyIfPossible:
		return supported, nil
	case v1.RecursiveReadOnlyEnabled:
		if !supported {
			return false, fmt.Errorf("volume %q requested recursive read-only mode, but it is not supported by the runtime", vm.Name)
		}
		return true, nil
	default:
		return false, fmt.Errorf("unknown recursive read-only mode %q", mode)
	}
}
