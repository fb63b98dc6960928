package runtime

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestRemovePodCgroups(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) string {
		dir := filepath.Join(root, p)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	gone := []string{mk("memory/kubepods/besteffort/podu1"), mk("cpu,cpuacct/kubepods/besteffort/podu1"), mk("kubepods/besteffort/podu1")}
	other := mk("memory/kubepods/burstable/podu2")
	busy := mk("pids/kubepods/podu1/still-a-container")
	m := &Manager{cfg: Config{CgroupFSRoot: root, CgroupRoot: "/kubepods"}}
	err := m.removePodCgroups("u1")
	if err == nil {
		t.Fatal("a pod cgroup with a container left inside must be an error (retried later)")
	}
	for _, d := range gone {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still there", d)
		}
	}
	for _, d := range []string{other, busy} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	if err := os.Remove(busy); err != nil {
		t.Fatal(err)
	}
	if err := m.removePodCgroups("u1"); err != nil {
		t.Fatalf("second try: %v", err)
	}
	if err := (&Manager{}).removePodCgroups("u1"); err != nil {
		t.Fatalf("no cgroup root configured: %v", err)
	}
}

func TestRemovePodLogDirs(t *testing.T) {
	logs := t.TempDir()
	mine := filepath.Join(logs, "default_web_u1")
	other := filepath.Join(logs, "default_web_u12") // another UID that starts like u1
	for _, d := range []string{filepath.Join(mine, "app"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(mine, "app", "0.log"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &Manager{cfg: Config{PodLogsDir: logs}}
	if err := m.removePodLogDirs("u1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mine); !os.IsNotExist(err) {
		t.Errorf("the pod's log directory is still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another pod's log directory was removed: %v", err)
	}
	for _, bad := range []string{"", "*", "../x"} {
		if err := m.removePodLogDirs(types.UID(bad)); err != nil {
			t.Errorf("UID %q: %v", bad, err)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a pattern UID removed another pod's log directory: %v", err)
	}
}
