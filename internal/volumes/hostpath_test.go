package volumes

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/testharness/ci"
)

func TestHostPathTypes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	link := filepath.Join(dir, "link-to-dir")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	block := ""
	if os.Geteuid() == 0 {
		block = filepath.Join(dir, "blk")
		if err := unix.Mknod(block, unix.S_IFBLK|0o600, int(unix.Mkdev(7, 200))); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(dir, "missing")

	for _, tc := range []struct {
		name    string
		path    string
		typ     v1.HostPathType
		wantErr string // "" for success
		created os.FileMode
	}{
		{"unset type, path not checked", missing, v1.HostPathUnset, "", 0},
		{"Directory", dir, v1.HostPathDirectory, "", 0},
		{"Directory through a symlink", link, v1.HostPathDirectory, "", 0},
		{"Directory on a file", file, v1.HostPathDirectory, "hostPath type check failed: " + file + " is not a directory, it's a File", 0},
		{"Directory missing", missing, v1.HostPathDirectory, "is not a directory, unable to determine its type: path \"" + missing + "\" does not exist", 0},
		{"DirectoryOrCreate exists", dir, v1.HostPathDirectoryOrCreate, "", 0},
		{"DirectoryOrCreate creates parents", filepath.Join(dir, "new/a/b"), v1.HostPathDirectoryOrCreate, "", os.ModeDir},
		{"DirectoryOrCreate on a file", file, v1.HostPathDirectoryOrCreate, "is not a directory, it's a File", 0},
		{"File", file, v1.HostPathFile, "", 0},
		{"File on a directory", dir, v1.HostPathFile, "is not a file, it's a Directory", 0},
		{"FileOrCreate creates", filepath.Join(dir, "newfile"), v1.HostPathFileOrCreate, "", 0},
		{"FileOrCreate does not create parents", filepath.Join(dir, "nope/newfile"), v1.HostPathFileOrCreate, "creating file", 0},
		{"FileOrCreate on a directory", dir, v1.HostPathFileOrCreate, "is not a file, it's a Directory", 0},
		{"Socket", sock, v1.HostPathSocket, "", 0},
		{"Socket on a file", file, v1.HostPathSocket, "is not a socket file, it's a File", 0},
		{"CharDevice", "/dev/null", v1.HostPathCharDev, "", 0},
		{"CharDevice on a socket", sock, v1.HostPathCharDev, "is not a character device, it's a Socket", 0},
		{"BlockDevice on a char device", "/dev/null", v1.HostPathBlockDev, "is not a block device, it's a CharDevice", 0},
		{"BlockDevice", block, v1.HostPathBlockDev, "", 0},
		{"invalid type", dir, "Weird", "Weird is an invalid volume type", 0},
		{"backsteps", "/var/../etc", v1.HostPathUnset, "invalid HostPath `/var/../etc`: must not contain '..'", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.path == "" {
				ci.Skip(t, "%s needs root to create a block device", t.Name())
			}
			vol := hostPathVol("hp", tc.path, ptr.To(tc.typ))
			got, err := setUpHostPath(&vol)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), `hostPath volume "hp"`) {
					t.Fatalf("err = %v, want one naming the volume and containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.path {
				t.Fatalf("setUpHostPath = %q, %v", got, err)
			}
			switch tc.typ {
			case v1.HostPathDirectoryOrCreate:
				if fi, err := os.Stat(tc.path); err != nil || !fi.IsDir() {
					t.Fatalf("not a directory: %v", err)
				}
			case v1.HostPathFileOrCreate:
				if fi, err := os.Stat(tc.path); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
					t.Fatalf("not an empty file: %v", err)
				}
			}
		})
	}
}

func TestHostPathThroughSetUp(t *testing.T) {
	m, _ := newTestManager(t, newFakeMounter())
	dir := t.TempDir()
	paths, err := m.SetUp(testPod("uid-1", hostPathVol("logs", dir, nil),
		hostPathVol("bad", filepath.Join(dir, "absent"), ptr.To(v1.HostPathFile))))
	if paths["logs"] != dir {
		t.Fatalf("paths = %v", paths)
	}
	if err == nil || !strings.Contains(err.Error(), `hostPath volume "bad": hostPath type check failed`) {
		t.Fatalf("err = %v", err)
	}
}
