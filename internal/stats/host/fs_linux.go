//go:build linux

package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Statfs returns the size of the filesystem holding the host path p (cadvisor's FsInfo:
// capacity = blocks, available = blocks free to unprivileged users, usage = blocks - free).
func (r *Reader) Statfs(p string) (FsInfo, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(r.Path(p), &st); err != nil {
		return FsInfo{}, fmt.Errorf("statfs %s: %w", p, err)
	}
	bsize := uint64(st.Bsize)
	return FsInfo{
		Capacity:   st.Blocks * bsize,
		Available:  st.Bavail * bsize,
		Usage:      (st.Blocks - st.Bfree) * bsize,
		Inodes:     st.Files,
		InodesFree: st.Ffree,
		Tmpfs:      st.Type == unix.TMPFS_MAGIC || st.Type == unix.RAMFS_MAGIC,
	}, nil
}

// FilesUsage returns what the entries directly in the host directory dir that are not
// directories occupy (upstream's per-file du of a log directory): allocated bytes and one inode
// each.
func (r *Reader) FilesUsage(dir string) (DiskUsage, error) {
	full := r.Path(dir)
	ents, err := os.ReadDir(full)
	if err != nil {
		return DiskUsage{}, fmt.Errorf("list %s: %w", dir, err)
	}
	var u DiskUsage
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		fi, err := os.Lstat(filepath.Join(full, e.Name()))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) { // rotated away meanwhile
				continue
			}
			return DiskUsage{}, fmt.Errorf("stat %s/%s: %w", dir, e.Name(), err)
		}
		u.Bytes += allocated(fi)
		u.Inodes++
	}
	return u, nil
}

// TreeUsage returns what the tree at the host path dir occupies, as du -x: allocated bytes and
// inodes of every entry including dir, each hard-linked inode once, without following symbolic
// links or crossing into other filesystems.
func (r *Reader) TreeUsage(dir string) (DiskUsage, error) {
	full := r.Path(dir)
	rootInfo, err := os.Lstat(full)
	if err != nil {
		return DiskUsage{}, fmt.Errorf("stat %s: %w", dir, err)
	}
	rootDev := device(rootInfo)
	type inode struct{ dev, ino uint64 }
	seen := make(map[inode]bool)
	var u DiskUsage
	err = filepath.WalkDir(full, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		if uint64(st.Dev) != rootDev {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		key := inode{uint64(st.Dev), st.Ino}
		if seen[key] {
			return nil
		}
		seen[key] = true
		u.Bytes += allocated(fi)
		u.Inodes++
		return nil
	})
	if err != nil {
		return DiskUsage{}, fmt.Errorf("walk %s: %w", dir, err)
	}
	return u, nil
}

// allocated is the space a file occupies on disk (st_blocks is in 512-byte units).
func allocated(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Blocks) * 512
	}
	return uint64(fi.Size())
}

func device(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev)
	}
	return 0
}

// DifferentDevices says the paths are on different filesystems (devices).
func DifferentDevices(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return device(fa) != device(fb), nil
}
