package testharness

import (
	"os"
	"path/filepath"
	"strings"
)

// DefaultTestenvDir is hack/testenv.sh's default TESTENV_DIR.
const DefaultTestenvDir = "/var/lib/nodelet-testenv"

// TestenvDir is the test environment's directory (containerd's root and state): TESTENV_DIR,
// as hack/testenv.sh reads it, or its default.
func TestenvDir() string {
	if dir := strings.TrimRight(os.Getenv("TESTENV_DIR"), "/"); dir != "" {
		return dir
	}
	return DefaultTestenvDir
}

// TestenvEndpoint is the CRI endpoint of the test environment's containerd.
func TestenvEndpoint() string {
	return "unix://" + filepath.Join(TestenvDir(), "containerd.sock")
}
