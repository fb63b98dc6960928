package eviction

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

func TestLocalStorageViolation(t *testing.T) {
	withVolume := func(medium v1.StorageMedium, limit string) *v1.Pod {
		p := pod("p", 0, nil, nil)
		ed := &v1.EmptyDirVolumeSource{Medium: medium}
		if limit != "" {
			l := q(limit)
			ed.SizeLimit = &l
		}
		p.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: ed}}}
		return p
	}
	volumeUse := func(p *v1.Pod, used string) statsapi.PodStats {
		s := podStats(p, "", "1Mi", "1Mi")
		s.VolumeStats = []statsapi.VolumeStats{{Name: "scratch", FsStats: statsapi.FsStats{UsedBytes: u64(used)}}}
		return s
	}
	containerLimit := pod("p", 0, nil, storage("16Mi"))
	sidecar := pod("p", 0, nil, nil)
	sidecar.Spec.InitContainers = []v1.Container{{Name: "c", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways),
		Resources: v1.ResourceRequirements{Limits: storage("16Mi")}}}
	podLimit := pod("p", 0, nil, storage("100Mi"))
	podLimit.Spec.Containers = append(podLimit.Spec.Containers, v1.Container{Name: "d", Resources: v1.ResourceRequirements{Limits: storage("100Mi")}})
	podTotal := func(used string) statsapi.PodStats {
		s := podStats(podLimit, "", "1Mi", "1Mi")
		s.EphemeralStorage = &statsapi.FsStats{UsedBytes: u64(used)}
		return s
	}
	tests := []struct {
		name      string
		pod       *v1.Pod
		stats     statsapi.PodStats
		dedicated bool
		want      string
	}{
		{"emptyDir over its sizeLimit", withVolume("", "10Mi"), volumeUse(withVolume("", "10Mi"), "11Mi"), false,
			`Usage of EmptyDir volume "scratch" exceeds the limit "10Mi". `},
		{"emptyDir at its sizeLimit", withVolume("", "10Mi"), volumeUse(withVolume("", "10Mi"), "10Mi"), false, ""},
		{"memory-backed emptyDir is the tmpfs's business", withVolume(v1.StorageMediumMemory, "10Mi"), volumeUse(withVolume("", "10Mi"), "11Mi"), false, ""},
		{"emptyDir without sizeLimit", withVolume("", ""), volumeUse(withVolume("", ""), "11Gi"), false, ""},
		{"container over its limit with its writable layer", containerLimit, podStats(containerLimit, "", "16Mi", "1Mi"), false,
			`Container c exceeded its local ephemeral storage limit "16Mi". `},
		{"with a dedicated image filesystem only logs count", containerLimit, podStats(containerLimit, "", "16Mi", "1Mi"), true, ""},
		{"logs alone over the limit", containerLimit, podStats(containerLimit, "", "", "17Mi"), true,
			`Container c exceeded its local ephemeral storage limit "16Mi". `},
		{"restartable init container (sidecar) over its limit", sidecar, podStats(sidecar, "", "17Mi", "1Mi"), false,
			`Container c exceeded its local ephemeral storage limit "16Mi". `},
		{"pod over the sum of its containers' limits", podLimit, podTotal("201Mi"), false,
			"Pod ephemeral local storage usage exceeds the total limit of containers 200Mi. "},
		{"pod within the sum", podLimit, podTotal("199Mi"), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			signal, msg, over := LocalStorageViolation(tt.pod, tt.stats, tt.dedicated)
			if over != (tt.want != "") || msg != tt.want {
				t.Errorf("LocalStorageViolation = %q, %v; want %q", msg, over, tt.want)
			}
			wantSignal := map[string]string{"Usage": SignalEmptyDirFsLimit, "Container": SignalEphemeralContainerFsLimit, "Pod e": SignalEphemeralPodFsLimit}
			for prefix, sig := range wantSignal {
				if strings.HasPrefix(tt.want, prefix) && signal != sig {
					t.Errorf("signal %q, want %q", signal, sig)
				}
			}
		})
	}
}
