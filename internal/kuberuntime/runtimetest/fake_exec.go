package runtimetest

import (
	"context"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ExecCall is one ExecSync call.
type ExecCall struct {
	ID      string
	Cmd     []string
	Timeout time.Duration
}

// FakeExec fakes CRI ExecSync in the containers of a FakeRuntime, as the runtime client's
// ExecSync (internal/cri): the command's exit code is returned, err is for not running it. As
// containerd, an unknown container is NotFound and one that is not running FailedPrecondition.
// Calls go to the runtime's call log as "ExecSync" too, so that their order against
// StopContainer shows in GetCalls, and InjectError("ExecSync", err) makes a call fail.
// It is safe for concurrent use.
type FakeExec struct {
	rt *FakeRuntime

	// OnExec, when set, runs the command (without any lock): it may advance a fake clock, wait
	// for ctx, or answer with output and an exit code. Unset, every command succeeds silently.
	OnExec func(ctx context.Context, call ExecCall) (stdout, stderr []byte, exitCode int32, err error)

	mu    sync.Mutex
	calls []ExecCall
}

// NewFakeExec returns an ExecSync over rt's containers.
func NewFakeExec(rt *FakeRuntime) *FakeExec { return &FakeExec{rt: rt} }

// Calls returns the commands run so far (not those refused), in order.
func (e *FakeExec) Calls() []ExecCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.calls)
}

// ExecSync runs cmd in the running container id.
func (e *FakeExec) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, int32, error) {
	r := e.rt
	r.mu.Lock()
	err := r.call("ExecSync")
	c, ok := r.containers[id]
	var state runtimeapi.ContainerState
	if ok {
		state = c.status.State
	}
	r.mu.Unlock()
	switch {
	case err != nil:
		return nil, nil, 0, err
	case !ok:
		return nil, nil, 0, notFound("container", id)
	case state != runtimeapi.ContainerState_CONTAINER_RUNNING:
		return nil, nil, 0, status.Errorf(codes.FailedPrecondition, "container %q is in %s state", id, state)
	}
	call := ExecCall{ID: id, Cmd: slices.Clone(cmd), Timeout: timeout}
	e.mu.Lock()
	e.calls = append(e.calls, call)
	on := e.OnExec
	e.mu.Unlock()
	if on == nil {
		return nil, nil, 0, nil
	}
	return on(ctx, call)
}
