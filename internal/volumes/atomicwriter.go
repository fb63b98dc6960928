package volumes

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/clock"
)

// The atomic writer is nodelet's equivalent of upstream's pkg/volume/util AtomicWriter, which
// gives configMap, secret, projected and downwardAPI volumes their layout:
//
//	<volume>/..2025_01_02_03_04_05.123456789/<files>   the payload, one directory per version
//	<volume>/..data -> ..2025_01_02_03_04_05.123456789  the current version
//	<volume>/<key>  -> ..data/<key>                     the user-visible paths (top level only)
//
// A new version is written into a fresh timestamped directory, then ..data is switched to it
// with a rename of a temporary symlink (..data_tmp), which is atomic: a reader that resolves
// a path through ..data sees the old set or the new one, never a mix. Unchanged content is not
// rewritten. Everything goes through an os.Root opened at the volume, so no path in the
// payload and no symlink found there can make the writer touch anything outside it.

const (
	dataDirName    = "..data"
	newDataDirName = "..data_tmp"
	// tsLayout is upstream's timestamp format for the version directories, in UTC.
	tsLayout = "2006_01_02_15_04_05"
	// maxFileNameLength and maxPathLength are upstream's bounds on payload paths.
	maxFileNameLength = 255
	maxPathLength     = 4096
	// fsGroup masks, upstream's SetVolumeOwnership for a read-only volume: files get group
	// read, directories group read and search plus setgid. The volume root gets the
	// read-write mask, as upstream's emptyDir wrapper gives it.
	fsGroupFileMask os.FileMode = 0o440
	fsGroupDirMask  os.FileMode = 0o550 | os.ModeSetgid
	fsGroupRootMask os.FileMode = 0o770 | os.ModeSetgid
)

// fileProjection is one file of an API-backed volume: its content, permission bits and, when
// set, its owner (upstream's fsUser, used for service account tokens).
type fileProjection struct {
	data []byte
	mode os.FileMode
	uid  *int64
}

// atomicWriter writes payloads into the volume directory dir, which must exist.
type atomicWriter struct {
	dir   string
	clock clock.PassiveClock
	// fsGroup, when set, gives the volume to that group as upstream's SetVolumeOwnership.
	fsGroup *int64
}

// write makes the volume hold exactly payload (keys are relative paths). It returns whether a
// new version was written: false when the current one already has the same files with the
// same content and modes, in which case only missing user-visible symlinks are restored (and
// leftovers of an earlier failed write removed).
func (w atomicWriter) write(payload map[string]fileProjection) (bool, error) {
	clean, err := cleanPayload(payload)
	if err != nil {
		return false, err
	}
	root, err := os.OpenRoot(w.dir)
	if err != nil {
		return false, err
	}
	defer root.Close()

	current, err := root.Readlink(dataDirName)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("reading the %s link: %w", dataDirName, err)
	}
	changed := true
	if isTimestampDir(current) { // anything else there is replaced by a new version
		if changed, err = w.differs(root, current, clean); err != nil {
			return false, err
		}
	}
	if changed {
		tsDir, err := w.writeVersion(root, clean)
		if err != nil {
			return false, err
		}
		if err := swapDataLink(root, tsDir); err != nil {
			_ = root.RemoveAll(tsDir)
			return false, err
		}
		current = tsDir
	}
	if err := createUserVisible(root, clean); err != nil {
		return changed, err
	}
	// One directory read: also finishes the clean-up of an earlier write that failed late.
	if err := removeStale(root, clean, current); err != nil {
		return changed, err
	}
	return changed, nil
}

