package volumes

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

var testTime = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

func newTestWriter(t *testing.T) (atomicWriter, *clocktesting.FakePassiveClock) {
	t.Helper()
	clk := clocktesting.NewFakePassiveClock(testTime)
	return atomicWriter{dir: t.TempDir(), clock: clk}, clk
}

func files(kv ...string) map[string]fileProjection {
	out := map[string]fileProjection{}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i]] = fileProjection{data: []byte(kv[i+1]), mode: 0o644}
	}
	return out
}

func mustWrite(t *testing.T, w atomicWriter, payload map[string]fileProjection, wantWritten bool) {
	t.Helper()
	written, err := w.write(payload)
	if err != nil {
		t.Fatal(err)
	}
	if written != wantWritten {
		t.Fatalf("written = %v, want %v", written, wantWritten)
	}
}

func readlink(t *testing.T, p string) string {
	t.Helper()
	target, err := os.Readlink(p)
	if err != nil {
		t.Fatal(err)
	}
	return target
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// versionDirs lists the timestamped directories of a volume.
func versionDirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if isTimestampDir(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestAtomicWriterLayout(t *testing.T) {
	old := syscall.Umask(0o077) // modes must not depend on the umask
	defer syscall.Umask(old)
	w, _ := newTestWriter(t)
	payload := files("config.yaml", "a: 1\n", "nested/dir/file", "deep")
	payload["secret"] = fileProjection{data: []byte("s3cr3t"), mode: 0o400}
	mustWrite(t, w, payload, true)

	ts := readlink(t, filepath.Join(w.dir, "..data"))
	if !strings.HasPrefix(ts, "..2025_03_04_05_06_07.") || !isTimestampDir(ts) {
		t.Fatalf("..data -> %q, want the fake clock's timestamp", ts)
	}
	if got := versionDirs(t, w.dir); !slices.Equal(got, []string{ts}) {
		t.Fatalf("version dirs = %v", got)
	}
	for name, want := range map[string]string{"config.yaml": "..data/config.yaml", "nested": "..data/nested", "secret": "..data/secret"} {
		if got := readlink(t, filepath.Join(w.dir, name)); got != want {
			t.Errorf("%s -> %q, want %q", name, got, want)
		}
	}
	if got := mustRead(t, filepath.Join(w.dir, "nested/dir/file")); got != "deep" {
		t.Errorf("nested/dir/file = %q", got)
	}
	if got := mustRead(t, filepath.Join(w.dir, "config.yaml")); got != "a: 1\n" {
		t.Errorf("config.yaml = %q", got)
	}
	for name, want := range map[string]os.FileMode{"config.yaml": 0o644, "secret": 0o400, "nested/dir/file": 0o644} {
		if got := mustMode(t, filepath.Join(w.dir, ts, name)).Perm(); got != want {
			t.Errorf("mode of %s = %v, want %v", name, got, want)
		}
	}
	for _, d := range []string{ts, ts + "/nested", ts + "/nested/dir"} {
		if got := mustMode(t, filepath.Join(w.dir, d)).Perm(); got != 0o755 {
			t.Errorf("mode of %s = %v, want 0755", d, got)
		}
	}
}

func TestAtomicWriterUpdates(t *testing.T) {
	w, clk := newTestWriter(t)
	mustWrite(t, w, files("a", "1", "b", "2", "sub/c", "3"), true)
	first := readlink(t, filepath.Join(w.dir, "..data"))

	// Same payload: nothing is rewritten, not even a new version directory.
	clk.SetTime(testTime.Add(time.Minute))
	mustWrite(t, w, files("a", "1", "b", "2", "sub/c", "3"), false)
	if got := readlink(t, filepath.Join(w.dir, "..data")); got != first {
		t.Fatalf("..data moved to %s on an unchanged payload", got)
	}

	// A user-visible link removed by someone is restored without a new version.
	if err := os.Remove(filepath.Join(w.dir, "b")); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, w, files("a", "1", "b", "2", "sub/c", "3"), false)
	if got := mustRead(t, filepath.Join(w.dir, "b")); got != "2" {
		t.Fatalf("b = %q after restore", got)
	}

	// Changed content, a removed key (b) and a removed nested file: a new version, the old
	// one and the stale link are gone.
	mustWrite(t, w, files("a", "11", "new", "n"), true)
	second := readlink(t, filepath.Join(w.dir, "..data"))
	if second == first || !strings.HasPrefix(second, "..2025_03_04_05_07_07.") {
		t.Fatalf("..data = %s, first was %s", second, first)
	}
	if got := versionDirs(t, w.dir); !slices.Equal(got, []string{second}) {
		t.Fatalf("version dirs = %v, want only %s", got, second)
	}
	if got := mustRead(t, filepath.Join(w.dir, "a")); got != "11" {
		t.Fatalf("a = %q", got)
	}
	mustNotExist(t, filepath.Join(w.dir, "b"))
	mustNotExist(t, filepath.Join(w.dir, "sub"))
	if got := mustRead(t, filepath.Join(w.dir, "new")); got != "n" {
		t.Fatalf("new = %q", got)
	}

	// A mode change alone is a change.
	p := files("a", "11", "new", "n")
	p["a"] = fileProjection{data: []byte("11"), mode: 0o600}
	mustWrite(t, w, p, true)
	if got := mustMode(t, filepath.Join(w.dir, "..data", "a")).Perm(); got != 0o600 {
		t.Fatalf("mode = %v", got)
	}

	// An empty payload empties the volume.
	mustWrite(t, w, nil, true)
	entries, _ := os.ReadDir(w.dir)
	var names []string
	for _, e := range entries {
		if !isTimestampDir(e.Name()) {
			names = append(names, e.Name())
		}
	}
	if !slices.Equal(names, []string{"..data"}) {
		t.Fatalf("after an empty payload: %v", names)
	}
}

func TestAtomicWriterRecoversFromLeftovers(t *testing.T) {
	w, _ := newTestWriter(t)
	// A crash left a temporary link, a half-written version and a foreign entry.
	if err := os.Symlink("nowhere", filepath.Join(w.dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(w.dir, "..2020_01_01_00_00_00.42")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(w.dir, "mnt")
	if err := os.Mkdir(keep, 0o755); err != nil { // a nested mount point
		t.Fatal(err)
	}
	mustWrite(t, w, files("a", "1"), true)
	mustNotExist(t, stale)
	mustNotExist(t, filepath.Join(w.dir, "..data_tmp"))
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("the nested mount point directory was removed: %v", err)
	}
	// A dangling ..data (its version removed by hand) is replaced by a new version.
	if err := os.RemoveAll(filepath.Join(w.dir, readlink(t, filepath.Join(w.dir, "..data")))); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, w, files("a", "1"), true)
	if got := mustRead(t, filepath.Join(w.dir, "a")); got != "1" {
		t.Fatalf("a = %q", got)
	}
}

func TestAtomicWriterOwnership(t *testing.T) {
	w, _ := newTestWriter(t)
	gid, uid := int64(os.Getgid()), int64(os.Getuid()) // changeable without privileges
	w.fsGroup = &gid
	if err := os.Chmod(w.dir, 0o777); err != nil { // as makeVolumeDir makes it
		t.Fatal(err)
	}
	p := files("cfg", "x")
	p["token"] = fileProjection{data: []byte("t"), mode: 0o600, uid: &uid}
	mustWrite(t, w, p, true)
	ts := readlink(t, filepath.Join(w.dir, "..data"))
	for name, want := range map[string]os.FileMode{
		"cfg":   0o644,
		"token": 0o640, // fsGroup adds group read
		ts:      0o755 | os.ModeSetgid | os.ModeDir,
		".":     0o777 | os.ModeSetgid | os.ModeDir,
	} {
		path := filepath.Join(w.dir, name)
		if name != ts && name != "." {
			path = filepath.Join(w.dir, ts, name)
		}
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode() &^ fs.ModeSticky; got != want {
			t.Errorf("mode of %s = %v, want %v", name, got, want)
		}
		if st := fi.Sys().(*syscall.Stat_t); int64(st.Gid) != gid {
			t.Errorf("group of %s = %d, want %d", name, st.Gid, gid)
		}
	}
	// The fsGroup modes count as unchanged on the next sync.
	mustWrite(t, w, p, false)
}

// TestAtomicWriterReadersSeeWholeVersions reads the files while versions are swapped: every
// read returns one complete version, never a partial file.
func TestAtomicWriterReadersSeeWholeVersions(t *testing.T) {
	w, _ := newTestWriter(t)
	version := func(n byte) map[string]fileProjection {
		return map[string]fileProjection{"big": {data: bytes.Repeat([]byte{'a' + n}, 64<<10), mode: 0o644}}
	}
	mustWrite(t, w, version(0), true)
	var wg sync.WaitGroup
	done := make(chan struct{})
	errc := make(chan error, 1)
	var reads int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			b, err := os.ReadFile(filepath.Join(w.dir, "big"))
			if errors.Is(err, fs.ErrNotExist) {
				continue // resolved into a version removed right after; retried
			}
			if err == nil && (len(b) != 64<<10 || bytes.Count(b, b[:1]) != len(b)) {
				err = errors.New("a partial or mixed file was visible")
			}
			if err != nil {
				errc <- err
				return
			}
			reads++
		}
	}()
	for i := 1; i <= 50; i++ {
		mustWrite(t, w, version(byte(i%26)), true)
	}
	close(done)
	wg.Wait()
	select {
	case err := <-errc:
		t.Fatal(err)
	default:
	}
	if reads == 0 {
		t.Fatal("the reader never read the file")
	}
}

