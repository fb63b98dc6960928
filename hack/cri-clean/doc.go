// Command cri-clean stops and removes every pod sandbox (and with it every
// container) of a CRI runtime. hack/testenv.sh down runs it before stopping
// containerd, so that CNI teardown releases IPs and network namespaces.
//
// Usage:
//
//	cri-clean -endpoint unix:///var/lib/nodelet-testenv/containerd.sock [-timeout 2m]
package main