// differs says whether the version directory tsDir differs from payload: a file missing,
// with other content or mode, or an extra path.
func (w atomicWriter) differs(root *os.Root, tsDir string, payload map[string]fileProjection) (bool, error) {
	var existing []string
	err := fs.WalkDir(root.FS(), tsDir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != tsDir {
			existing = append(existing, strings.TrimPrefix(p, tsDir+"/"))
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) { // a dangling ..data: write a new version
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("listing the current version %s: %w", tsDir, err)
	}
	if len(pathsToRemove(existing, payload)) > 0 {
		return true, nil
	}
	for p, f := range payload {
		name := filepath.Join(tsDir, p)
		fi, err := root.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm() != w.fileMode(f) || fi.Size() != int64(len(f.data)) {
			return true, nil
		}
		data, err := root.ReadFile(name)
		if err != nil {
			return false, err
		}
		if !bytes.Equal(data, f.data) {
			return true, nil
		}
	}
	return false, nil
}

// fileMode is the mode a payload file ends up with: its own, plus group read with fsGroup.
func (w atomicWriter) fileMode(f fileProjection) os.FileMode {
	mode := f.mode.Perm()
	if w.fsGroup != nil {
		mode |= fsGroupFileMask
	}
	return mode
}

// writeVersion writes payload into a new timestamped directory and returns its name.
func (w atomicWriter) writeVersion(root *os.Root, payload map[string]fileProjection) (string, error) {
	tsDir, err := newTimestampDir(root, w.clock.Now())
	if err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		_ = root.RemoveAll(tsDir)
		return "", err
	}
	for _, p := range sortedKeys(payload) {
		f := payload[p]
		name := filepath.Join(tsDir, p)
		if err := mkdirAll755(root, tsDir, filepath.Dir(p)); err != nil {
			return fail(fmt.Errorf("creating the directory of %s: %w", p, err))
		}
		if err := writeFile(root, name, f.data, f.mode.Perm(), f.uid); err != nil {
			return fail(fmt.Errorf("writing %s: %w", p, err))
		}
	}
	if w.fsGroup != nil {
		if err := applyFSGroupTree(root, tsDir, *w.fsGroup); err != nil {
			return fail(fmt.Errorf("applying fsGroup %d: %w", *w.fsGroup, err))
		}
	}
	return tsDir, nil
}

// mkdirAll755 creates the directories of rel under base with mode 0755 whatever the umask, so
// that any container user can reach the files.
func mkdirAll755(root *os.Root, base, rel string) error {
	if rel == "." {
		return nil
	}
	cur := base
	for _, part := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, part)
		err := root.Mkdir(cur, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := root.Chmod(cur, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// newTimestampDir creates "..<UTC timestamp>.<random digits>" with mode 0755, as upstream's
// os.MkdirTemp with the prefix "..2006_01_02_15_04_05.".
func newTimestampDir(root *os.Root, now time.Time) (string, error) {
	prefix := ".." + now.UTC().Format(tsLayout) + "."
	for range 100 {
		name := prefix + strconv.FormatUint(uint64(rand.Uint32()), 10)
		err := root.Mkdir(name, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("creating version directory %s: %w", name, err)
		}
		if err := root.Chmod(name, 0o755); err != nil { // whatever the umask
			return "", err
		}
		return name, nil
	}
	return "", fmt.Errorf("creating a version directory %s*: too many collisions", prefix)
}

// isTimestampDir says whether name is a version directory made by newTimestampDir.
func isTimestampDir(name string) bool {
	rest, ok := strings.CutPrefix(name, "..")
	if !ok || len(rest) < len(tsLayout)+2 || rest[len(tsLayout)] != '.' {
		return false
	}
	_, err := time.Parse(tsLayout, rest[:len(tsLayout)])
	return err == nil
}

// writeFile creates name (which must not exist) with data, mode perm whatever the umask and,
// when uid is set, that owner.
func writeFile(root *os.Root, name string, data []byte, perm os.FileMode, uid *int64) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil && uid != nil {
		err = f.Chown(int(*uid), -1)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// applyFSGroupTree gives the volume root and the version directory tsDir to group gid with
// upstream's masks (see fsGroupFileMask). Symlinks are re-owned but never followed.
func applyFSGroupTree(root *os.Root, tsDir string, gid int64) error {
	chgrp := func(name string, isRoot bool) error {
		fi, err := root.Lstat(name)
		if err != nil {
			return err
		}
		if err := root.Lchown(name, -1, int(gid)); err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil
		}
		mask := fsGroupFileMask
		switch {
		case isRoot:
			mask = fsGroupRootMask
		case fi.IsDir():
			mask = fsGroupDirMask
		}
		keep := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		return root.Chmod(name, keep|mask)
	}
	if err := chgrp(".", true); err != nil {
		return err
	}
	return fs.WalkDir(root.FS(), tsDir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return chgrp(p, false)
	})
}

// swapDataLink points ..data at tsDir atomically: a new symlink ..data_tmp renamed over it.
func swapDataLink(root *os.Root, tsDir string) error {
	if err := root.Remove(newDataDirName); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing a stale %s: %w", newDataDirName, err)
	}
	if err := root.Symlink(tsDir, newDataDirName); err != nil {
		return fmt.Errorf("creating the %s link: %w", newDataDirName, err)
	}
	if err := root.Rename(newDataDirName, dataDirName); err != nil {
		_ = root.Remove(newDataDirName)
		return fmt.Errorf("renaming %s to %s: %w", newDataDirName, dataDirName, err)
	}
	return nil
}

