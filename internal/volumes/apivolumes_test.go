package volumes

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestConfigMapVolume(t *testing.T) {
	objs := newFakeObjects()
	objs.setConfigMap("app", map[string]string{"app.conf": "level=info\n", "other": "x"})
	objs.configMaps["default/app"].BinaryData = map[string][]byte{"bin": {0, 1, 2}}
	fm := newFakeMounter()
	m, root := newAPITestManager(t, objs, fm)
	pod := testPod("uid-1", cmVol("cfg", "app"))
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "pods/uid-1/volumes/kubernetes.io~configmap/cfg")
	if paths["cfg"] != dir {
		t.Fatalf("path = %s, want %s", paths["cfg"], dir)
	}
	want := map[string]string{"app.conf": "level=info\n", "other": "x", "bin": "\x00\x01\x02"}
	if got := readVolume(t, dir); !mapsEqual(got, want) {
		t.Fatalf("content = %q, want %q", got, want)
	}
	if got := mustMode(t, filepath.Join(dir, "..data/app.conf")).Perm(); got != 0o644 {
		t.Fatalf("default mode = %v, want 0644 (upstream's default)", got)
	}
	if got := mustMode(t, dir).Perm(); got != 0o777 {
		t.Fatalf("volume root mode = %v, want 0777 (an emptyDir)", got)
	}
	if len(fm.tmpfs) != 0 {
		t.Fatalf("a configMap volume is on disk, not tmpfs: %v", fm.tmpfs)
	}

	// An update reaches the file through a new version and the ..data swap.
	before := readlink(t, filepath.Join(dir, "..data"))
	objs.setConfigMap("app", map[string]string{"app.conf": "level=debug\n"})
	if _, err := m.SetUp(pod); err != nil {
		t.Fatal(err)
	}
	after := readlink(t, filepath.Join(dir, "..data"))
	if after == before {
		t.Fatal("..data was not swapped on an update")
	}
	if got := readVolume(t, dir); !mapsEqual(got, map[string]string{"app.conf": "level=debug\n"}) {
		t.Fatalf("after the update: %q", got)
	}
	mustNotExist(t, filepath.Join(dir, before))
	// Nothing changed: no new version.
	if _, err := m.SetUp(pod); err != nil {
		t.Fatal(err)
	}
	if got := readlink(t, filepath.Join(dir, "..data")); got != after {
		t.Fatalf("an unchanged ConfigMap was rewritten: %s -> %s", after, got)
	}
}

func TestConfigMapItemsAndOptional(t *testing.T) {
	objs := newFakeObjects()
	objs.setConfigMap("app", map[string]string{"a": "A", "b": "B"})
	for _, tc := range []struct {
		name     string
		cm       string
		items    []v1.KeyToPath
		optional bool
		defMode  *int32
		want     map[string]string
		modes    map[string]os.FileMode
		wantErr  string
		notFound bool
	}{
		{name: "items with modes", cm: "app", defMode: ptr.To[int32](0o440),
			items: []v1.KeyToPath{{Key: "a", Path: "dir/a.txt", Mode: ptr.To[int32](0o600)}, {Key: "b", Path: "b"}},
			want:  map[string]string{"dir/a.txt": "A", "b": "B"}, modes: map[string]os.FileMode{"dir/a.txt": 0o600, "b": 0o440}},
		{name: "missing key", cm: "app", items: []v1.KeyToPath{{Key: "nope", Path: "n"}},
			wantErr: "configmap references non-existent config key: nope"},
		{name: "missing key optional", cm: "app", optional: true,
			items: []v1.KeyToPath{{Key: "nope", Path: "n"}, {Key: "a", Path: "a"}}, want: map[string]string{"a": "A"}},
		{name: "missing object", cm: "gone", wantErr: `getting ConfigMap default/gone: configmaps "gone" not found`, notFound: true},
		{name: "missing object optional", cm: "gone", optional: true, want: map[string]string{}},
		{name: "bad path", cm: "app", items: []v1.KeyToPath{{Key: "a", Path: "../a"}}, wantErr: "must not contain '..'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := newAPITestManager(t, objs, newFakeMounter())
			vol := cmVol("cfg", tc.cm)
			vol.ConfigMap.Items, vol.ConfigMap.DefaultMode = tc.items, tc.defMode
			if tc.optional {
				vol.ConfigMap.Optional = ptr.To(true)
			}
			paths, err := m.SetUp(testPod("uid-1", vol))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), `configMap volume "cfg"`) {
					t.Fatalf("err = %v, want %q naming the volume", err, tc.wantErr)
				}
				if apierrors.IsNotFound(err) != tc.notFound {
					t.Fatalf("IsNotFound(%v) = %v", err, !tc.notFound)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := readVolume(t, paths["cfg"]); !mapsEqual(got, tc.want) {
				t.Fatalf("content = %q, want %q", got, tc.want)
			}
			for p, want := range tc.modes {
				if got := mustMode(t, filepath.Join(paths["cfg"], "..data", p)).Perm(); got != want {
					t.Errorf("mode of %s = %v, want %v", p, got, want)
				}
			}
		})
	}
}

