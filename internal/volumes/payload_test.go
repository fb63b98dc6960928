package volumes

import (
	"os"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestDownwardAPIPayload(t *testing.T) {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u-1",
			Labels: map[string]string{"k": "v"}, Annotations: map[string]string{"x/y": "z"}},
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{{Name: "init", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}}},
			Containers: []v1.Container{{Name: "app", Resources: v1.ResourceRequirements{
				Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1500m"), v1.ResourceMemory: resource.MustParse("0"),
					"hugepages-2Mi": resource.MustParse("4Mi")},
				Requests: v1.ResourceList{v1.ResourceMemory: resource.MustParse("100M")}}}},
		},
	}
	alloc := v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("1Gi")}
	field := func(p string) v1.DownwardAPIVolumeFile {
		return v1.DownwardAPIVolumeFile{Path: "f", FieldRef: &v1.ObjectFieldSelector{FieldPath: p}}
	}
	res := func(c, r, div string) v1.DownwardAPIVolumeFile {
		sel := &v1.ResourceFieldSelector{ContainerName: c, Resource: r}
		if div != "" {
			sel.Divisor = resource.MustParse(div)
		}
		return v1.DownwardAPIVolumeFile{Path: "f", ResourceFieldRef: sel}
	}
	for _, tc := range []struct {
		item          v1.DownwardAPIVolumeFile
		want, wantErr string
	}{
		{item: field("metadata.name"), want: "web"},
		{item: field("metadata.namespace"), want: "ns"},
		{item: field("metadata.uid"), want: "u-1"},
		{item: field("metadata.labels"), want: `k="v"`},
		{item: field("metadata.annotations['x/y']"), want: "z"},
		{item: field("metadata.labels['missing']"), want: ""},
		{item: field("metadata.labels['bad key!']"), wantErr: "invalid key subscript in metadata.labels['bad key!']"},
		{item: field("metadata.name['x']"), wantErr: `fieldPath "metadata.name['x']" does not support subscript`},
		{item: field("spec.nodeName"), wantErr: "unsupported fieldPath: spec.nodeName"},
		{item: res("app", "limits.cpu", ""), want: "2"},          // 1.5 rounded up
		{item: res("app", "limits.cpu", "1m"), want: "1500"},     //
		{item: res("app", "limits.memory", "1Mi"), want: "1024"}, // zero limit: allocatable
		{item: res("app", "requests.memory", "1M"), want: "100"}, //
		{item: res("app", "requests.cpu", ""), want: "0"},        // unset request
		{item: res("app", "limits.hugepages-2Mi", "1Mi"), want: "4"},
		{item: res("app", "limits.ephemeral-storage", ""), want: "0"}, // no limit, none allocatable
		{item: res("init", "requests.cpu", "1m"), want: "100"},
		{item: res("ghost", "limits.cpu", ""), wantErr: "container ghost not found"},
		{item: res("app", "limits.nvidia.com/gpu", ""), wantErr: "unsupported container resource : limits.nvidia.com/gpu"},
	} {
		got, err := downwardAPIPayload([]v1.DownwardAPIVolumeFile{tc.item}, pod, nil, alloc)
		var name string
		if tc.item.FieldRef != nil {
			name = tc.item.FieldRef.FieldPath
		} else {
			name = tc.item.ResourceFieldRef.ContainerName + "/" + tc.item.ResourceFieldRef.Resource
		}
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), `item "f"`) {
				t.Errorf("%s: err = %v, want %q", name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || string(got["f"].data) != tc.want || got["f"].mode != 0o644 {
			t.Errorf("%s = %q (mode %v), %v; want %q", name, got["f"].data, got["f"].mode, err, tc.want)
		}
	}
}