// createUserVisible makes "<top> -> ..data/<top>" for each top-level name of payload. An
// entry that is something else (a directory made for a nested mount point) is left alone, as
// upstream does; a symlink pointing elsewhere is replaced.
func createUserVisible(root *os.Root, payload map[string]fileProjection) error {
	for _, top := range topLevelNames(payload) {
		want := path.Join(dataDirName, top)
		target, err := root.Readlink(top)
		switch {
		case err == nil && target == want:
			continue
		case err == nil: // our name, someone else's link
			if err := root.Remove(top); err != nil {
				return fmt.Errorf("replacing the link %s: %w", top, err)
			}
		case !errors.Is(err, fs.ErrNotExist):
			continue // not a symlink
		}
		if err := root.Symlink(want, top); err != nil {
			return fmt.Errorf("creating the link %s: %w", top, err)
		}
		if uid := payload[firstFileUnder(payload, top)].uid; uid != nil {
			if err := root.Lchown(top, int(*uid), -1); err != nil {
				return fmt.Errorf("changing the owner of the link %s: %w", top, err)
			}
		}
	}
	return nil
}

// removeStale removes the user-visible links into ..data that payload no longer has, then
// every version directory but current (the previous one, and any left by a crash).
func removeStale(root *os.Root, payload map[string]fileProjection, current string) error {
	keep := map[string]bool{}
	for _, top := range topLevelNames(payload) {
		keep[top] = true
	}
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.Type()&fs.ModeSymlink != 0 && !keep[name] && !strings.HasPrefix(name, ".."):
			if target, err := root.Readlink(name); err == nil && target == path.Join(dataDirName, name) {
				errs = append(errs, root.Remove(name))
			}
		case e.IsDir() && name != current && isTimestampDir(name):
			errs = append(errs, root.RemoveAll(name))
		}
	}
	return errors.Join(errs...)
}

// cleanPayload validates each path as upstream's validatePath and keys the payload by the
// cleaned paths.
func cleanPayload(payload map[string]fileProjection) (map[string]fileProjection, error) {
	out := make(map[string]fileProjection, len(payload))
	for p, f := range payload {
		if err := validatePayloadPath(p); err != nil {
			return nil, err
		}
		out[filepath.Clean(p)] = f
	}
	return out, nil
}

// validatePayloadPath is upstream's validatePath: a relative path of at most 4096 characters,
// components of at most 255, no ".." component and no first component starting with "..".
// A path that cleans to "." is rejected too (it names no file).
func validatePayloadPath(p string) error {
	if p == "" {
		return fmt.Errorf("invalid path: must not be empty: %q", p)
	}
	if filepath.IsAbs(p) {
		return fmt.Errorf("invalid path: must be relative path: %s", p)
	}
	if len(p) > maxPathLength {
		return fmt.Errorf("invalid path: must be less than or equal to %d characters", maxPathLength)
	}
	items := strings.Split(p, "/")
	for _, item := range items {
		if item == ".." {
			return fmt.Errorf("invalid path: must not contain '..': %s", p)
		}
		if len(item) > maxFileNameLength {
			return fmt.Errorf("invalid path: filenames must be less than or equal to %d characters", maxFileNameLength)
		}
	}
	if strings.HasPrefix(items[0], "..") && len(items[0]) > 2 {
		return fmt.Errorf("invalid path: must not start with '..': %s", p)
	}
	if filepath.Clean(p) == "." {
		return fmt.Errorf("invalid path: must name a file: %s", p)
	}
	return nil
}

// pathsToRemove is upstream's: the paths (files and directories, relative to a version
// directory) in existing that are neither a payload file nor a parent directory of one.
func pathsToRemove(existing []string, payload map[string]fileProjection) []string {
	wanted := map[string]bool{}
	for p := range payload {
		for ; p != "." && p != "/" && p != ""; p = filepath.Dir(p) {
			wanted[p] = true
		}
	}
	var out []string
	for _, p := range existing {
		if !wanted[p] {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// topLevelNames are the first components of the payload paths, sorted.
func topLevelNames(payload map[string]fileProjection) []string {
	set := map[string]bool{}
	for p := range payload {
		top, _, _ := strings.Cut(p, "/")
		set[top] = true
	}
	out := make([]string, 0, len(set))
	for top := range set {
		out = append(out, top)
	}
	slices.Sort(out)
	return out
}

// firstFileUnder is the payload path top itself, or the first one under top/.
func firstFileUnder(payload map[string]fileProjection, top string) string {
	for _, p := range sortedKeys(payload) {
		if p == top || strings.HasPrefix(p, top+"/") {
			return p
		}
	}
	return top
}

func sortedKeys(payload map[string]fileProjection) []string {
	keys := make([]string, 0, len(payload))
	for k := range payload {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
