package apiobjects

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

func vol(src v1.VolumeSource) v1.Volume { return v1.Volume{Name: "v", VolumeSource: src} }

func ref(name string) *v1.LocalObjectReference { return &v1.LocalObjectReference{Name: name} }

func TestReferencedObjects(t *testing.T) {
	envFrom := func(cm, s string) []v1.EnvFromSource {
		return []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: *ref(cm)}},
			{SecretRef: &v1.SecretEnvSource{LocalObjectReference: *ref(s)}}}
	}
	env := func(cm, s string) []v1.EnvVar {
		return []v1.EnvVar{
			{Name: "A", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: *ref(cm), Key: "k"}}},
			{Name: "B", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: *ref(s), Key: "k"}}},
			{Name: "C", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "D", Value: "plain"},
		}
	}
	for _, tc := range []struct {
		name                        string
		spec                        v1.PodSpec
		wantConfigMaps, wantSecrets []string
	}{
		{name: "nothing", spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Env: []v1.EnvVar{{Name: "X", Value: "y"}}}}}},
		{
			name: "containers of every kind: env and envFrom",
			spec: v1.PodSpec{
				InitContainers:      []v1.Container{{Name: "i", EnvFrom: envFrom("init-cm", "init-s")}},
				Containers:          []v1.Container{{Name: "c", Env: env("main-cm", "main-s")}},
				EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "e", Env: env("eph-cm", "eph-s")}}},
			},
			wantConfigMaps: []string{"eph-cm", "init-cm", "main-cm"},
			wantSecrets:    []string{"eph-s", "init-s", "main-s"},
		},
		{
			name: "imagePullSecrets, empty names skipped",
			spec: v1.PodSpec{ImagePullSecrets: []v1.LocalObjectReference{{Name: "pull"}, {Name: ""}},
				Containers: []v1.Container{{Name: "c", Env: env("", "")}}},
			wantSecrets: []string{"pull"},
		},
		{
			name: "configMap, secret and projected volumes",
			spec: v1.PodSpec{Volumes: []v1.Volume{
				vol(v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: *ref("cm-vol")}}),
				vol(v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s-vol"}}),
				vol(v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
					{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: *ref("cm-proj")}},
					{Secret: &v1.SecretProjection{LocalObjectReference: *ref("s-proj")}},
					{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}},
					{DownwardAPI: &v1.DownwardAPIProjection{}},
				}}}),
				vol(v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}),
			}},
			wantConfigMaps: []string{"cm-proj", "cm-vol"},
			wantSecrets:    []string{"s-proj", "s-vol"},
		},
		{
			name: "volume plugins' secret references",
			spec: v1.PodSpec{Volumes: []v1.Volume{
				vol(v1.VolumeSource{AzureFile: &v1.AzureFileVolumeSource{SecretName: "azure"}}),
				vol(v1.VolumeSource{AzureFile: &v1.AzureFileVolumeSource{}}),
				vol(v1.VolumeSource{CephFS: &v1.CephFSVolumeSource{SecretRef: ref("ceph")}}),
				vol(v1.VolumeSource{CephFS: &v1.CephFSVolumeSource{}}),
				vol(v1.VolumeSource{Cinder: &v1.CinderVolumeSource{SecretRef: ref("cinder")}}),
				vol(v1.VolumeSource{FlexVolume: &v1.FlexVolumeSource{SecretRef: ref("flex")}}),
				vol(v1.VolumeSource{RBD: &v1.RBDVolumeSource{SecretRef: ref("rbd")}}),
				vol(v1.VolumeSource{ScaleIO: &v1.ScaleIOVolumeSource{SecretRef: ref("scaleio")}}),
				vol(v1.VolumeSource{ISCSI: &v1.ISCSIVolumeSource{SecretRef: ref("iscsi")}}),
				vol(v1.VolumeSource{StorageOS: &v1.StorageOSVolumeSource{SecretRef: ref("storageos")}}),
				vol(v1.VolumeSource{CSI: &v1.CSIVolumeSource{NodePublishSecretRef: ref("csi")}}),
			}},
			wantSecrets: []string{"azure", "ceph", "cinder", "csi", "flex", "iscsi", "rbd", "scaleio", "storageos"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := referencedObjects(&v1.Pod{Spec: tc.spec})
			if cms := sets.List(got[configMaps]); !slices.Equal(cms, tc.wantConfigMaps) {
				t.Errorf("configMaps %q, want %q", cms, tc.wantConfigMaps)
			}
			if ss := sets.List(got[secrets]); !slices.Equal(ss, tc.wantSecrets) {
				t.Errorf("secrets %q, want %q", ss, tc.wantSecrets)
			}
		})
	}
}

func TestVisitorsStopWhenAsked(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{
		ImagePullSecrets: []v1.LocalObjectReference{{Name: "s1"}, {Name: "s2"}},
		Volumes: []v1.Volume{
			vol(v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: *ref("c1")}}),
			vol(v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: *ref("c2")}}),
		},
	}}
	for name, visit := range map[string]func(*v1.Pod, Visitor) bool{"secrets": VisitPodSecretNames, "configMaps": VisitPodConfigMapNames} {
		var seen []string
		done := visit(pod, func(n string) bool { seen = append(seen, n); return false })
		if done || len(seen) != 1 {
			t.Errorf("%s: completed %t after %q, want a stop after the first", name, done, seen)
		}
	}
}