func TestValidatePayloadPath(t *testing.T) {
	for _, tc := range []struct {
		path, wantErr string
	}{
		{path: "a"},
		{path: "a/b/c"},
		{path: ".hidden"},
		{path: "a/..b"},
		{path: "a/./b"},
		{path: "", wantErr: "must not be empty"},
		{path: "/etc/passwd", wantErr: "must be relative path"},
		{path: "../x", wantErr: "must not contain '..'"},
		{path: "a/../../x", wantErr: "must not contain '..'"},
		{path: "..data", wantErr: "must not start with '..'"},
		{path: "..2025_01_01_00_00_00.1/x", wantErr: "must not start with '..'"},
		{path: ".", wantErr: "must name a file"},
		{path: strings.Repeat("a", 256), wantErr: "filenames must be less than or equal to 255"},
		{path: strings.Repeat("a/", 2049), wantErr: "must be less than or equal to 4096"},
	} {
		err := validatePayloadPath(tc.path)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("validatePayloadPath(%.20q) = %v, want %q", tc.path, err, tc.wantErr)
		}
	}
	w, _ := newTestWriter(t)
	if _, err := w.write(files("../escape", "x")); err == nil {
		t.Fatal("write accepted ../escape")
	}
	mustNotExist(t, filepath.Join(w.dir, "..data"))
}

