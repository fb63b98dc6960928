// Package testharness holds what the end-to-end tests (test/e2e) and the bench (hack/bench)
// both need to run nodelet processes on the test environment of hack/testenv.sh: the
// repository and the nodelet binary, free ports, the environment's CRI endpoint, the runtime's
// sandboxes of one node, and what a node leaves on the host (mounts, pod cgroups).
//
// Only tests and tools import it, never cmd/nodelet (TestNotInTheBinary checks). Its
// subpackages serve unit tests too: ci tells a test that lacks root, cgroups or the test
// environment whether to skip or fail; testclock has a fake clock that tells when a timer waits.
package testharness