func TestSecretVolumeOnTmpfs(t *testing.T) {
	objs := newFakeObjects()
	objs.setSecret("creds", map[string]string{"password": "hunter2", "user": "admin"})
	fm := newFakeMounter()
	m, root := newAPITestManager(t, objs, fm)
	vol := secretVol("creds", "creds")
	vol.Secret.DefaultMode = ptr.To[int32](0o400)
	pod := testPod("uid-1", vol)
	pod.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("128Mi")}
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "pods/uid-1/volumes/kubernetes.io~secret/creds")
	if paths["creds"] != dir {
		t.Fatalf("path = %s", paths["creds"])
	}
	if !slices.Equal(fm.tmpfs, []tmpfsCall{{dir, 128 << 20}}) {
		t.Fatalf("tmpfs mounts = %v, want one at %s sized by the pod's limit", fm.tmpfs, dir)
	}
	if got := readVolume(t, dir); !mapsEqual(got, map[string]string{"password": "hunter2", "user": "admin"}) {
		t.Fatalf("content = %q", got)
	}
	if got := mustMode(t, filepath.Join(dir, "..data/password")).Perm(); got != 0o400 {
		t.Fatalf("mode = %v", got)
	}
	if _, err := m.SetUp(pod); err != nil {
		t.Fatal(err)
	}
	if len(fm.tmpfs) != 1 {
		t.Fatalf("re-sync mounted again: %v", fm.tmpfs)
	}

	// Secret items, missing key, missing secret.
	vol.Secret.Items = []v1.KeyToPath{{Key: "nope", Path: "n"}}
	if _, err := m.SetUp(testPod("uid-2", vol)); err == nil || !strings.Contains(err.Error(), "references non-existent secret key: nope") {
		t.Fatalf("err = %v", err)
	}
	gone := secretVol("gone", "gone")
	if _, err := m.SetUp(testPod("uid-3", gone)); !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `secret volume "gone"`) {
		t.Fatalf("err = %v, want NotFound naming the volume", err)
	}
	if len(fm.tmpfs) != 1 {
		t.Fatalf("a failed volume was mounted: %v", fm.tmpfs)
	}
	gone.Secret.Optional = ptr.To(true)
	if paths, err := m.SetUp(testPod("uid-4", gone)); err != nil || len(readVolume(t, paths["gone"])) != 0 {
		t.Fatalf("optional missing secret: %v, %v", paths, err)
	}
}

