// Package e2e holds nodelet's end-to-end tests. They run against the real
// test environment of hack/testenv.sh (containerd 2.x, runc, bridge CNI and a
// local registry); a test that needs it calls testenv, which brings it up.
// Those tests need root: without it they are skipped, or fail when the CI
// environment variable is set.
//
// Run them with:
//
//	go test ./test/e2e/ -v
//
// An environment that was down before the run is taken down after it, unless
// NODELET_E2E_KEEP_ENV=1 is set; one that was already up is left up.
package e2e
