// Package cri is a thin client for the Container Runtime Interface (CRI) v1.
//
// Dial connects to a runtime endpoint such as
// unix:///run/containerd/containerd.sock (or a bare socket path), checks with
// a Version call that the runtime serves CRI v1 (runtime.v1.RuntimeService),
// and returns a Client whose Runtime and Image fields are the generated
// k8s.io/cri-api gRPC clients. The package adds no behaviour on top of CRI:
// callers use the generated clients directly.
package cri
