package volumes

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// fakeMounter records tmpfs mounts in memory; a path is a mount point while its count is > 0.
type fakeMounter struct {
	mu         sync.Mutex
	mounted    map[string]int
	tmpfs      []tmpfsCall
	unmounts   []string
	mountErr   error
	unmountErr error
}

type tmpfsCall struct {
	target string
	size   int64
}

var _ Mounter = (*fakeMounter)(nil)

func newFakeMounter() *fakeMounter { return &fakeMounter{mounted: map[string]int{}} }

func (f *fakeMounter) MountTmpfs(target string, size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mountErr != nil {
		return f.mountErr
	}
	if _, err := os.Stat(target); err != nil {
		return err
	}
	f.tmpfs = append(f.tmpfs, tmpfsCall{target, size})
	f.mounted[target]++
	return nil
}

func (f *fakeMounter) Unmount(target string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unmountErr != nil {
		return f.unmountErr
	}
	if _, err := os.Lstat(target); err != nil {
		return fmt.Errorf("umount %s after its removal: %w", target, err)
	}
	if f.mounted[target] == 0 {
		return fmt.Errorf("umount %s: not mounted", target)
	}
	f.mounted[target]--
	f.unmounts = append(f.unmounts, target)
	return nil
}

func (f *fakeMounter) IsMountPoint(path string) (bool, error) {
	if _, err := os.Lstat(path); err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mounted[path] > 0, nil
}

// listingMounter adds MountLister to the fake, in mount order.
type listingMounter struct {
	*fakeMounter
	order []string
}

var _ MountLister = (*listingMounter)(nil)

func (l *listingMounter) MountTmpfs(target string, size int64) error {
	if err := l.fakeMounter.MountTmpfs(target, size); err != nil {
		return err
	}
	l.order = append(l.order, target)
	return nil
}

func (l *listingMounter) MountPointsUnder(dir string) ([]string, error) {
	var live []string
	counts := map[string]int{}
	for _, p := range l.order {
		counts[p]++
		if counts[p] <= l.mounted[p] {
			live = append(live, p)
		}
	}
	return mountPointsUnder(live, dir), nil
}

func newTestManager(t *testing.T, m Mounter) (*Manager, string) {
	t.Helper()
	root := t.TempDir()
	return New(Config{RootDir: root}, m), root
}

func testPod(uid types.UID, vols ...v1.Volume) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: uid},
		Spec:       v1.PodSpec{Volumes: vols, Containers: []v1.Container{{Name: "app"}}},
	}
}

func emptyDirVol(name string, medium v1.StorageMedium) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: medium}}}
}

func hostPathVol(name, path string, typ *v1.HostPathType) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: path, Type: typ}}}
}

func mustMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

func mustNotExist(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s: want not exist, got %v", path, err)
	}
}
