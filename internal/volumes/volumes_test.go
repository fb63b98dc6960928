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
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestEmptyDirCreatedWithMode(t *testing.T) {
	old := syscall.Umask(0o077) // the mode must not depend on the umask
	defer syscall.Umask(old)
	m, root := newTestManager(t, newFakeMounter())
	pod := testPod("uid-1", emptyDirVol("cache", ""))
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, "pods/uid-1/volumes/kubernetes.io~empty-dir/cache")
	if paths["cache"] != want {
		t.Fatalf("path = %q, want %q", paths["cache"], want)
	}
	if got := mustMode(t, want); !got.IsDir() || got.Perm() != 0o777 {
		t.Fatalf("mode = %v, want drwxrwxrwx", got)
	}
	if got := mustMode(t, filepath.Join(root, "pods/uid-1")).Perm(); got != 0o700 && got != 0o750 {
		t.Fatalf("pod dir mode = %v", got) // 0750 under the umask
	}
	// A re-sync is idempotent and keeps what a container did to the volume.
	if err := os.Chmod(want, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(want, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if paths2, err := m.SetUp(pod); err != nil || paths2["cache"] != want {
		t.Fatalf("re-SetUp = %v, %v", paths2, err)
	}
	if got := mustMode(t, want).Perm(); got != 0o755 {
		t.Fatalf("re-SetUp reset the mode to %v", got)
	}
	if _, err := os.Stat(filepath.Join(want, "f")); err != nil {
		t.Fatalf("re-SetUp lost content: %v", err)
	}
}

func TestEmptyDirFSGroup(t *testing.T) {
	m, _ := newTestManager(t, newFakeMounter())
	pod := testPod("uid-1", emptyDirVol("data", ""))
	gid := int64(os.Getgid())
	pod.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: &gid}
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	mode := mustMode(t, paths["data"])
	if mode.Perm() != 0o777 || mode&os.ModeSetgid == 0 {
		t.Fatalf("mode = %v, want drwxrwsrwx", mode)
	}
	fi, _ := os.Stat(paths["data"])
	if g := fi.Sys().(*syscall.Stat_t).Gid; int64(g) != gid {
		t.Fatalf("gid = %d, want %d", g, gid)
	}
}

func TestMemoryEmptyDirMountsTmpfsOnce(t *testing.T) {
	fm := newFakeMounter()
	m, _ := newTestManager(t, fm)
	vol := emptyDirVol("shm", v1.StorageMediumMemory)
	vol.EmptyDir.SizeLimit = ptr.To(resource.MustParse("64Mi"))
	pod := testPod("uid-1", vol)
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	want := []tmpfsCall{{paths["shm"], 64 << 20}}
	if !slices.Equal(fm.tmpfs, want) {
		t.Fatalf("MountTmpfs calls = %v, want %v", fm.tmpfs, want)
	}
	if mode := mustMode(t, paths["shm"]); mode.Perm() != 0o777 {
		t.Fatalf("mode = %v", mode)
	}
	if _, err := m.SetUp(pod); err != nil {
		t.Fatal(err)
	}
	if len(fm.tmpfs) != 1 {
		t.Fatalf("an existing tmpfs was mounted again: %v", fm.tmpfs)
	}
}

func TestMemoryEmptyDirMountErrorNamesVolume(t *testing.T) {
	fm := newFakeMounter()
	fm.mountErr = errors.New("boom")
	m, _ := newTestManager(t, fm)
	_, err := m.SetUp(testPod("uid-1", emptyDirVol("shm", v1.StorageMediumMemory)))
	if err == nil || !strings.Contains(err.Error(), `emptyDir volume "shm"`) || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v", err)
	}
}

