package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/nodelet/nodelet/internal/testharness"
	"github.com/nodelet/nodelet/internal/testharness/ci"
)

// testenvScript is hack/testenv.sh relative to this package's directory,
// which is the working directory of `go test`.
const testenvScript = "../../hack/testenv.sh"

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

// runTests runs the tests. Tests that need the container runtime bring the
// test environment up themselves (testenv); if it was down before the run
// and is up after it, runTests takes it down again, unless
// NODELET_E2E_KEEP_ENV is set, so a run leaves the machine as it found it.
func runTests(m *testing.M) int {
	if os.Geteuid() != 0 {
		return m.Run()
	}
	wasUp := testenvUp()
	clusterWasUp := clusterUp()
	code := m.Run()
	// The control plane goes down first: it may hold nothing of the runtime's, but its
	// processes should not outlive a run that started them.
	if cp != nil && !clusterWasUp && os.Getenv("NODELET_E2E_KEEP_ENV") == "" {
		if out, err := runCluster("down"); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %s down failed: %v\n%s", clusterScript, err, out)
			if code == 0 {
				code = 1
			}
		}
	}
	if wasUp || os.Getenv("NODELET_E2E_KEEP_ENV") != "" || !testenvUp() {
		return code
	}
	if out, err := runTestenv("down"); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %s down failed: %v\n%s", testenvScript, err, out)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// clusterUp reports whether the control plane's processes run.
func clusterUp() bool {
	_, err := runCluster("status")
	return err == nil
}

// testenvUp reports whether the test environment's daemons run.
func testenvUp() bool {
	_, err := runTestenv("status")
	return err == nil
}

func runTestenv(arg string) ([]byte, error) {
	var buf bytes.Buffer
	cmd := exec.Command("bash", testenvScript, arg)
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.Bytes(), err
}

// env describes the running test environment.
type env struct {
	// endpoint is the CRI endpoint of the environment's containerd.
	endpoint string
}

// testenv brings the test environment up (hack/testenv.sh up is idempotent
// and takes about a second when it is already up) and describes it. Without
// root it skips the test loudly, or fails it when CI is set.
func testenv(t *testing.T) env {
	t.Helper()
	if os.Geteuid() != 0 {
		ci.Skip(t, "e2e test needs root: it runs containerd, mounts filesystems and creates a bridge; run `sudo go test ./test/e2e/`")
	}
	start := time.Now()
	if out, err := runTestenv("up"); err != nil {
		t.Fatalf("%s up: %v\n%s", testenvScript, err, out)
	}
	t.Logf("test environment up in %v", time.Since(start).Round(time.Millisecond))
	return env{endpoint: testharness.TestenvEndpoint()}
}
