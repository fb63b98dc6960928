package cri

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// eventRuntime serves Version and a GetContainerEvents stream that sends events, then either
// ends cleanly (end nil) or waits for the client to go away (end closed).
type eventRuntime struct {
	fakeRuntime
	events []*runtimeapi.ContainerEventResponse
	hold   bool
}

func (f *eventRuntime) GetContainerEvents(_ *runtimeapi.GetEventsRequest, s grpc.ServerStreamingServer[runtimeapi.ContainerEventResponse]) error {
	for _, e := range f.events {
		if err := s.Send(e); err != nil {
			return err
		}
	}
	if f.hold {
		<-s.Context().Done()
	}
	return nil
}

func dialEvents(t *testing.T, rt runtimeapi.RuntimeServiceServer) *Client {
	t.Helper()
	sock := serve(t, func(s *grpc.Server) { runtimeapi.RegisterRuntimeServiceServer(s, rt) })
	c, err := Dial(t.Context(), sock, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestGetContainerEventsDeliversThenEOF(t *testing.T) {
	c := dialEvents(t, &eventRuntime{fakeRuntime: fakeRuntime{apiVersion: "v1"}, events: []*runtimeapi.ContainerEventResponse{
		{ContainerId: "c1", ContainerEventType: runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT},
		{ContainerId: "c2", ContainerEventType: runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT},
	}})
	ch := make(chan *runtimeapi.ContainerEventResponse, 10)
	opened := 0
	err := c.GetContainerEvents(t.Context(), ch, func(runtimeapi.RuntimeService_GetContainerEventsClient) { opened++ })
	if !errors.Is(err, io.EOF) {
		t.Errorf("err = %v, want io.EOF wrapped", err)
	}
	if opened != 1 {
		t.Errorf("connected called %d times, want 1", opened)
	}
	if len(ch) != 2 || (<-ch).ContainerId != "c1" || (<-ch).ContainerId != "c2" {
		t.Errorf("events not delivered in order")
	}
}

func TestGetContainerEventsUnimplemented(t *testing.T) {
	c := dialEvents(t, &fakeRuntime{apiVersion: "v1"})
	err := c.GetContainerEvents(t.Context(), make(chan *runtimeapi.ContainerEventResponse), nil)
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("err = %v (code %v), want Unimplemented readable through the wrapping", err, status.Code(err))
	}
}

func TestGetContainerEventsEndsWithContext(t *testing.T) {
	c := dialEvents(t, &eventRuntime{fakeRuntime: fakeRuntime{apiVersion: "v1"}, hold: true,
		events: []*runtimeapi.ContainerEventResponse{{ContainerId: "c1"}, {ContainerId: "c2"}}})
	ctx, cancel := context.WithCancel(t.Context())
	ch := make(chan *runtimeapi.ContainerEventResponse) // nobody reads: the second send blocks
	done := make(chan error, 1)
	go func() { done <- c.GetContainerEvents(ctx, ch, nil) }()
	if e := <-ch; e.ContainerId != "c1" {
		t.Fatalf("first event %q", e.ContainerId)
	}
	cancel()
	if err := <-done; status.Code(err) != codes.Canceled && !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want cancellation", err)
	}
}