func TestPathsToRemove(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing []string
		payload  []string
		want     []string
	}{
		{name: "same", existing: []string{"a", "b"}, payload: []string{"a", "b"}},
		{name: "key removed", existing: []string{"a", "b"}, payload: []string{"a"}, want: []string{"b"}},
		{name: "parents kept", existing: []string{"d", "d/e", "d/e/f"}, payload: []string{"d/e/f"}},
		{name: "nested removed", existing: []string{"d", "d/e", "d/e/f", "d/g"}, payload: []string{"d/g"}, want: []string{"d/e", "d/e/f"}},
		{name: "file became dir", existing: []string{"x"}, payload: []string{"y/z"}, want: []string{"x"}},
		{name: "empty payload", existing: []string{"a"}, want: []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := map[string]fileProjection{}
			for _, k := range tc.payload {
				p[k] = fileProjection{}
			}
			if got := pathsToRemove(tc.existing, p); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIsTimestampDir(t *testing.T) {
	for name, want := range map[string]bool{
		"..2025_03_04_05_06_07.123": true,
		"..2025_03_04_05_06_07.":    false,
		"..data":                    false,
		"..data_tmp":                false,
		"2025_03_04_05_06_07.1":     false,
		"..2025_13_04_05_06_07.1":   false,
		"":                          false,
	} {
		if got := isTimestampDir(name); got != want {
			t.Errorf("isTimestampDir(%q) = %v, want %v", name, got, want)
		}
	}
}