func TestNestedMountPoints(t *testing.T) {
	c := func(mounts ...v1.VolumeMount) v1.Container { return v1.Container{Name: "c", VolumeMounts: mounts} }
	vm := func(name, path string) v1.VolumeMount { return v1.VolumeMount{Name: name, MountPath: path} }
	for _, tc := range []struct {
		name    string
		spec    v1.PodSpec
		want    []string
		wantErr bool
	}{
		{name: "none", spec: v1.PodSpec{Containers: []v1.Container{c(vm("v", "/a"), vm("o", "/b"))}}},
		{name: "direct and double nested", spec: v1.PodSpec{Containers: []v1.Container{
			c(vm("v", "/a"), vm("o", "/a/b"), vm("o2", "/a/b/c"), vm("o3", "/a/d/"), vm("o4", "/ab"))}},
			want: []string{"b", "d"}},
		{name: "init and ephemeral", spec: v1.PodSpec{
			InitContainers:      []v1.Container{c(vm("v", "/a"), vm("o", "/a/i"))},
			EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{VolumeMounts: []v1.VolumeMount{vm("v", "/a"), vm("o", "/a/e")}}}},
		}, want: []string{"i", "e"}},
		{name: "relative parent", spec: v1.PodSpec{Containers: []v1.Container{c(vm("v", "../x"))}}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := nestedMountPoints(&v1.Pod{Spec: tc.spec}, "v")
			if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, %v; want %v (error: %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestPodFSUser(t *testing.T) {
	sc := func(u int64) *v1.SecurityContext { return &v1.SecurityContext{RunAsUser: &u} }
	for _, tc := range []struct {
		name string
		pod  *int64
		cs   []*v1.SecurityContext
		want *int64
	}{
		{name: "none", cs: []*v1.SecurityContext{nil}},
		{name: "pod level", pod: ptr.To[int64](1000), cs: []*v1.SecurityContext{nil, nil}, want: ptr.To[int64](1000)},
		{name: "container overrides to the same", pod: ptr.To[int64](1000), cs: []*v1.SecurityContext{sc(2000), sc(2000)}, want: ptr.To[int64](2000)},
		{name: "differ", cs: []*v1.SecurityContext{sc(1), sc(2)}},
		{name: "one unset", cs: []*v1.SecurityContext{sc(1), nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{}
			if tc.pod != nil {
				pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: tc.pod}
			}
			for _, s := range tc.cs {
				pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{SecurityContext: s})
			}
			if got := podFSUser(pod); !ptrEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", ptr.Deref(got, -1), ptr.Deref(tc.want, -1))
			}
		})
	}
}

func ptrEqual(a, b *int64) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

func TestKeyPayloads(t *testing.T) {
	cm := &v1.ConfigMap{Data: map[string]string{"a": "A"}, BinaryData: map[string][]byte{"b": {1}}}
	sec := &v1.Secret{Data: map[string][]byte{"a": []byte("S")}, StringData: map[string]string{"ignored": "x"}}
	type file struct {
		data string
		mode os.FileMode
	}
	for _, tc := range []struct {
		name     string
		secret   bool
		items    []v1.KeyToPath
		defMode  *int32
		optional bool
		want     map[string]file
		wantErr  string
	}{
		{name: "configMap all keys, default 0644", want: map[string]file{"a": {"A", 0o644}, "b": {"\x01", 0o644}}},
		{name: "configMap defaultMode", defMode: ptr.To[int32](0o600), want: map[string]file{"a": {"A", 0o600}, "b": {"\x01", 0o600}}},
		{name: "configMap binary item with mode", items: []v1.KeyToPath{{Key: "b", Path: "x/b", Mode: ptr.To[int32](0o755)}},
			want: map[string]file{"x/b": {"\x01", 0o755}}},
		{name: "configMap mode bits beyond perm dropped", defMode: ptr.To[int32](0o4755), want: map[string]file{"a": {"A", 0o755}, "b": {"\x01", 0o755}}},
		{name: "secret all keys (stringData is the API server's)", secret: true, want: map[string]file{"a": {"S", 0o644}}},
		{name: "secret missing item", secret: true, items: []v1.KeyToPath{{Key: "z", Path: "z"}}, wantErr: "references non-existent secret key: z"},
		{name: "secret missing item optional", secret: true, optional: true, items: []v1.KeyToPath{{Key: "z", Path: "z"}}, want: map[string]file{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got map[string]fileProjection
			var err error
			if tc.secret {
				got, err = secretPayload(tc.items, sec, tc.defMode, tc.optional)
			} else {
				got, err = configMapPayload(tc.items, cm, tc.defMode, tc.optional)
			}
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
			for p, w := range tc.want {
				if f := got[p]; string(f.data) != w.data || f.mode != w.mode || f.uid != nil {
					t.Errorf("%s = %q %v, want %q %v", p, f.data, f.mode, w.data, w.mode)
				}
			}
		})
	}
}