func TestMemoryEmptyDirSize(t *testing.T) {
	mi := func(n int64) int64 { return n << 20 }
	limits := func(mem string) v1.ResourceRequirements {
		if mem == "" {
			return v1.ResourceRequirements{}
		}
		return v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse(mem)}}
	}
	always := ptr.To(v1.ContainerRestartPolicyAlways)
	for _, tc := range []struct {
		name        string
		allocatable int64
		sizeLimit   string
		containers  []string
		inits       []v1.Container
		podLimit    string
		want        int64
	}{
		{name: "nothing known: no size option", containers: []string{""}, want: 0},
		{name: "sizeLimit only", sizeLimit: "64Mi", containers: []string{""}, want: mi(64)},
		{name: "allocatable only", allocatable: mi(1024), containers: []string{""}, want: mi(1024)},
		{name: "pod limit below allocatable", allocatable: mi(1024), containers: []string{"100Mi", "200Mi"}, want: mi(300)},
		{name: "one container without limit: no pod limit", allocatable: mi(1024), containers: []string{"100Mi", ""}, want: mi(1024)},
		{name: "sizeLimit below pod limit", sizeLimit: "10Mi", containers: []string{"100Mi"}, want: mi(10)},
		{name: "sizeLimit above pod limit is ignored", sizeLimit: "1Gi", containers: []string{"100Mi"}, want: mi(100)},
		{name: "init container larger", containers: []string{"100Mi"}, inits: []v1.Container{{Resources: limits("500Mi")}}, want: mi(500)},
		{name: "sidecar adds to the sum", containers: []string{"100Mi"},
			inits: []v1.Container{{Resources: limits("50Mi"), RestartPolicy: always}}, want: mi(150)},
		{name: "init after sidecar", containers: []string{"100Mi"},
			inits: []v1.Container{{Resources: limits("50Mi"), RestartPolicy: always}, {Resources: limits("300Mi")}}, want: mi(350)},
		{name: "pod-level limit", containers: []string{""}, podLimit: "256Mi", want: mi(256)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod("u")
			pod.Spec.Containers = nil
			for _, l := range tc.containers {
				pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Resources: limits(l)})
			}
			pod.Spec.InitContainers = tc.inits
			if tc.podLimit != "" {
				r := limits(tc.podLimit)
				pod.Spec.Resources = &r
			}
			ed := &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}
			if tc.sizeLimit != "" {
				ed.SizeLimit = ptr.To(resource.MustParse(tc.sizeLimit))
			}
			if got := memoryEmptyDirSize(pod, ed, tc.allocatable); got != tc.want {
				t.Fatalf("size = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestSetUpRejectsUnsupported(t *testing.T) {
	m, _ := newTestManager(t, newFakeMounter())
	cm := v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}}
	huge := emptyDirVol("huge", v1.StorageMediumHugePages)
	nfs := v1.Volume{Name: "share", VolumeSource: v1.VolumeSource{NFS: &v1.NFSVolumeSource{Server: "s", Path: "/"}}}
	paths, err := m.SetUp(testPod("uid-1", cm, huge, nfs, emptyDirVol("ok", "")))
	if err == nil || !strings.Contains(err.Error(), `configMap volume "cfg": needs the API server`) ||
		!strings.Contains(err.Error(), `volume "share": nfs volumes are not supported by nodelet`) ||
		!strings.Contains(err.Error(), `emptyDir volume "huge": medium "HugePages"`) {
		t.Fatalf("err = %v", err)
	}
	if paths["ok"] == "" {
		t.Fatalf("the supported volume was not set up: %v", paths)
	}
	for _, uid := range []types.UID{"", "..", "a/b"} {
		if _, err := m.SetUp(testPod(uid)); err == nil {
			t.Errorf("SetUp with UID %q: want an error", uid)
		}
		if err := m.TearDown(uid); err == nil {
			t.Errorf("TearDown with UID %q: want an error", uid)
		}
	}
}

func TestTearDownUnmountsThenRemoves(t *testing.T) {
	fm := newFakeMounter()
	m, root := newTestManager(t, fm)
	pod := testPod("uid-1", emptyDirVol("shm", v1.StorageMediumMemory), emptyDirVol("disk", ""))
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(paths["disk"], "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.TearDown(pod.UID); err != nil {
		t.Fatal(err) // the fake fails an unmount of a path already removed
	}
	if !slices.Equal(fm.unmounts, []string{paths["shm"]}) {
		t.Fatalf("unmounts = %v", fm.unmounts)
	}
	mustNotExist(t, filepath.Join(root, "pods/uid-1"))
	if err := m.TearDown(pod.UID); err != nil {
		t.Fatalf("second TearDown: %v", err)
	}
}

