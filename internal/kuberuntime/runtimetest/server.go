package runtimetest

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Server serves a FakeRuntime and a FakeImages over CRI v1 gRPC on a unix socket, so that
// code dialing a runtime endpoint (the whole agent) can be tested without containerd. Calls the
// fakes do not model answer with an empty list (stats) or Unimplemented (container events, so
// the PLEG relists; streaming).
type Server struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer

	RuntimeName, RuntimeVersion string // what Version answers
	// Config is what RuntimeConfig answers; nil: codes.Unimplemented, as an older runtime.
	Config  *runtimeapi.RuntimeConfigResponse
	Runtime *FakeRuntime
	Images  *FakeImages
	Execs   *FakeExec
}

var (
	_ runtimeapi.RuntimeServiceServer = (*Server)(nil)
	_ runtimeapi.ImageServiceServer   = (*Server)(nil)
)

// Serve starts s on a socket in a temporary directory and returns its endpoint
// (unix:///...); the server stops when the test ends.
func (s *Server) Serve(t testing.TB) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatalf("listen on %s: %v", sock, err)
	}
	g := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(g, s)
	runtimeapi.RegisterImageServiceServer(g, s)
	go func() { _ = g.Serve(l) }()
	t.Cleanup(g.Stop)
	return "unix://" + sock
}

func (s *Server) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: s.RuntimeName, RuntimeVersion: s.RuntimeVersion, RuntimeApiVersion: "v1"}, nil
}

func (s *Server) RuntimeConfig(ctx context.Context, r *runtimeapi.RuntimeConfigRequest) (*runtimeapi.RuntimeConfigResponse, error) {
	if s.Config == nil {
		return s.UnimplementedRuntimeServiceServer.RuntimeConfig(ctx, r)
	}
	return s.Config, nil
}

func (s *Server) Status(context.Context, *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true}, {Type: runtimeapi.NetworkReady, Status: true}}}}, nil
}

func (s *Server) RunPodSandbox(ctx context.Context, r *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	id, err := s.Runtime.RunPodSandbox(ctx, r.GetConfig(), r.GetRuntimeHandler())
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: id}, err
}

func (s *Server) StopPodSandbox(ctx context.Context, r *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	return &runtimeapi.StopPodSandboxResponse{}, s.Runtime.StopPodSandbox(ctx, r.GetPodSandboxId())
}

func (s *Server) RemovePodSandbox(ctx context.Context, r *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	return &runtimeapi.RemovePodSandboxResponse{}, s.Runtime.RemovePodSandbox(ctx, r.GetPodSandboxId())
}

func (s *Server) PodSandboxStatus(ctx context.Context, r *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	return s.Runtime.PodSandboxStatus(ctx, r.GetPodSandboxId(), r.GetVerbose())
}

func (s *Server) ListPodSandbox(ctx context.Context, r *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	items, err := s.Runtime.ListPodSandbox(ctx, r.GetFilter())
	return &runtimeapi.ListPodSandboxResponse{Items: items}, err
}

func (s *Server) CreateContainer(ctx context.Context, r *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	id, err := s.Runtime.CreateContainer(ctx, r.GetPodSandboxId(), r.GetConfig(), r.GetSandboxConfig())
	return &runtimeapi.CreateContainerResponse{ContainerId: id}, err
}

func (s *Server) StartContainer(ctx context.Context, r *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	return &runtimeapi.StartContainerResponse{}, s.Runtime.StartContainer(ctx, r.GetContainerId())
}

func (s *Server) StopContainer(ctx context.Context, r *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	return &runtimeapi.StopContainerResponse{}, s.Runtime.StopContainer(ctx, r.GetContainerId(), r.GetTimeout())
}

func (s *Server) RemoveContainer(ctx context.Context, r *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	return &runtimeapi.RemoveContainerResponse{}, s.Runtime.RemoveContainer(ctx, r.GetContainerId())
}

func (s *Server) ListContainers(ctx context.Context, r *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	items, err := s.Runtime.ListContainers(ctx, r.GetFilter())
	return &runtimeapi.ListContainersResponse{Containers: items}, err
}

func (s *Server) ContainerStatus(ctx context.Context, r *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	return s.Runtime.ContainerStatus(ctx, r.GetContainerId(), r.GetVerbose())
}

func (s *Server) UpdateContainerResources(ctx context.Context, r *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	return &runtimeapi.UpdateContainerResourcesResponse{}, s.Runtime.UpdateContainerResources(ctx, r.GetContainerId(), r.GetLinux())
}

func (s *Server) ExecSync(ctx context.Context, r *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	if s.Execs == nil {
		return nil, status.Error(codes.Unimplemented, "no FakeExec")
	}
	stdout, stderr, code, err := s.Execs.ExecSync(ctx, r.GetContainerId(), r.GetCmd(), 0)
	return &runtimeapi.ExecSyncResponse{Stdout: stdout, Stderr: stderr, ExitCode: code}, err
}

func (s *Server) ListContainerStats(context.Context, *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	return &runtimeapi.ListContainerStatsResponse{}, nil
}

func (s *Server) ListPodSandboxStats(context.Context, *runtimeapi.ListPodSandboxStatsRequest) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	return &runtimeapi.ListPodSandboxStatsResponse{}, nil
}

func (s *Server) ImageStatus(ctx context.Context, r *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	return s.Images.ImageStatus(ctx, r.GetImage(), r.GetVerbose())
}

func (s *Server) PullImage(ctx context.Context, r *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	ref, err := s.Images.PullImage(ctx, r.GetImage(), r.GetAuth(), r.GetSandboxConfig())
	return &runtimeapi.PullImageResponse{ImageRef: ref}, err
}

func (s *Server) ListImages(context.Context, *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	return &runtimeapi.ListImagesResponse{}, nil
}

func (s *Server) RemoveImage(_ context.Context, r *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	s.Images.RemoveImage(r.GetImage().GetImage())
	return &runtimeapi.RemoveImageResponse{}, nil
}

func (s *Server) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	return &runtimeapi.ImageFsInfoResponse{}, nil
}
