package volumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// systemMounter mounts with mount(2) and reads /proc/self/mountinfo.
type systemMounter struct{}

var (
	_ Mounter     = systemMounter{}
	_ MountLister = systemMounter{}
)

// NewSystemMounter returns the host's Mounter: mount(2)/umount2(2) through golang.org/x/sys,
// mount points from st_dev and /proc/self/mountinfo. It also implements MountLister.
func NewSystemMounter() Mounter { return systemMounter{} }

// MountTmpfs mounts tmpfs with upstream's options: only size= (no nosuid/nodev, as upstream).
func (systemMounter) MountTmpfs(target string, sizeBytes int64) error {
	data := ""
	if sizeBytes > 0 {
		data = "size=" + strconv.FormatInt(sizeBytes, 10)
	}
	if err := unix.Mount("tmpfs", target, "tmpfs", 0, data); err != nil {
		return &fs.PathError{Op: "mount tmpfs", Path: target, Err: err}
	}
	return nil
}

func (systemMounter) Unmount(target string) error {
	if err := unix.Unmount(target, unix.UMOUNT_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "umount", Path: target, Err: err}
	}
	return nil
}

// IsMountPoint: a different st_dev from the parent's is a mount point; the same st_dev may
// still be a bind mount of the same filesystem, which only the mount table tells.
func (systemMounter) IsMountPoint(path string) (bool, error) {
	var st, parent unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return false, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return false, nil
	}
	if err := unix.Stat(filepath.Dir(filepath.Clean(path)), &parent); err != nil {
		return false, &fs.PathError{Op: "stat", Path: filepath.Dir(path), Err: err}
	}
	if st.Dev != parent.Dev {
		return true, nil
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false, err
	}
	all, err := readMountInfo()
	if err != nil {
		return false, err
	}
	for _, e := range all {
		if e.path == resolved {
			return true, nil
		}
	}
	return false, nil
}

// MountPointsUnder lists the machine's mount points at or under dir, innermost first: what
// TearDown unmounts, and what tools and tests check is left behind after pods are gone.
func MountPointsUnder(dir string) ([]string, error) { return systemMounter{}.MountPointsUnder(dir) }

func (systemMounter) MountPointsUnder(dir string) ([]string, error) {
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	all, err := readMountInfo()
	if err != nil {
		return nil, err
	}
	return mountPointsUnder(mountPaths(all), resolved), nil
}

func readMountInfo() ([]mountEntry, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMountInfo(f)
}

// MakeRShared makes the mount that path is on shared and recursively so, as upstream's
// kubelet does with its root directory at start-up (hostutil.MakeRShared): when that mount is
// not shared, path is bind-mounted onto itself and the bind mount made rshared. Container
// mounts with mountPropagation HostToContainer or Bidirectional from volumes under path need
// it; on systemd hosts "/" is already shared and this does nothing.
func MakeRShared(path string) error {
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	all, err := readMountInfo()
	if err != nil {
		return err
	}
	if e, ok := containingMount(all, resolved); ok && e.shared {
		return nil
	}
	if err := unix.Mount(resolved, resolved, "none", unix.MS_BIND, ""); err != nil {
		return &fs.PathError{Op: "bind mount onto itself", Path: resolved, Err: err}
	}
	if err := unix.Mount(resolved, resolved, "none", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return &fs.PathError{Op: "make rshared", Path: resolved, Err: err}
	}
	return nil
}

// removeTree removes path and everything under it like os.RemoveAll, but walks with openat
// and O_NOFOLLOW (a symlink is removed, never followed) and refuses to descend into a directory
// on another filesystem than path's (a mount point left mounted), naming it.
func removeTree(path string) error {
	path = filepath.Clean(path)
	parent, err := unix.Open(filepath.Dir(path), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: filepath.Dir(path), Err: err}
	}
	defer unix.Close(parent)
	base := filepath.Base(path)
	var st unix.Stat_t
	if err := unix.Fstatat(parent, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	return removeAt(parent, base, path, uint64(st.Dev), st.Mode&unix.S_IFMT == unix.S_IFDIR)
}

// removeAt removes the entry name of the directory dirfd (full is its path, for errors).
func removeAt(dirfd int, name, full string, dev uint64, isDir bool) error {
	if !isDir {
		if err := unix.Unlinkat(dirfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return &fs.PathError{Op: "unlink", Path: full, Err: err}
		}
		return nil
	}
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return &fs.PathError{Op: "open", Path: full, Err: err}
	}
	f := os.NewFile(uintptr(fd), full) // owns fd
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: full, Err: err}
	}
	if uint64(st.Dev) != dev {
		return fmt.Errorf("refusing to remove %s: it is on another filesystem (still mounted?)", full)
	}
	names, err := f.Readdirnames(-1)
	if err != nil {
		return &fs.PathError{Op: "readdir", Path: full, Err: err}
	}
	for _, n := range names {
		var cst unix.Stat_t
		if err := unix.Fstatat(fd, n, &cst, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return &fs.PathError{Op: "lstat", Path: filepath.Join(full, n), Err: err}
		}
		if err := removeAt(fd, n, filepath.Join(full, n), dev, cst.Mode&unix.S_IFMT == unix.S_IFDIR); err != nil {
			return err
		}
	}
	if err := unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		return &fs.PathError{Op: "rmdir", Path: full, Err: err}
	}
	return nil
}