func TestTearDownVolumesKeepsThePodDirectory(t *testing.T) {
	fm := newFakeMounter()
	m, root := newTestManager(t, fm)
	pod := testPod("uid-1", emptyDirVol("shm", v1.StorageMediumMemory), emptyDirVol("disk", ""))
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(paths["disk"], "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	hosts := filepath.Join(root, "pods/uid-1/etc-hosts")
	if err := os.WriteFile(hosts, []byte("127.0.0.1 localhost\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.TearDownVolumes(pod.UID); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fm.unmounts, []string{paths["shm"]}) {
		t.Fatalf("unmounts = %v", fm.unmounts)
	}
	mustNotExist(t, filepath.Join(root, "pods/uid-1/volumes"))
	if _, err := os.Stat(hosts); err != nil {
		t.Errorf("the pod directory's other files go only with the pod: %v", err)
	}
	if err := m.TearDownVolumes(pod.UID); err != nil {
		t.Fatalf("second TearDownVolumes: %v", err)
	}
	if err := m.TearDownVolumes("unknown-uid"); err != nil {
		t.Fatalf("TearDownVolumes of a pod without a directory: %v", err)
	}
	if err := m.TearDown(pod.UID); err != nil {
		t.Fatal(err)
	}
	mustNotExist(t, filepath.Join(root, "pods/uid-1"))
}

func TestTearDownWithListerUnmountsStackedMounts(t *testing.T) {
	lm := &listingMounter{fakeMounter: newFakeMounter()}
	m, _ := newTestManager(t, lm)
	pod := testPod("uid-1", emptyDirVol("shm", v1.StorageMediumMemory))
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	nested := filepath.Join(paths["shm"], "nested") // e.g. propagated back by a Bidirectional mount
	if err := os.Mkdir(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{nested, paths["shm"]} { // nested in the tmpfs, then stacked over it
		if err := lm.MountTmpfs(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.TearDown(pod.UID); err != nil {
		t.Fatal(err)
	}
	if want := []string{paths["shm"], nested, paths["shm"]}; !slices.Equal(lm.unmounts, want) {
		t.Fatalf("unmounts = %v, want %v", lm.unmounts, want)
	}
}

func TestTearDownUnmountErrorNamesPath(t *testing.T) {
	fm := newFakeMounter()
	m, _ := newTestManager(t, fm)
	pod := testPod("uid-1", emptyDirVol("shm", v1.StorageMediumMemory))
	paths, _ := m.SetUp(pod)
	fm.unmountErr = errors.New("device or resource busy")
	err := m.TearDown(pod.UID)
	if err == nil || !strings.Contains(err.Error(), paths["shm"]) || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(paths["shm"]); err != nil {
		t.Fatalf("a still-mounted volume must not be removed: %v", err)
	}
}

func TestTearDownNeverFollowsSymlinks(t *testing.T) {
	m, root := newTestManager(t, newFakeMounter())
	outside := t.TempDir()
	keep := filepath.Join(outside, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	pod := testPod("uid-1", emptyDirVol("data", ""))
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	// A container plants symlinks to host paths in its volume.
	for i, target := range []string{outside, keep} {
		if err := os.Symlink(target, filepath.Join(paths["data"], "link"+string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	// The pod directory itself is a symlink (pod uid-2).
	if err := os.Symlink(outside, filepath.Join(root, "pods/uid-2")); err != nil {
		t.Fatal(err)
	}
	for _, uid := range []types.UID{"uid-1", "uid-2"} {
		if err := m.TearDown(uid); err != nil {
			t.Fatal(err)
		}
		mustNotExist(t, filepath.Join(root, "pods", string(uid)))
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("TearDown followed a symlink out of the pod dir: %v", err)
	}
}

func TestPodDirs(t *testing.T) {
	m, root := newTestManager(t, newFakeMounter())
	if uids, err := m.PodDirs(); err != nil || len(uids) != 0 {
		t.Fatalf("no pods dir: %v, %v", uids, err)
	}
	for _, uid := range []types.UID{"b", "a"} {
		if _, err := m.SetUp(testPod(uid)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "pods", "stray-file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	uids, err := m.PodDirs()
	if err != nil || !slices.Equal(uids, []types.UID{"a", "b"}) {
		t.Fatalf("PodDirs = %v, %v", uids, err)
	}
}
