package volumes

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/testharness/ci"
)

func TestParseMountInfo(t *testing.T) {
	in := `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
35 22 0:30 / /var/lib/nodelet/pods/u/volumes/kubernetes.io~empty-dir/shm rw,relatime shared:17 - tmpfs tmpfs rw,size=65536k
36 22 0:31 / /mnt/with\040space rw master:2 - tmpfs tmpfs rw
37 22 8:1 /data /var/lib/nodelet/pods/u/volumes/kubernetes.io~empty-dir/shm/bind rw - ext4 /dev/sda1 rw
38 22 0:32 / /var/lib/nodelet/pods/u2 rw - tmpfs tmpfs rw
`
	got, err := parseMountInfo(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	shm := "/var/lib/nodelet/pods/u/volumes/kubernetes.io~empty-dir/shm"
	want := []string{"/", shm, "/mnt/with space", shm + "/bind", "/var/lib/nodelet/pods/u2"}
	if paths := mountPaths(got); !slices.Equal(paths, want) {
		t.Fatalf("got %q, want %q", paths, want)
	}
	if under := mountPointsUnder(mountPaths(got), "/var/lib/nodelet/pods/u"); !slices.Equal(under, []string{shm + "/bind", shm}) {
		t.Fatalf("mountPointsUnder = %q (u2 must not match u)", under)
	}
	for path, want := range map[string]string{
		shm + "/x": shm, "/var/lib/nodelet": "/", "/mnt/with space/a": "/mnt/with space", "/var/lib/nodelet/pods/u2x": "/",
	} {
		if e, ok := containingMount(got, path); !ok || e.path != want {
			t.Errorf("containingMount(%s) = %v, want %s", path, e, want)
		}
	}
	if e, _ := containingMount(got, shm); !e.shared {
		t.Errorf("%s is shared:17", shm)
	}
	if e, _ := containingMount(got, "/mnt/with space"); e.shared {
		t.Errorf("master:2 is a slave, not shared")
	}
	if _, err := parseMountInfo(strings.NewReader("bad line\n")); err == nil {
		t.Fatal("want an error on a malformed line")
	}
}

// requireRoot skips loudly when not root, or fails in CI: CI must run the real mount tests.
func requireRoot(t *testing.T) {
	t.Helper()
	ci.RequireRoot(t, "mounts a real tmpfs")
}

func mountTmpfs(t *testing.T, m Mounter, dir string, size int64) {
	t.Helper()
	if err := m.MountTmpfs(dir, size); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) }) // in case the test fails early
}

func TestSystemMounterRealTmpfs(t *testing.T) {
	requireRoot(t)
	sm := NewSystemMounter()
	dir := t.TempDir()
	target := filepath.Join(dir, "t")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if mnt, err := sm.IsMountPoint(target); err != nil || mnt {
		t.Fatalf("before mount: %v, %v", mnt, err)
	}
	mountTmpfs(t, sm, target, 8<<20)
	if mnt, err := sm.IsMountPoint(target); err != nil || !mnt {
		t.Fatalf("after mount: %v, %v", mnt, err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(target, &st); err != nil {
		t.Fatal(err)
	}
	if st.Type != unix.TMPFS_MAGIC {
		t.Fatalf("f_type = %#x, want tmpfs", st.Type)
	}
	if size := int64(st.Blocks) * st.Bsize; size != 8<<20 {
		t.Fatalf("tmpfs size = %d, want %d", size, 8<<20)
	}
	if under, err := sm.(MountLister).MountPointsUnder(dir); err != nil || len(under) != 1 {
		t.Fatalf("MountPointsUnder = %v, %v", under, err)
	}
	// A bind mount of the same filesystem has the parent's st_dev: only mountinfo tells.
	src, bind := filepath.Join(dir, "src"), filepath.Join(dir, "bind")
	for _, d := range []string{src, bind} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mount(src, bind, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(bind, unix.MNT_DETACH) })
	if mnt, err := sm.IsMountPoint(bind); err != nil || !mnt {
		t.Fatalf("bind mount: %v, %v", mnt, err)
	}
	for _, p := range []string{target, bind} {
		if err := sm.Unmount(p); err != nil {
			t.Fatal(err)
		}
		if mnt, err := sm.IsMountPoint(p); err != nil || mnt {
			t.Fatalf("after unmount of %s: %v, %v", p, mnt, err)
		}
	}
	if _, err := sm.IsMountPoint(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing path: %v", err)
	}
	link := filepath.Join(dir, "link")
	_ = os.Symlink("/", link)
	if mnt, err := sm.IsMountPoint(link); err != nil || mnt {
		t.Fatalf("a symlink to / is not a mount point: %v, %v", mnt, err)
	}
}

func TestManagerRealMemoryEmptyDir(t *testing.T) {
	requireRoot(t)
	m, root := newTestManager(t, NewSystemMounter())
	vol := emptyDirVol("shm", v1.StorageMediumMemory)
	vol.EmptyDir.SizeLimit = ptr.To(resource.MustParse("4Mi"))
	pod := testPod("uid-real", vol)
	paths, err := m.SetUp(pod)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(paths["shm"], unix.MNT_DETACH) })
	var st unix.Statfs_t
	if err := unix.Statfs(paths["shm"], &st); err != nil || st.Type != unix.TMPFS_MAGIC || int64(st.Blocks)*st.Bsize != 4<<20 {
		t.Fatalf("statfs: %+v, %v", st, err)
	}
	if err := os.WriteFile(filepath.Join(paths["shm"], "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SetUp(pod); err != nil { // idempotent: not mounted twice
		t.Fatal(err)
	}
	if under, _ := m.mounter.(MountLister).MountPointsUnder(paths["shm"]); len(under) != 1 {
		t.Fatalf("mounted %d times after a re-sync", len(under))
	}
	if err := m.TearDown(pod.UID); err != nil {
		t.Fatal(err)
	}
	mustNotExist(t, filepath.Join(root, "pods/uid-real"))
}

func TestRemoveTreeStopsAtMountPoints(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	mnt := filepath.Join(tree, "a/mnt")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	mountTmpfs(t, NewSystemMounter(), mnt, 0)
	keep := filepath.Join(mnt, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := removeTree(tree)
	if err == nil || !strings.Contains(err.Error(), "refusing to remove "+mnt) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("removeTree descended into a mount: %v", err)
	}
}

func TestMakeRShared(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	// A private mount: MakeRShared must make it shared.
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 2 {
			_ = unix.Unmount(dir, unix.MNT_DETACH)
		}
	})
	if err := unix.Mount("", dir, "", unix.MS_PRIVATE, ""); err != nil {
		t.Fatal(err)
	}
	shared := func() bool {
		all, err := readMountInfo()
		if err != nil {
			t.Fatal(err)
		}
		e, _ := containingMount(all, dir)
		return e.shared
	}
	if shared() {
		t.Fatal("setup: the mount should be private")
	}
	if err := MakeRShared(dir); err != nil {
		t.Fatal(err)
	}
	if !shared() {
		t.Fatal("not shared after MakeRShared")
	}
	before, _ := readMountInfo()
	if err := MakeRShared(dir); err != nil { // already shared: nothing to do
		t.Fatal(err)
	}
	if after, _ := readMountInfo(); len(after) != len(before) {
		t.Fatalf("MakeRShared mounted again: %d → %d mounts", len(before), len(after))
	}
}
