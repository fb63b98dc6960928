package cri

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeRuntime answers Version and ListPodSandbox; every other call is
// Unimplemented.
type fakeRuntime struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	apiVersion string
}

func (f *fakeRuntime) Version(_ context.Context, req *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{
		Version:           req.GetVersion(),
		RuntimeName:       "fake",
		RuntimeVersion:    "1.2.3",
		RuntimeApiVersion: f.apiVersion,
	}, nil
}

func (f *fakeRuntime) ListPodSandbox(context.Context, *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	return &runtimeapi.ListPodSandboxResponse{Items: []*runtimeapi.PodSandbox{{Id: "sb1"}}}, nil
}

type fakeImages struct {
	runtimeapi.UnimplementedImageServiceServer
}

func (fakeImages) ListImages(context.Context, *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	return &runtimeapi.ListImagesResponse{Images: []*runtimeapi.Image{{Id: "img1"}}}, nil
}

// serve starts a gRPC server on a unix socket in a temporary directory and
// returns the socket path. register adds services to the server.
func serve(t *testing.T, register func(*grpc.Server)) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "cri.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatalf("listen on %s: %v", sock, err)
	}
	srv := grpc.NewServer()
	register(srv)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return sock
}

func serveCRI(t *testing.T, apiVersion string) string {
	return serve(t, func(s *grpc.Server) {
		runtimeapi.RegisterRuntimeServiceServer(s, &fakeRuntime{apiVersion: apiVersion})
		runtimeapi.RegisterImageServiceServer(s, fakeImages{})
	})
}

func TestDial(t *testing.T) {
	sock := serveCRI(t, "v1")
	for _, endpoint := range []string{"unix://" + sock, sock} {
		t.Run(endpoint, func(t *testing.T) {
			ctx := context.Background()
			c, err := Dial(ctx, endpoint, 5*time.Second)
			if err != nil {
				t.Fatalf("Dial(%q): %v", endpoint, err)
			}
			defer func() {
				if err := c.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			if got := c.Endpoint(); got != endpoint {
				t.Errorf("Endpoint() = %q, want %q", got, endpoint)
			}
			if v := c.Version(); v.GetRuntimeName() != "fake" || v.GetRuntimeApiVersion() != "v1" || v.GetVersion() != kubeletAPIVersion {
				t.Errorf("Version() = %+v", v)
			}
			sbs, err := c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
			if err != nil || len(sbs.GetItems()) != 1 || sbs.GetItems()[0].GetId() != "sb1" {
				t.Errorf("ListPodSandbox = %v, %v", sbs, err)
			}
			imgs, err := c.Image.ListImages(ctx, &runtimeapi.ListImagesRequest{})
			if err != nil || len(imgs.GetImages()) != 1 || imgs.GetImages()[0].GetId() != "img1" {
				t.Errorf("ListImages = %v, %v", imgs, err)
			}
		})
	}
}

func TestDialNotCRIv1(t *testing.T) {
	tests := map[string]string{
		// A server without runtime.v1.RuntimeService answers Unimplemented.
		"no v1 service": serve(t, func(*grpc.Server) {}),
		// A runtime that claims an alpha API on the v1 service.
		"v1alpha2 api": serveCRI(t, "v1alpha2"),
	}
	for name, sock := range tests {
		t.Run(name, func(t *testing.T) {
			endpoint := "unix://" + sock
			c, err := Dial(context.Background(), endpoint, 5*time.Second)
			if err == nil {
				_ = c.Close()
				t.Fatal("Dial succeeded, want error")
			}
			if !errors.Is(err, ErrNotCRIv1) {
				t.Errorf("error %v does not wrap ErrNotCRIv1", err)
			}
			if !strings.Contains(err.Error(), endpoint) {
				t.Errorf("error %q does not name endpoint %q", err, endpoint)
			}
		})
	}
}

func TestDialNoServer(t *testing.T) {
	endpoint := "unix://" + filepath.Join(t.TempDir(), "missing.sock")
	start := time.Now()
	c, err := Dial(context.Background(), endpoint, 2*time.Second)
	if err == nil {
		_ = c.Close()
		t.Fatal("Dial succeeded, want error")
	}
	if errors.Is(err, ErrNotCRIv1) {
		t.Errorf("error %v wraps ErrNotCRIv1, want a connection error", err)
	}
	if !strings.Contains(err.Error(), endpoint) {
		t.Errorf("error %q does not name endpoint %q", err, endpoint)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Dial took %v, want at most the 2s timeout", d)
	}
}

func TestDialCanceledContext(t *testing.T) {
	sock := serveCRI(t, "v1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if c, err := Dial(ctx, sock, 5*time.Second); err == nil {
		_ = c.Close()
		t.Fatal("Dial with a canceled context succeeded")
	}
}

func TestSocketPath(t *testing.T) {
	tests := []struct {
		endpoint, want string
		wantErr        bool
	}{
		{endpoint: "unix:///run/containerd/containerd.sock", want: "/run/containerd/containerd.sock"},
		{endpoint: "/run/crio/crio.sock", want: "/run/crio/crio.sock"},
		{endpoint: "unix://", wantErr: true},
		{endpoint: "", wantErr: true},
		{endpoint: "tcp://127.0.0.1:1234", wantErr: true},
		{endpoint: "npipe:////./pipe/containerd", wantErr: true},
	}
	for _, tc := range tests {
		got, err := socketPath(tc.endpoint)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("socketPath(%q) = %q, %v; want %q, error %v", tc.endpoint, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), tc.endpoint) {
			t.Errorf("socketPath(%q) error %q does not name the endpoint", tc.endpoint, err)
		}
	}
}
