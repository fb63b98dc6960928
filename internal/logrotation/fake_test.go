package logrotation

import (
	"context"
	"os"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/cri"
)

// Runtime is a subset of cri-api's RuntimeService, so every implementation of that (cri-api's
// FakeRuntimeService among them) satisfies it. FakeRuntimeService itself is not imported: its
// package pulls testify into the module.
var (
	_ Runtime = (*cri.Client)(nil)
	_ Runtime = internalapi.RuntimeService(nil)
	_ Runtime = (*fakeRuntime)(nil)
)

// fakeRuntime keeps containers in memory; ReopenContainerLog creates the log file, as a runtime
// does, unless an error is set for the container.
type fakeRuntime struct {
	mu         sync.Mutex
	containers map[string]*runtimeapi.ContainerStatus
	listErr    error
	reopenErr  map[string]error
	// stopOnReopen makes a failing reopen also stop the container (it exited meanwhile).
	stopOnReopen bool
	reopens      []string
	statusCalls  int
}

func newFakeRuntime() *fakeRuntime {
	return &fakeRuntime{containers: map[string]*runtimeapi.ContainerStatus{}, reopenErr: map[string]error{}}
}

func (f *fakeRuntime) add(id, logPath string, state runtimeapi.ContainerState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.containers[id] = &runtimeapi.ContainerStatus{
		Id:      id,
		State:   state,
		LogPath: logPath,
		Labels: map[string]string{
			"io.kubernetes.pod.namespace":  "default",
			"io.kubernetes.pod.name":       "web",
			"io.kubernetes.container.name": "app-" + id,
		},
	}
}

func (f *fakeRuntime) setReopenErr(id string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reopenErr[id] = err
}

func (f *fakeRuntime) reopened() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reopens...)
}

func (f *fakeRuntime) ListContainers(_ context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listErr != nil {
		return nil, f.listErr
	}
	var out []*runtimeapi.Container
	for id, s := range f.containers {
		if filter.GetState() != nil && filter.GetState().GetState() != s.GetState() {
			continue
		}
		out = append(out, &runtimeapi.Container{Id: id, State: s.GetState(), Labels: s.GetLabels()})
	}
	return out, nil
}

func (f *fakeRuntime) ContainerStatus(_ context.Context, id string, _ bool) (*runtimeapi.ContainerStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statusCalls++
	s, ok := f.containers[id]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "container %q not found", id)
	}
	return &runtimeapi.ContainerStatusResponse{Status: proto.CloneOf(s)}, nil
}

func (f *fakeRuntime) ReopenContainerLog(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reopens = append(f.reopens, id)
	if err := f.reopenErr[id]; err != nil {
		if f.stopOnReopen {
			f.containers[id].State = runtimeapi.ContainerState_CONTAINER_EXITED
		}
		return err
	}
	s, ok := f.containers[id]
	if !ok {
		return status.Errorf(codes.NotFound, "container %q not found", id)
	}
	file, err := os.OpenFile(s.GetLogPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	return file.Close()
}

func (f *fakeRuntime) statuses() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.statusCalls
}