func TestStandaloneRejectsAPIVolumes(t *testing.T) {
	m, _ := newAPITestManager(t, nil, newFakeMounter())
	token := v1.Volume{Name: "tok", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
		{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}}}}}}
	down := v1.Volume{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Items: []v1.DownwardAPIVolumeFile{
		{Path: "name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}}}
	paths, err := m.SetUp(testPod("uid-1", cmVol("cfg", "x"), secretVol("sec", "y"), token, down))
	if !errors.Is(err, ErrNeedsClusterMode) {
		t.Fatalf("err = %v, want ErrNeedsClusterMode", err)
	}
	for _, want := range []string{`configMap volume "cfg": needs the API server (run nodelet in cluster mode, with --kubeconfig)`,
		`secret volume "sec": needs the API server`, `projected volume "tok": sources[0] serviceAccountToken: needs the API server`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to contain %q", err, want)
		}
	}
	if got := readVolume(t, paths["info"]); got["name"] != "web" {
		t.Fatalf("a downwardAPI volume needs no API server; got %v", got)
	}
}

func TestProjectedVolume(t *testing.T) {
	objs := newFakeObjects()
	objs.setConfigMap("kube-root-ca.crt", map[string]string{"ca.crt": "CA"})
	objs.setSecret("extra", map[string]string{"k": "v"})
	fm := newFakeMounter()
	m, root := newAPITestManager(t, objs, fm)
	vol := v1.Volume{Name: "kube-api-access", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](0o644),
		Sources: []v1.VolumeProjection{
			{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Audience: "api", ExpirationSeconds: ptr.To[int64](3607), Path: "token"}},
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []v1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
			{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "extra"}, Items: []v1.KeyToPath{{Key: "k", Path: "sub/k"}}}},
			{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "missing"}, Optional: ptr.To(true)}},
		},
	}}}
	pod := testPod("uid-1", vol)
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "pods/uid-1/volumes/kubernetes.io~projected/kube-api-access")
	if paths["kube-api-access"] != dir || len(fm.tmpfs) != 1 || fm.tmpfs[0].target != dir {
		t.Fatalf("path = %s, tmpfs = %v", paths["kube-api-access"], fm.tmpfs)
	}
	want := map[string]string{"token": "token-api-3607-0", "ca.crt": "CA", "namespace": "default", "sub/k": "v"}
	if got := readVolume(t, dir); !mapsEqual(got, want) {
		t.Fatalf("content = %q, want %q", got, want)
	}
	if got := mustMode(t, filepath.Join(dir, "..data/token")).Perm(); got != 0o644 {
		t.Fatalf("token mode = %v, want defaultMode without fsUser/fsGroup", got)
	}
	if len(objs.tokenCalls) != 1 || objs.tokenCalls[0].Audience != "api" || *objs.tokenCalls[0].ExpirationSeconds != 3607 {
		t.Fatalf("token calls = %+v", objs.tokenCalls)
	}

	// A refreshed token is written; the rest is unchanged but part of the new version.
	objs.tokenGen++
	if _, err := m.SetUp(pod); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, filepath.Join(dir, "token")); got != "token-api-3607-1" {
		t.Fatalf("token after refresh = %q", got)
	}
	if got := mustRead(t, filepath.Join(dir, "ca.crt")); got != "CA" {
		t.Fatalf("ca.crt after refresh = %q", got)
	}

	// Any failing source fails the volume, and every failure is reported.
	bad := vol.DeepCopy()
	bad.Projected.Sources = append(bad.Projected.Sources,
		v1.VolumeProjection{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "nope"}}},
		v1.VolumeProjection{ClusterTrustBundle: &v1.ClusterTrustBundleProjection{Name: ptr.To("b"), Path: "b"}})
	_, err = m.SetUp(testPod("uid-2", *bad))
	for _, want := range []string{`projected volume "kube-api-access"`, `sources[5] configMap: getting ConfigMap default/nope`,
		"sources[6]: clusterTrustBundle projections are not supported"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
}

func TestProjectedTokenOwnership(t *testing.T) {
	gid, uid := int64(os.Getgid()), int64(os.Getuid())
	for _, tc := range []struct {
		name      string
		sc        *v1.PodSecurityContext
		wantMode  os.FileMode
		wantGroup bool
	}{
		{name: "no fsUser or fsGroup", wantMode: 0o644},
		{name: "fsUser", sc: &v1.PodSecurityContext{RunAsUser: &uid}, wantMode: 0o600},
		{name: "fsGroup", sc: &v1.PodSecurityContext{FSGroup: &gid}, wantMode: 0o640, wantGroup: true},
		{name: "both", sc: &v1.PodSecurityContext{RunAsUser: &uid, FSGroup: &gid}, wantMode: 0o640, wantGroup: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := newAPITestManager(t, newFakeObjects(), newFakeMounter())
			pod := testPod("uid-1", v1.Volume{Name: "tok", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
				Sources: []v1.VolumeProjection{{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}}}}}})
			pod.Spec.SecurityContext = tc.sc
			paths, err := m.SetUp(pod)
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(filepath.Join(paths["tok"], "token"))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != tc.wantMode {
				t.Fatalf("mode = %v, want %v", fi.Mode().Perm(), tc.wantMode)
			}
			st := fi.Sys().(*syscall.Stat_t)
			if int64(st.Uid) != uid || tc.wantGroup && int64(st.Gid) != gid {
				t.Fatalf("owner = %d:%d", st.Uid, st.Gid)
			}
			if root := mustMode(t, paths["tok"]); tc.wantGroup != (root&os.ModeSetgid != 0) {
				t.Fatalf("volume root mode = %v", root)
			}
		})
	}
}

