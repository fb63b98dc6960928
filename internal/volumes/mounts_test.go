package volumes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func findMount(ms []*runtimeapi.Mount, containerPath string) *runtimeapi.Mount {
	for _, m := range ms {
		if m.ContainerPath == containerPath {
			return m
		}
	}
	return nil
}

func TestMountsReadOnlyAndPropagation(t *testing.T) {
	m, _ := newTestManager(t, newFakeMounter())
	pod := testPod("uid-1", emptyDirVol("data", ""))
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	prop := func(p v1.MountPropagationMode) *v1.MountPropagationMode { return &p }
	c := &v1.Container{Name: "app", VolumeMounts: []v1.VolumeMount{
		{Name: "data", MountPath: "/a"},
		{Name: "data", MountPath: "/b", ReadOnly: true, MountPropagation: prop(v1.MountPropagationNone)},
		{Name: "data", MountPath: "/c", MountPropagation: prop(v1.MountPropagationHostToContainer)},
		{Name: "data", MountPath: "/d", MountPropagation: prop(v1.MountPropagationBidirectional), BindMountOptions: []string{"noexec"}},
		{Name: "data", MountPath: "relative/e/"},
	}}
	ms, err := m.Mounts(pod, c, paths, nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []*runtimeapi.Mount{
		{ContainerPath: "/a", HostPath: paths["data"], Propagation: runtimeapi.MountPropagation_PROPAGATION_PRIVATE},
		{ContainerPath: "/b", HostPath: paths["data"], Readonly: true, Propagation: runtimeapi.MountPropagation_PROPAGATION_PRIVATE},
		{ContainerPath: "/c", HostPath: paths["data"], Propagation: runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER},
		{ContainerPath: "/d", HostPath: paths["data"], Propagation: runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL, MountOptions: []string{"noexec"}},
		{ContainerPath: "/relative/e", HostPath: paths["data"]},
	}
	if len(ms) != len(want) { // no IPs, no hostNetwork: no /etc/hosts; no termination path
		t.Fatalf("got %d mounts: %v", len(ms), ms)
	}
	for i := range want {
		if !proto.Equal(ms[i], want[i]) {
			t.Errorf("mount %d = %v, want %v", i, ms[i], want[i])
		}
	}

	c.VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/x", MountPropagation: prop("Sideways")}}
	if _, err := m.Mounts(pod, c, paths, nil, 0, nil); err == nil || !strings.Contains(err.Error(), `volumeMount "data" at /x: invalid MountPropagation mode: "Sideways"`) {
		t.Fatalf("err = %v", err)
	}
	c.VolumeMounts = []v1.VolumeMount{{Name: "other", MountPath: "/x"}}
	if _, err := m.Mounts(pod, c, paths, nil, 0, nil); err == nil || !strings.Contains(err.Error(), `cannot find volume "other" to mount into container "app"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestMountsRecursiveReadOnly(t *testing.T) {
	rro := func(mode v1.RecursiveReadOnlyMode, readOnly bool) v1.VolumeMount {
		return v1.VolumeMount{Name: "v", MountPath: "/v", ReadOnly: readOnly, RecursiveReadOnly: &mode}
	}
	for _, tc := range []struct {
		vm        v1.VolumeMount
		supported bool
		want      bool
		wantErr   string
	}{
		{vm: rro(v1.RecursiveReadOnlyDisabled, true), supported: true},
		{vm: rro(v1.RecursiveReadOnlyIfPossible, true), supported: true, want: true},
		{vm: rro(v1.RecursiveReadOnlyIfPossible, true)},
		{vm: rro(v1.RecursiveReadOnlyEnabled, true), supported: true, want: true},
		{vm: rro(v1.RecursiveReadOnlyEnabled, true), wantErr: "not supported by the runtime"},
		{vm: rro(v1.RecursiveReadOnlyEnabled, false), supported: true, wantErr: "it is not read-only"},
	} {
		got, err := recursiveReadOnly(&tc.vm, tc.supported)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err = %v, want %q", *tc.vm.RecursiveReadOnly, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v supported=%v: %v, %v; want %v", *tc.vm.RecursiveReadOnly, tc.supported, got, err, tc.want)
		}
	}
}

func TestMountsSubPath(t *testing.T) {
	m, _ := newTestManager(t, newFakeMounter())
	outside := t.TempDir()
	pod := testPod("uid-1", emptyDirVol("data", ""))
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	vol := paths["data"]
	if err := os.Mkdir(filepath.Join(vol, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"inside": "real", "escape": outside, "escape-rel": "../../../../.."} {
		if err := os.Symlink(target, filepath.Join(vol, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		subPath, want, wantErr string
	}{
		{subPath: "a/b", want: filepath.Join(vol, "a/b")}, // created
		{subPath: "./real/", want: filepath.Join(vol, "real")},
		{subPath: "inside/x", want: filepath.Join(vol, "real/x")}, // resolved inside the volume
		{subPath: "/etc", wantErr: `subPath "/etc" must not be an absolute path`},
		{subPath: "../other", wantErr: `subPath "../other" must not contain '..'`},
		{subPath: "a/../../x", wantErr: "must not contain '..'"},
		{subPath: "escape", wantErr: `subPath "escape"`},
		{subPath: "escape/sub", wantErr: `subPath "escape/sub"`},
		{subPath: "escape-rel/etc", wantErr: `subPath "escape-rel/etc"`},
	} {
		t.Run(tc.subPath, func(t *testing.T) {
			c := &v1.Container{Name: "app", VolumeMounts: []v1.VolumeMount{{Name: "data", MountPath: "/m", SubPath: tc.subPath}}}
			ms, err := m.Mounts(pod, c, paths, nil, 0, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), `container "app" volumeMount "data" at /m`) {
					t.Fatalf("err = %v, want one naming the mount and containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, _ := filepath.EvalSymlinks(tc.want)
			if ms[0].HostPath != want {
				t.Fatalf("HostPath = %q, want %q", ms[0].HostPath, want)
			}
			if fi, err := os.Stat(want); err != nil || !fi.IsDir() {
				t.Fatalf("subPath not created: %v", err)
			}
		})
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("something was created outside the volume: %v", entries)
	}
	if fi, err := os.Stat(filepath.Join(vol, "a")); err != nil || fi.Mode().Perm() != 0o777 {
		t.Fatalf("created subPath dirs take the volume's mode: %v, %v", fi.Mode(), err)
	}
}

func TestMountsSubPathExpr(t *testing.T) {
	m, _ := newTestManager(t, newFakeMounter())
	pod := testPod("uid-1", emptyDirVol("data", ""))
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	c := &v1.Container{Name: "app",
		Env: []v1.EnvVar{
			{Name: "POD", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "DIR", Value: "logs-$(POD)"},
			{Name: "EMPTY", Value: ""},
		},
		VolumeMounts: []v1.VolumeMount{{Name: "data", MountPath: "/m", SubPathExpr: "$(DIR)/$$(x)"}},
	}
	ms, err := m.Mounts(pod, c, paths, nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(paths["data"], "logs-web/$(x)"); ms[0].HostPath != want {
		t.Fatalf("HostPath = %q, want %q", ms[0].HostPath, want)
	}
	c.VolumeMounts[0].SubPathExpr = "$(EMPTY)/$(NOPE)"
	if _, err := m.Mounts(pod, c, paths, nil, 0, nil); err == nil || !strings.Contains(err.Error(), "missing value for EMPTY, NOPE") {
		t.Fatalf("err = %v", err)
	}
	// Config.SubPathEnv replaces the built-in resolver.
	m.cfg.SubPathEnv = func(*v1.Pod, *v1.Container, []string) (func(string) (string, bool), error) {
		return func(k string) (string, bool) { return "from-" + k, true }, nil
	}
	c.VolumeMounts[0].SubPathExpr = "$(NOPE)"
	if ms, err := m.Mounts(pod, c, paths, nil, 0, nil); err != nil || ms[0].HostPath != filepath.Join(paths["data"], "from-NOPE") {
		t.Fatalf("with SubPathEnv: %v, %v", ms, err)
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"A": "a", "B": "b"}
	mapping := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return "$(" + k + ")"
	}
	for in, want := range map[string]string{
		"":            "",
		"$(A)":        "a",
		"x$(A)y$(B)z": "xaybz",
		"$$(A)":       "$(A)",
		"$$":          "$",
		"$(A":         "$(A",
		"$x$":         "$x$",
		"$(C)":        "$(C)",
		"$()":         "$()",
	} {
		if got := expand(in, mapping); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMountsEtcHostsRule(t *testing.T) {
	for _, tc := range []struct {
		name        string
		podIPs      []string
		hostNetwork bool
		ownHosts    bool
		want        bool
	}{
		{name: "pod IPs", podIPs: []string{"10.0.0.5"}, want: true},
		{name: "no IPs yet", want: false},
		{name: "host network", hostNetwork: true, want: true},
		{name: "container mounts /etc/hosts itself", podIPs: []string{"10.0.0.5"}, ownHosts: true, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, root := newTestManager(t, newFakeMounter())
			nodeHosts := filepath.Join(t.TempDir(), "hosts")
			if err := os.WriteFile(nodeHosts, []byte("127.0.0.1\tnode\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			m.cfg.HostsFile = nodeHosts
			pod := testPod("uid-1", emptyDirVol("data", ""))
			pod.Spec.HostNetwork = tc.hostNetwork
			paths, err := m.SetUp(pod)
			if err != nil {
				t.Fatal(err)
			}
			c := &v1.Container{Name: "app"}
			if tc.ownHosts {
				c.VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/etc/hosts", SubPath: "hosts"}}
			}
			ms, err := m.Mounts(pod, c, paths, nil, 0, tc.podIPs)
			if err != nil {
				t.Fatal(err)
			}
			hosts := filepath.Join(root, "pods/uid-1/etc-hosts")
			got := findMount(ms, "/etc/hosts")
			if tc.ownHosts {
				if got == nil || got.HostPath == hosts {
					t.Fatalf("the container's own /etc/hosts mount was replaced: %v", ms)
				}
				return
			}
			if (got != nil) != tc.want {
				t.Fatalf("/etc/hosts mounted = %v, want %v (%v)", got != nil, tc.want, ms)
			}
			if got != nil && (got.HostPath != hosts || got.Readonly) {
				t.Fatalf("hosts mount = %v", got)
			}
		})
	}
}

func TestMountsTerminationMessage(t *testing.T) {
	m, root := newTestManager(t, newFakeMounter())
	pod := testPod("uid-1")
	c := &v1.Container{Name: "app", TerminationMessagePath: "/dev/termination-log"}
	ms, err := m.Mounts(pod, c, nil, nil, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, "pods/uid-1/containers/app/00000003")
	got := findMount(ms, "/dev/termination-log")
	if got == nil || got.HostPath != want || got.Readonly {
		t.Fatalf("termination mount = %v, want host path %s", got, want)
	}
	if mode := mustMode(t, want); !mode.IsRegular() || mode.Perm() != 0o666 {
		t.Fatalf("mode = %v", mode)
	}
	if m.TerminationMessagePath(pod.UID, "app", 3) != want {
		t.Fatal("TerminationMessagePath disagrees with Mounts")
	}
	c.TerminationMessagePath = ""
	if ms, _ := m.Mounts(pod, c, nil, nil, 4, nil); len(ms) != 0 {
		t.Fatalf("no terminationMessagePath: %v", ms)
	}
	if _, err := m.Mounts(pod, &v1.Container{Name: "../x"}, nil, nil, 0, nil); err == nil {
		t.Fatal("a container name with a slash must be rejected")
	}
}

func TestMountsImageVolume(t *testing.T) {
	m, _ := newTestManager(t, newFakeMounter())
	pod := testPod("uid-1", emptyDirVol("data", ""),
		v1.Volume{Name: "tools", VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: "registry.local/tools:1", PullPolicy: v1.PullIfNotPresent}}})
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatalf("SetUp with an image volume: %v", err)
	}
	if _, ok := paths["tools"]; ok {
		t.Errorf("an image volume has a host path %q; the runtime mounts the image", paths["tools"])
	}
	images := map[string]*runtimeapi.ImageSpec{"tools": {Image: "sha256:abc", UserSpecifiedImage: "registry.local/tools:1"}}
	c := &v1.Container{Name: "app", VolumeMounts: []v1.VolumeMount{
		{Name: "tools", MountPath: "/tools"},
		{Name: "tools", MountPath: "/bin-only", SubPath: "usr/bin"},
		{Name: "data", MountPath: "/data"},
	}}
	ms, err := m.Mounts(pod, c, paths, images, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []*runtimeapi.Mount{
		{ContainerPath: "/tools", Image: images["tools"], Readonly: true, Propagation: runtimeapi.MountPropagation_PROPAGATION_PRIVATE},
		{ContainerPath: "/bin-only", Image: images["tools"], ImageSubPath: "usr/bin", Readonly: true, Propagation: runtimeapi.MountPropagation_PROPAGATION_PRIVATE},
		{ContainerPath: "/data", HostPath: paths["data"], Propagation: runtimeapi.MountPropagation_PROPAGATION_PRIVATE},
	}
	if len(ms) != len(want) {
		t.Fatalf("got %d mounts: %v", len(ms), ms)
	}
	for i := range want {
		if !proto.Equal(ms[i], want[i]) {
			t.Errorf("mount %d = %v, want %v", i, ms[i], want[i])
		}
	}
	for _, bad := range []struct{ subPath, want string }{
		{"/etc", "error SubPath `/etc` must not be an absolute path"},
		{"a/../../etc", "unable to provision SubPath `a/../../etc`: must not contain '..'"},
	} {
		c.VolumeMounts = []v1.VolumeMount{{Name: "tools", MountPath: "/t", SubPath: bad.subPath}}
		if _, err := m.Mounts(pod, c, paths, images, 0, nil); err == nil || !strings.Contains(err.Error(), `volumeMount "tools" at /t: `+bad.want) {
			t.Errorf("subPath %q: err = %v, want %q", bad.subPath, err, bad.want)
		}
	}
	// Without the runtime's image (it was not pulled), the mount cannot be made.
	c.VolumeMounts = []v1.VolumeMount{{Name: "tools", MountPath: "/tools"}}
	if _, err := m.Mounts(pod, c, paths, nil, 0, nil); err == nil || !strings.Contains(err.Error(), `cannot find volume "tools"`) {
		t.Errorf("no image for the volume: err = %v", err)
	}
}
