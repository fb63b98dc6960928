// Package ci decides what a test does when what it needs is missing (root, a cgroup
// filesystem, the test environment): on a developer's machine it skips, loudly; in CI (the
// environment variable CI set, as .ci/run sets CI=true) it fails, so that CI cannot pass
// without running it.
package ci

import (
	"fmt"
	"os"
	"testing"
)

// Enabled tells whether the tests run in CI: CI is set, and not to false or 0.
func Enabled() bool {
	switch os.Getenv("CI") {
	case "", "false", "0":
		return false
	}
	return true
}

// Skip skips the test with the reason, or fails it in CI.
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Enabled() {
		t.Fatalf("%s (CI is set, so not running the test is a failure)", msg)
		return
	}
	t.Skipf("SKIPPED: %s (set CI=true to make this a failure)", msg)
}

// RequireRoot is Skip unless the test runs as root; why says what needs root.
func RequireRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Skip(t, "%s %s and needs root", t.Name(), why)
	}
}