func TestDownwardAPIVolume(t *testing.T) {
	m, root := newAPITestManager(t, nil, newFakeMounter())
	pod := testPod("uid-1", v1.Volume{Name: "podinfo", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
		Items: []v1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			{Path: "annotations", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.annotations"}, Mode: ptr.To[int32](0o400)},
			{Path: "./dir/tier", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels['tier']"}},
			{Path: "mem", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}},
		}}}})
	pod.Labels = map[string]string{"tier": "front", "app": "web", "quote": `say "hi"`}
	pod.Annotations = map[string]string{"b": "2", "a": "1"}
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "pods/uid-1/volumes/kubernetes.io~downward-api/podinfo")
	if paths["podinfo"] != dir {
		t.Fatalf("path = %s", paths["podinfo"])
	}
	want := map[string]string{
		"labels":      "app=\"web\"\nquote=\"say \\\"hi\\\"\"\ntier=\"front\"",
		"annotations": "a=\"1\"\nb=\"2\"",
		"dir/tier":    "front",
		"mem":         "8192", // no limit: the node's allocatable, 8 GiB
	}
	if got := readVolume(t, dir); !mapsEqual(got, want) {
		t.Fatalf("content = %q, want %q", got, want)
	}
	if got := mustMode(t, filepath.Join(dir, "..data/annotations")).Perm(); got != 0o400 {
		t.Fatalf("mode = %v", got)
	}
	// A label update reaches the file.
	pod.Labels["tier"] = "back"
	if _, err := m.SetUp(pod); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, filepath.Join(dir, "dir/tier")); got != "back" {
		t.Fatalf("after a label update: %q", got)
	}
}

func TestAPIVolumesMountReadOnly(t *testing.T) {
	objs := newFakeObjects()
	objs.setConfigMap("app", map[string]string{"app.conf": "x"})
	m, _ := newAPITestManager(t, objs, newFakeMounter())
	pod := testPod("uid-1", cmVol("cfg", "app"), emptyDirVol("scratch", ""))
	pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{
		{Name: "cfg", MountPath: "/etc/app"},
		{Name: "cfg", MountPath: "/etc/app.conf", SubPath: "app.conf"},
		{Name: "scratch", MountPath: "/etc/app/scratch"},
	}
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	// The nested mount point exists in the read-only volume.
	if fi, err := os.Stat(filepath.Join(paths["cfg"], "scratch")); err != nil || !fi.IsDir() {
		t.Fatalf("nested mount point: %v", err)
	}
	mounts, err := m.Mounts(pod, &pod.Spec.Containers[0], paths, nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := readlink(t, filepath.Join(paths["cfg"], "..data"))
	wantHost := []string{paths["cfg"], filepath.Join(paths["cfg"], ts, "app.conf"), paths["scratch"]}
	wantRO := []bool{true, true, false}
	for i, mnt := range mounts {
		if mnt.HostPath != wantHost[i] || mnt.Readonly != wantRO[i] {
			t.Errorf("mount %d = %s ro=%v, want %s ro=%v", i, mnt.HostPath, mnt.Readonly, wantHost[i], wantRO[i])
		}
	}
}

func TestTearDownRemovesAPIVolumes(t *testing.T) {
	for _, lister := range []bool{false, true} {
		t.Run(map[bool]string{false: "without lister", true: "with lister"}[lister], func(t *testing.T) {
			objs := newFakeObjects()
			objs.setConfigMap("app", map[string]string{"a": "1"})
			objs.setSecret("s", map[string]string{"b": "2"})
			fm := newFakeMounter()
			var mnt Mounter = fm
			if lister {
				mnt = &listingMounter{fakeMounter: fm}
			}
			m, root := newAPITestManager(t, objs, mnt)
			pod := testPod("uid-1", cmVol("cfg", "app"), secretVol("sec", "s"),
				v1.Volume{Name: "tok", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
					{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}}}}}},
				v1.Volume{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{}}})
			if _, err := m.SetUp(pod); err != nil {
				t.Fatal(err)
			}
			if len(fm.tmpfs) != 3 {
				t.Fatalf("tmpfs mounts = %v, want secret, projected and downwardAPI", fm.tmpfs)
			}
			if err := m.TearDown(pod.UID); err != nil {
				t.Fatal(err)
			}
			for p, n := range fm.mounted {
				if n != 0 {
					t.Errorf("%s still mounted %d times", p, n)
				}
			}
			if len(fm.unmounts) != 3 {
				t.Errorf("unmounts = %v", fm.unmounts)
			}
			mustNotExist(t, filepath.Join(root, "pods", string(types.UID("uid-1"))))
		})
	}
}

