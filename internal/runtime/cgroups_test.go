package runtime

import (
	"os"
	"path/filepath"
	"testing"
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
