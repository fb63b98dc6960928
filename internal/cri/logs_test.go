package cri

import (
	"context"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// reopenRuntime records ReopenContainerLog calls and fails those for container "stopped".
type reopenRuntime struct {
	fakeRuntime
	mu       sync.Mutex
	reopened []string
}

func (f *reopenRuntime) ReopenContainerLog(_ context.Context, req *runtimeapi.ReopenContainerLogRequest) (*runtimeapi.ReopenContainerLogResponse, error) {
	if req.GetContainerId() == "stopped" {
		return nil, status.Error(codes.FailedPrecondition, "container is not running")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reopened = append(f.reopened, req.GetContainerId())
	return &runtimeapi.ReopenContainerLogResponse{}, nil
}

func TestReopenContainerLog(t *testing.T) {
	rt := &reopenRuntime{fakeRuntime: fakeRuntime{apiVersion: "v1"}}
	sock := serve(t, func(s *grpc.Server) {
		runtimeapi.RegisterRuntimeServiceServer(s, rt)
		runtimeapi.RegisterImageServiceServer(s, fakeImages{})
	})
	ctx := context.Background()
	c, err := Dial(ctx, sock, 5*time.Second)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer func() { _ = c.Close() }()

	if err := c.ReopenContainerLog(ctx, "c1"); err != nil {
		t.Fatalf("ReopenContainerLog(c1): %v", err)
	}
	rt.mu.Lock()
	got := rt.reopened
	rt.mu.Unlock()
	if len(got) != 1 || got[0] != "c1" {
		t.Errorf("runtime saw reopens %q, want [c1]", got)
	}

	err = c.ReopenContainerLog(ctx, "stopped")
	if s, ok := status.FromError(err); !ok || s.Code() != codes.FailedPrecondition {
		t.Errorf("ReopenContainerLog(stopped) = %v, want the runtime's FailedPrecondition", err)
	}

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.ReopenContainerLog(canceled, "c1"); status.Code(err) != codes.Canceled {
		t.Errorf("ReopenContainerLog with a canceled context = %v, want Canceled", err)
	}
}
