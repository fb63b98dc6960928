package prober

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// slowHealth answers no Check before the caller gives up.
type slowHealth struct {
	healthpb.UnimplementedHealthServer
}

func (slowHealth) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func serveGRPC(t *testing.T, register func(*grpc.Server)) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	register(s)
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
	return ln.Addr().(*net.TCPAddr).Port
}

func TestGRPCProbe(t *testing.T) {
	hs := health.NewServer()
	hs.SetServingStatus("up", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	port := serveGRPC(t, func(s *grpc.Server) { healthpb.RegisterHealthServer(s, hs) })
	slow := serveGRPC(t, func(s *grpc.Server) { healthpb.RegisterHealthServer(s, slowHealth{}) })
	bare := serveGRPC(t, func(*grpc.Server) {})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()

	const timeout = 500 * time.Millisecond
	cases := []struct {
		name    string
		port    int
		service string
		want    probeResult
		output  string
	}{
		{"serving", port, "up", probeSuccess, "service healthy"},
		{"server as a whole", port, "", probeSuccess, "service healthy"},
		{"not serving", port, "down", probeFailure, `service unhealthy (responded with "NOT_SERVING")`},
		{"unknown service", port, "nope", probeFailure, "error: health rpc probe failed: rpc error: code = NotFound desc = unknown service"},
		{"no answer in time", slow, "", probeFailure, "timeout: health rpc did not complete within 500ms"},
		{"no health service", bare, "", probeFailure, "error: this server does not implement the grpc health protocol (grpc.health.v1.Health)"},
		{"nothing listening", closed, "", probeFailure, "timeout: failed to connect service"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			out := grpcProbe(context.Background(), "127.0.0.1", tc.service, tc.port, timeout)
			if out.Result != tc.want || !strings.Contains(out.Output, tc.output) || out.Err != nil {
				t.Errorf("got %v %q %v, want %v containing %q", out.Result, out.Output, out.Err, tc.want, tc.output)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v: the timeout was not applied", d)
			}
		})
	}

	// Through runProbe: the pod IP, the service name.
	p := &v1.Probe{TimeoutSeconds: 1, ProbeHandler: v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: int32(port), Service: ptr.To("down")}}}
	if out := runProbe(context.Background(), nil, p, &v1.Pod{}, &v1.Container{Name: "app"}, "127.0.0.1", ""); out.Result != probeFailure {
		t.Errorf("runProbe grpc: %+v", out)
	}
	p.GRPC.Service = nil
	if out := runProbe(context.Background(), nil, p, &v1.Pod{}, &v1.Container{Name: "app"}, "127.0.0.1", ""); out.Result != probeSuccess {
		t.Errorf("runProbe grpc, no service: %+v", out)
	}
}
