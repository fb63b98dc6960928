package kuberuntime

import (
	"errors"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestImageVolumesUnsupported(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		want          string
	}{
		{"containerd", "v2.4.2", ""},
		{"containerd", "v2.1.0", ""},
		{"containerd", "v2.0.5", "the container runtime containerd v2.0.5 cannot mount images: image volumes need containerd 2.1.0 or later"},
		{"containerd", "1.6.20", "the container runtime containerd 1.6.20 cannot mount images: image volumes need containerd 2.1.0 or later"},
		{"cri-o", "1.31.2", ""},
		{"cri-o", "1.30.0", "the container runtime cri-o 1.30.0 cannot mount images: image volumes need cri-o 1.31.0 or later"},
		{"containerd", "main", `the runtime's version containerd "main" cannot be read`},
		{"some-runtime", "0.1", ""}, // unknown runtimes say so themselves
	} {
		got := imageVolumesUnsupported(&runtimeapi.VersionResponse{RuntimeName: tc.name, RuntimeVersion: tc.version})
		if got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.name, tc.version, got, tc.want)
		}
	}
}

// withImageVolume adds an image volume and mounts it into the container app.
func withImageVolume(name, ref string, policy v1.PullPolicy) podOpt {
	return mod(func(p *v1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: name, VolumeSource: v1.VolumeSource{
			Image: &v1.ImageVolumeSource{Reference: ref, PullPolicy: policy}}})
		for i := range p.Spec.Containers {
			if p.Spec.Containers[i].Name == "app" {
				p.Spec.Containers[i].VolumeMounts = append(p.Spec.Containers[i].VolumeMounts,
					v1.VolumeMount{Name: name, MountPath: "/data", SubPath: "sub"})
			}
		}
	})
}

func TestSyncPodImageVolume(t *testing.T) {
	const dataImage = "registry.local/data:1.0"
	containerd := func(version string) Versioner {
		return fixedVersion{&runtimeapi.VersionResponse{RuntimeName: "containerd", RuntimeVersion: version}}
	}
	t.Run("pulled per its policy and passed to the mounts by ID", func(t *testing.T) {
		h := newHarness(t)
		h.m.deps.Version = containerd("v2.4.2")
		pod := newPod(mains("app", "other"), withImageVolume("data", dataImage, v1.PullIfNotPresent))
		h.mustSync(pod)
		if got := h.img.Pulled(); !slices.Contains(got, dataImage) {
			t.Errorf("pulled %v, want the volume's image", got)
		}
		var images map[string]*runtimeapi.ImageSpec
		for _, c := range h.vol.mounts {
			if c.container == "app" {
				images = c.images
			} else if len(c.images) != 0 {
				t.Errorf("container %s got image volumes %v it does not mount", c.container, c.images)
			}
		}
		spec := images["data"]
		if spec == nil || spec.Image != "sha256:"+dataImage || spec.UserSpecifiedImage != dataImage {
			t.Errorf("image volume spec %v, want the pulled image's ID and the reference", spec)
		}
		if got := h.started(pod); !slices.Equal(got, []string{"app", "other"}) {
			t.Errorf("running %v", got)
		}
	})
	t.Run("a missing image: ErrImagePull for the container that mounts it, the others run", func(t *testing.T) {
		h := newHarness(t)
		h.m.deps.Version = containerd("v2.4.2")
		pod := newPod(mains("app", "other"), withImageVolume("data", dataImage, v1.PullIfNotPresent))
		h.img.InjectError("PullImage", errors.New(dataImage+": not found"))
		res := h.sync(pod)
		if w := res.Waiting["app"]; w.Reason != ReasonErrImagePull {
			t.Errorf("app waiting %+v, want ErrImagePull", w)
		}
		if got := h.started(pod); !slices.Equal(got, []string{"other"}) {
			t.Errorf("running %v, want other alone", got)
		}
	})
	t.Run("pull policy Never and the image absent: ErrImageNeverPull", func(t *testing.T) {
		h := newHarness(t)
		h.m.deps.Version = containerd("v2.4.2")
		pod := newPod(withImageVolume("data", dataImage, v1.PullNever))
		res := h.sync(pod)
		if w := res.Waiting["app"]; w.Reason != ReasonErrImageNeverPull {
			t.Errorf("app waiting %+v, want ErrImageNeverPull", w)
		}
	})
	t.Run("a runtime that cannot mount images: CreateContainerConfigError, never a mount of nothing", func(t *testing.T) {
		h := newHarness(t)
		h.m.deps.Version = containerd("1.6.20")
		pod := newPod(mains("app", "other"), withImageVolume("data", dataImage, v1.PullIfNotPresent))
		res := h.sync(pod)
		want := `image volume "data": the container runtime containerd 1.6.20 cannot mount images: image volumes need containerd 2.1.0 or later`
		if w := res.Waiting["app"]; w.Reason != ReasonCreateContainerConfigError || w.Message != want {
			t.Errorf("app waiting %+v, want CreateContainerConfigError %q", w, want)
		}
		if got := h.started(pod); !slices.Equal(got, []string{"other"}) {
			t.Errorf("running %v, want other alone", got)
		}
		if slices.Contains(h.img.Pulled(), dataImage) {
			t.Errorf("pulled the image of a volume the runtime cannot mount")
		}
	})
}

// fixedVersion is a runtime that answered Version with v.
type fixedVersion struct{ v *runtimeapi.VersionResponse }

func (f fixedVersion) Version() *runtimeapi.VersionResponse { return f.v }

var _ Versioner = fixedVersion{}
