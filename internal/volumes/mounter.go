package volumes

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Mounter is what the Manager needs of the host's mount table. NewSystemMounter is the real
// one; tests fake it.
type Mounter interface {
	// MountTmpfs mounts a tmpfs at target (an existing directory). sizeBytes > 0 sets the
	// size= option; 0 leaves the kernel's default.
	MountTmpfs(target string, sizeBytes int64) error
	// Unmount unmounts the topmost mount at target, without following a symlink at target.
	Unmount(target string) error
	// IsMountPoint says whether path is a mount point; an error matching fs.ErrNotExist when
	// path does not exist. A symlink is never a mount point.
	IsMountPoint(path string) (bool, error)
}

// MountLister is implemented by a Mounter that can list the mount table. TearDown then
// unmounts every mount under the pod directory, not only the tmpfs emptyDirs it made.
type MountLister interface {
	// MountPointsUnder returns the mount points at or under dir, innermost (most recently
	// mounted) first; a path mounted n times appears n times.
	MountPointsUnder(dir string) ([]string, error)
}

// mountEntry is one line of /proc/<pid>/mountinfo.
type mountEntry struct {
	path   string // the mount point
	shared bool   // in a peer group ("shared:N" optional field)
}

// parseMountInfo parses a /proc/<pid>/mountinfo, in order. The format is in proc(5): the
// fifth field is the mount point, octal-escaped; optional fields follow the sixth, up to "-".
func parseMountInfo(r io.Reader) ([]mountEntry, error) {
	var out []mountEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 10 { // 6 fixed fields, optional fields, "-", 3 fields
			return nil, fmt.Errorf("malformed mountinfo line %q", line)
		}
		e := mountEntry{path: unescapeOctal(fields[4])}
		for _, opt := range fields[6:] {
			if opt == "-" {
				break
			}
			e.shared = e.shared || strings.HasPrefix(opt, "shared:")
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

func mountPaths(entries []mountEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.path
	}
	return out
}

// containingMount is the entry of the mount that path (symlinks resolved) is on: the last
// entry whose mount point is path or a parent of it.
func containingMount(entries []mountEntry, path string) (mountEntry, bool) {
	for i := len(entries) - 1; i >= 0; i-- {
		p := entries[i].path
		if p == path || p == "/" || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/") {
			return entries[i], true
		}
	}
	return mountEntry{}, false
}

// unescapeOctal undoes the kernel's \NNN escaping of space, tab, newline and backslash.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountPointsUnder filters mount points (in mountinfo order) to those at or under dir, and
// returns them innermost first: reverse mount order unmounts children before parents and
// stacked mounts top first.
func mountPointsUnder(all []string, dir string) []string {
	prefix := strings.TrimSuffix(dir, "/") + "/"
	var out []string
	for i := len(all) - 1; i >= 0; i-- {
		if p := all[i]; p == dir || strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	return out
}