func TestManagerRealSecretVolume(t *testing.T) {
	requireRoot(t)
	objs := newFakeObjects()
	objs.setSecret("s", map[string]string{"key": "value"})
	m, root := newAPITestManager(t, objs, NewSystemMounter())
	pod := testPod("uid-real", secretVol("sec", "s"))
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(paths["sec"], syscall.MNT_DETACH) })
	var st syscall.Statfs_t
	if err := syscall.Statfs(paths["sec"], &st); err != nil || st.Type != 0x01021994 { // TMPFS_MAGIC
		t.Fatalf("statfs: %+v, %v", st, err)
	}
	if got := mustRead(t, filepath.Join(paths["sec"], "key")); got != "value" {
		t.Fatalf("key = %q", got)
	}
	objs.setSecret("s", map[string]string{"key": "new"})
	if _, err := m.SetUp(pod); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, filepath.Join(paths["sec"], "key")); got != "new" {
		t.Fatalf("key after update = %q", got)
	}
	if err := m.TearDown(pod.UID); err != nil {
		t.Fatal(err)
	}
	mustNotExist(t, filepath.Join(root, "pods/uid-real"))
	if left, _ := MountPointsUnder(root); len(left) != 0 {
		t.Fatalf("mounts left: %v", left)
	}
}

// TestAPIErrorNotMaskedByOptional: optional only covers NotFound; any other error does not
// empty the volume as a missing optional object would: the content already there stays (and
// the sync goes on with it, see TestAPIVolumeKeepsContentWhenObjectsAreUnreachable).
func TestAPIErrorNotMaskedByOptional(t *testing.T) {
	objs := newFakeObjects()
	objs.setConfigMap("app", map[string]string{"a": "1"})
	m, _ := newAPITestManager(t, objs, newFakeMounter())
	vol := cmVol("cfg", "app")
	vol.ConfigMap.Optional = ptr.To(true)
	pod := testPod("uid-1", vol)
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	objs.err = apierrors.NewServiceUnavailable("apiserver down")
	if _, err := m.SetUp(pod); err != nil {
		t.Fatalf("err = %v, want the current content kept", err)
	}
	if got := mustRead(t, filepath.Join(paths["cfg"], "a")); got != "1" {
		t.Fatalf("content after a failed sync = %q, want the previous one", got)
	}
}

// When the objects cannot be fetched (the API server unreachable after a restart), a volume
// that has content keeps it and the pod can go on; a volume without content, or whose object
// is gone, fails.
func TestAPIVolumeKeepsContentWhenObjectsAreUnreachable(t *testing.T) {
	objs := newFakeObjects()
	objs.setConfigMap("app", map[string]string{"app.conf": "level=info\n"})
	m, _ := newAPITestManager(t, objs, newFakeMounter())
	pod := testPod("uid-1", cmVol("cfg", "app"))
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	objs.mu.Lock()
	objs.err = errors.New("failed to sync configmap cache: default/app not listed within 1s")
	objs.mu.Unlock()
	if _, err := m.SetUp(pod); err != nil {
		t.Fatalf("a volume with content failed while its object is unreachable: %v", err)
	}
	if got := readVolume(t, paths["cfg"]); !mapsEqual(got, map[string]string{"app.conf": "level=info\n"}) {
		t.Errorf("content changed: %q", got)
	}
	if _, err := m.SetUp(testPod("uid-2", cmVol("cfg", "app"))); err == nil {
		t.Error("a new volume without content was set up from nothing")
	}
	objs.mu.Lock()
	objs.err = apierrors.NewNotFound(v1.Resource("configmaps"), "app")
	objs.mu.Unlock()
	if _, err := m.SetUp(pod); err == nil {
		t.Error("a volume whose object is gone kept its content")
	}
}
