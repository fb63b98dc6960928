// Package vm is the suite that runs inside the systemd + cgroup v2 VM of hack/vm.sh: nodelet
// installed as a systemd service (hack/install.sh) next to containerd, pods run on cgroup v2,
// their cgroups checked in /sys/fs/cgroup. Its tests carry the build tag vmguest: they need that
// machine, so `go test ./...` does not build them; `hack/vm.sh test` (`make test-vm`, part of
// `make test`) builds them with the tag, copies them in and runs them there.
package vm
