package volumes

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestReadTerminationMessage(t *testing.T) {
	m, _ := newTestManager(t, newFakeMounter())
	pod := testPod("uid-1")
	c := &v1.Container{Name: "app", TerminationMessagePath: "/dev/termination-log"}

	if msg, err := m.ReadTerminationMessage(pod.UID, "app", 0); msg != "" || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no file: %q, %v", msg, err)
	}
	if _, err := m.Mounts(pod, c, nil, nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	if msg, err := m.ReadTerminationMessage(pod.UID, "app", 0); msg != "" || err != nil {
		t.Fatalf("empty file: %q, %v", msg, err)
	}
	path := m.TerminationMessagePath(pod.UID, "app", 0)
	if err := os.WriteFile(path, []byte("bye"), 0o666); err != nil {
		t.Fatal(err)
	}
	if msg, err := m.ReadTerminationMessage(pod.UID, "app", 0); msg != "bye" || err != nil {
		t.Fatalf("short message: %q, %v", msg, err)
	}
	// Bounded: the last 4096 bytes, as upstream's tail.ReadAtMost.
	long := strings.Repeat("x", 10000) + strings.Repeat("y", MaxContainerTerminationMessageLength)
	if err := os.WriteFile(path, []byte(long), 0o666); err != nil {
		t.Fatal(err)
	}
	msg, err := m.ReadTerminationMessage(pod.UID, "app", 0)
	if err != nil || msg != strings.Repeat("y", MaxContainerTerminationMessageLength) {
		t.Fatalf("long message: %d bytes %q..., %v", len(msg), msg[:10], err)
	}
	// Another instance has its own file.
	if msg, err := m.ReadTerminationMessage(pod.UID, "app", 1); msg != "" || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("other restart count: %q, %v", msg, err)
	}
}

func TestReadTerminationMessageRefusesSymlink(t *testing.T) {
	m, _ := newTestManager(t, newFakeMounter())
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("host secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := m.TerminationMessagePath("uid-1", "app", 0)
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, path); err != nil {
		t.Fatal(err)
	}
	msg, err := m.ReadTerminationMessage("uid-1", "app", 0)
	if err == nil || strings.Contains(msg, "host secret") || !strings.HasPrefix(msg, "Error on reading termination log "+path) {
		t.Fatalf("got %q, %v", msg, err)
	}
}

func TestTerminationFileRecreatedAndPruned(t *testing.T) {
	m, _ := newTestManager(t, newFakeMounter())
	pod := testPod("uid-1")
	c := &v1.Container{Name: "app", TerminationMessagePath: "/dev/termination-log"}
	for rc := range 4 {
		if _, err := m.Mounts(pod, c, nil, nil, rc, nil); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(m.TerminationMessagePath(pod.UID, "app", rc), []byte("old"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	// Restart count 3 again (e.g. a create that is retried): the file is emptied.
	if _, err := m.Mounts(pod, c, nil, nil, 3, nil); err != nil {
		t.Fatal(err)
	}
	if msg, _ := m.ReadTerminationMessage(pod.UID, "app", 3); msg != "" {
		t.Fatalf("reused file not emptied: %q", msg)
	}
	entries, _ := os.ReadDir(filepath.Dir(m.TerminationMessagePath(pod.UID, "app", 0)))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "00000002,00000003" {
		t.Fatalf("files = %v, want the current and previous instance only", names)
	}
}
