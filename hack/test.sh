#!/usr/bin/env bash
# test.sh: everything CI checks, in order. `make test` runs it; .ci/run runs `make test`.
# Needs root for the end-to-end tests (containerd, mounts, a bridge); installs what it needs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH=/usr/local/go/bin:$PATH
step() { printf '\n=== %s\n' "$*"; }

step "install: Debian packages, containerd $(grep -m1 CONTAINERD_VERSION= hack/testenv.sh | cut -d= -f2), test images"
bash hack/testenv.sh up
bash hack/vm.sh deps

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [[ -n $unformatted ]]; then
	echo "gofmt needed on:"; echo "$unformatted"; exit 1
fi

step "go vet"
go vet ./...
go vet -tags vmguest ./test/vm # the suite that runs inside the VM (hack/vm.sh)

step "weight: packages linked into nodelet (issue 16: at most 700)"
linked=$(go list -deps ./cmd/nodelet | wc -l)
echo "go list -deps ./cmd/nodelet | wc -l: $linked"
if (( linked > 700 )); then
	echo "nodelet links $linked packages, more than 700: docs/architecture.md says which imports are heavy and why"; exit 1
fi

step "unit tests (-race)"
go test -race -count=1 $(go list ./... | grep -v /test/e2e)

step "Go benchmarks, once each (they must keep working; make bench-go measures)"
go test -run '^$' -bench . -benchtime 1x -count=1 $(go list ./... | grep -v /test/e2e)

step "fuzzing: FuzzManifest for ${FUZZTIME:=20s}"
go test -run '^$' -fuzz '^FuzzManifest$' -fuzztime "$FUZZTIME" ./internal/podconfig

step "end-to-end tests on containerd, runc, CNI and a local registry; cluster mode against etcd + kube-apiserver v1.37"
bash hack/cluster.sh build
# Meanwhile, at low priority, the upstream suite's binaries and images (e2e.test alone is a
# 13-minute build when cold; the end-to-end tests mostly wait on containerd).
mkdir -p /var/cache/nodelet
( nice -n 19 bash hack/conformance.sh build >/dev/null && nice -n 19 bash hack/conformance.sh images ) \
	>/var/cache/nodelet/conformance-prebuild.log 2>&1 &
prebuild=$!
# And the systemd + cgroup v2 VM's image (debootstrap; cached), for the VM suite at the end.
nice -n 19 bash hack/vm.sh build >/var/cache/nodelet/vm-build.log 2>&1 &
vmbuild=$!
e2e() { # go test -v on test/e2e, its output kept: what failed is summed up at the end
	local log=/var/cache/nodelet/e2e-$1.log; shift
	go test -count=1 -v "$@" ./test/e2e/ 2>&1 | tee "$log" || { awk -f hack/lib/failures.awk "$log"; return 1; }
}
e2e main -timeout 50m -skip '^TestClusterPressure'
wait "$prebuild" || { tail -n 40 /var/cache/nodelet/conformance-prebuild.log; echo "building the conformance suite failed"; exit 1; }

step "node pressure: eviction under memory and disk pressure, alone on the machine"
# Their thresholds are set relative to the memory and disk free when they start: nothing else
# may allocate meanwhile (the conformance prebuild above is done).
e2e pressure -timeout 15m -run '^TestClusterPressure'
bash hack/cluster.sh down

step "upstream conformance: Kubernetes v1.37.1's sig-node [Conformance] specs (e2e.test), nodelet the only node"
bash hack/conformance.sh run

step "in a systemd + cgroup v2 VM (QEMU): nodelet installed as a service, pods on cgroup v2 (test/vm)"
wait "$vmbuild" || { tail -n 40 /var/cache/nodelet/vm-build.log; echo "building the VM's image failed"; exit 1; }
bash hack/vm.sh test

step "teardown, and nothing left behind"
bash hack/cluster.sh down
bash hack/cluster.sh check-clean
bash hack/testenv.sh down
bash hack/testenv.sh check-clean
bash hack/containerd16.sh check-clean
bash hack/vm.sh check-clean
echo "all checks passed"
