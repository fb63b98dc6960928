package kuberuntime

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// imageVolumeRuntimes are the runtimes known to mount images (CRI Mount.image, KEP-4639) and
// the first version that does. A runtime not listed is trusted: it fails the container itself.
var imageVolumeRuntimes = map[string]string{"containerd": "2.1.0", "cri-o": "1.31.0"}

// imageVolumesUnsupported says why the runtime cannot mount image volumes, or "" when it can
// (or is not known not to). An older runtime would silently ignore the field and mount nothing.
func imageVolumesUnsupported(rt *runtimeapi.VersionResponse) string {
	name := strings.ToLower(rt.GetRuntimeName())
	first, known := imageVolumeRuntimes[name]
	if !known {
		return ""
	}
	have, err := version.ParseGeneric(rt.GetRuntimeVersion())
	if err != nil {
		return fmt.Sprintf("the runtime's version %s %q cannot be read", rt.GetRuntimeName(), rt.GetRuntimeVersion())
	}
	if have.LessThan(version.MustParseGeneric(first)) {
		return fmt.Sprintf("the container runtime %s %s cannot mount images: image volumes need %s %s or later",
			rt.GetRuntimeName(), rt.GetRuntimeVersion(), rt.GetRuntimeName(), first)
	}
	return ""
}

// runtimeVersion is the runtime's answer to CRI Version, nil when unknown.
func (m *Manager) runtimeVersion() *runtimeapi.VersionResponse {
	if m.deps.Version == nil {
		return nil
	}
	return m.deps.Version.Version()
}

// imageVolumes makes the images of the image volumes that c mounts present, per each volume's
// pull policy and with the pod's pull secrets, as upstream's getImageVolumes, and returns
// their image specs by volume name. A failed pull fails the container with the pull's waiting
// reason (ErrImagePull, ImagePullBackOff, ErrImageNeverPull); a runtime that cannot mount
// images fails it with CreateContainerConfigError.
func (m *Manager) imageVolumes(ctx context.Context, pc *podContext, c *v1.Container) (map[string]*runtimeapi.ImageSpec, error) {
	var out map[string]*runtimeapi.ImageSpec
	for _, vm := range c.VolumeMounts {
		vol := podVolume(pc.pod, vm.Name)
		if vol == nil || vol.Image == nil || out[vm.Name] != nil {
			continue
		}
		if why := imageVolumesUnsupported(m.runtimeVersion()); why != "" {
			return nil, m.configError(pc.pod, c, fmt.Errorf("image volume %q: %s", vm.Name, why))
		}
		// The pull is the container's: its waiting reason and events name the container.
		img, err := m.ensureImage(ctx, pc.pod, &v1.Container{Name: c.Name, Image: vol.Image.Reference, ImagePullPolicy: vol.Image.PullPolicy}, pc.sandboxCfg)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]*runtimeapi.ImageSpec{}
		}
		out[vm.Name] = &runtimeapi.ImageSpec{Image: img.GetId(), UserSpecifiedImage: vol.Image.Reference,
			Annotations: pc.pod.Annotations}
	}
	return out, nil
}

func podVolume(pod *v1.Pod, name string) *v1.Volume {
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == name {
			return &pod.Spec.Volumes[i]
		}
	}
	return nil
}
