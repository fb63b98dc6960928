package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	for _, content := range []string{"first", "second"} {
		if err := WriteFile(path, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("content %q (%v), want %q", got, err, content)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".f.json.*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "f"), nil, 0o600); err == nil {
		t.Error("no error for a missing directory")
	}
}
