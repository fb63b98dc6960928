package statstest

import (
	"context"
	"sync"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Runtime answers the CRI list and stats calls from its fields. Set the fields before the
// code under test runs; the methods are safe for concurrent use.
type Runtime struct {
	Sandboxes      []*runtimeapi.PodSandbox
	Containers     []*runtimeapi.Container
	ContainerStats []*runtimeapi.ContainerStats
	SandboxStats   []*runtimeapi.PodSandboxStats
	ImageFs        *runtimeapi.ImageFsInfoResponse
	// Errors, by method name, are returned (once each, in order) instead of an answer.
	Errors map[string][]error

	mu    sync.Mutex
	calls []string
}

// Calls returns the methods called so far, in order.
func (r *Runtime) Calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// call records the call and pops its injected error.
func (r *Runtime) call(method string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, method)
	errs := r.Errors[method]
	if len(errs) == 0 {
		return nil
	}
	r.Errors[method] = errs[1:]
	return errs[0]
}

// ListPodSandbox returns Sandboxes (the Id and state filters apply).
func (r *Runtime) ListPodSandbox(_ context.Context, f *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	if err := r.call("ListPodSandbox"); err != nil {
		return nil, err
	}
	var out []*runtimeapi.PodSandbox
	for _, s := range r.Sandboxes {
		if f.GetId() != "" && f.GetId() != s.GetId() || f.GetState() != nil && f.GetState().GetState() != s.GetState() {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// ListContainers returns Containers (the Id, sandbox and state filters apply).
func (r *Runtime) ListContainers(_ context.Context, f *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	if err := r.call("ListContainers"); err != nil {
		return nil, err
	}
	var out []*runtimeapi.Container
	for _, c := range r.Containers {
		if f.GetId() != "" && f.GetId() != c.GetId() || f.GetPodSandboxId() != "" && f.GetPodSandboxId() != c.GetPodSandboxId() ||
			f.GetState() != nil && f.GetState().GetState() != c.GetState() {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// ListContainerStats returns ContainerStats (the Id filter applies).
func (r *Runtime) ListContainerStats(_ context.Context, f *runtimeapi.ContainerStatsFilter) ([]*runtimeapi.ContainerStats, error) {
	if err := r.call("ListContainerStats"); err != nil {
		return nil, err
	}
	var out []*runtimeapi.ContainerStats
	for _, s := range r.ContainerStats {
		if f.GetId() != "" && f.GetId() != s.GetAttributes().GetId() {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// ListPodSandboxStats returns SandboxStats (the Id filter applies).
func (r *Runtime) ListPodSandboxStats(_ context.Context, f *runtimeapi.PodSandboxStatsFilter) ([]*runtimeapi.PodSandboxStats, error) {
	if err := r.call("ListPodSandboxStats"); err != nil {
		return nil, err
	}
	var out []*runtimeapi.PodSandboxStats
	for _, s := range r.SandboxStats {
		if f.GetId() != "" && f.GetId() != s.GetAttributes().GetId() {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// ImageFsInfo returns ImageFs (an empty answer when nil).
func (r *Runtime) ImageFsInfo(context.Context) (*runtimeapi.ImageFsInfoResponse, error) {
	if err := r.call("ImageFsInfo"); err != nil {
		return nil, err
	}
	if r.ImageFs == nil {
		return &runtimeapi.ImageFsInfoResponse{}, nil
	}
	return r.ImageFs, nil
}
