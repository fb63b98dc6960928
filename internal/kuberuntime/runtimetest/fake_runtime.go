// Package runtimetest holds in-memory fakes of the CRI runtime and image services for the tests
// of the runtime manager (internal/kuberuntime).
//
// They follow k8s.io/cri-api/pkg/apis/testing (NewFakeRuntimeService, NewFakeImageService): the
// same method names, call log, InjectError queues, SetFakeImages and ID scheme
// (<name>_<namespace>_<uid>_<attempt> for sandboxes, <sandbox>_<name>_<attempt> for containers).
// That package cannot be imported by nodelet's tests without adding github.com/stretchr/testify
// and gopkg.in/yaml.v3 to go.mod, which its fake image service imports.
//
// Where a real runtime (containerd) behaves differently from cri-api's fakes, these fakes behave
// like the real runtime, because the manager depends on it:
//   - timestamps come from an injected clock and strictly increase, so that "newest first" is
//     well defined and back-off tests can use a fake clock;
//   - unknown IDs give gRPC NotFound (the manager tolerates NotFound only);
//   - a second container or sandbox with the same name and attempt is AlreadyExists, and starting
//     a container that is not in the created state fails;
//   - StopPodSandbox stops the sandbox's containers, RemovePodSandbox removes them, and both
//     removals are idempotent.
package runtimetest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
)

// DefaultPodIP is the IP a pod-network sandbox gets unless FakeRuntime.PodIPs says otherwise.
const DefaultPodIP = "10.88.0.2"

// StopCall is one StopContainer or StopPodSandbox call, in call order.
type StopCall struct {
	ID      string
	Timeout int64 // StopContainer's timeout in seconds; 0 for a sandbox
	Sandbox bool
}

type fakeSandbox struct {
	status *runtimeapi.PodSandboxStatus
	config *runtimeapi.PodSandboxConfig
}

type fakeContainer struct {
	status    *runtimeapi.ContainerStatus
	sandboxID string
	config    *runtimeapi.ContainerConfig
}

// FakeRuntime fakes the CRI RuntimeService calls the manager makes. It is safe for concurrent use.
type FakeRuntime struct {
	clock clock.PassiveClock

	// OnStop, when set, runs inside StopContainer (without the fake's lock) before the container
	// exits, e.g. to advance a fake clock by the timeout, as a container that ignores SIGTERM.
	OnStop func(id string, timeout int64)

	mu         sync.Mutex
	called     []string
	errors     map[string][]error
	sandboxes  map[string]*fakeSandbox
	containers map[string]*fakeContainer
	stops      []StopCall
	removed    []string
	lastTS     int64
	podIPs     []string
}

// NewFakeRuntime returns an empty runtime whose timestamps come from clk.
func NewFakeRuntime(clk clock.PassiveClock) *FakeRuntime {
	return &FakeRuntime{
		clock:      clk,
		errors:     map[string][]error{},
		sandboxes:  map[string]*fakeSandbox{},
		containers: map[string]*fakeContainer{},
		podIPs:     []string{DefaultPodIP},
	}
}

// SetPodIPs sets the IPs of the pod-network sandboxes created from now on (none: no IP).
func (r *FakeRuntime) SetPodIPs(ips ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.podIPs = ips
}

// InjectError makes the next call of method (e.g. "StartContainer") fail with err; errors
// queue up, one per call.
func (r *FakeRuntime) InjectError(method string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors[method] = append(r.errors[method], err)
}

// GetCalls returns the method names called so far, in order.
func (r *FakeRuntime) GetCalls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.called...)
}

// CallCount returns how many times method was called.
func (r *FakeRuntime) CallCount(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.called {
		if c == method {
			n++
		}
	}
	return n
}

// ResetCalls forgets the calls, stops and removals recorded so far.
func (r *FakeRuntime) ResetCalls() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.called, r.stops, r.removed = nil, nil, nil
}

// Stops returns the StopContainer and StopPodSandbox calls, in order.
func (r *FakeRuntime) Stops() []StopCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]StopCall(nil), r.stops...)
}

// Removed returns the IDs passed to RemoveContainer, in order.
func (r *FakeRuntime) Removed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.removed...)
}

// call records a call and pops its injected error; r.mu must be held.
func (r *FakeRuntime) call(method string) error {
	r.called = append(r.called, method)
	errs := r.errors[method]
	if len(errs) == 0 {
		return nil
	}
	r.errors[method] = errs[1:]
	return errs[0]
}

// now returns a strictly increasing timestamp from the clock; r.mu must be held.
func (r *FakeRuntime) now() int64 {
	ts := r.clock.Now().UnixNano()
	if ts <= r.lastTS {
		ts = r.lastTS + 1
	}
	r.lastTS = ts
	return ts
}

func notFound(kind, id string) error {
	return status.Errorf(codes.NotFound, "%s %q not found", kind, id)
}

// SandboxID is the ID RunPodSandbox gives a sandbox with this metadata.
func SandboxID(md *runtimeapi.PodSandboxMetadata) string {
	return fmt.Sprintf("%s_%s_%s_%d", md.GetName(), md.GetNamespace(), md.GetUid(), md.GetAttempt())
}

// ContainerID is the ID CreateContainer gives a container with this metadata in the sandbox.
func ContainerID(sandboxID string, md *runtimeapi.ContainerMetadata) string {
	return fmt.Sprintf("%s_%s_%d", sandboxID, md.GetName(), md.GetAttempt())
}

// RunPodSandbox creates a ready sandbox with the pod IPs (none on the host network).
func (r *FakeRuntime) RunPodSandbox(_ context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.call("RunPodSandbox"); err != nil {
		return "", err
	}
	id := SandboxID(config.GetMetadata())
	if _, ok := r.sandboxes[id]; ok {
		return "", status.Errorf(codes.AlreadyExists, "sandbox name %q is reserved", id)
	}
	nsOpts := config.GetLinux().GetSecurityContext().GetNamespaceOptions()
	net := &runtimeapi.PodSandboxNetworkStatus{}
	if nsOpts.GetNetwork() != runtimeapi.NamespaceMode_NODE && len(r.podIPs) > 0 {
		net.Ip = r.podIPs[0]
		for _, ip := range r.podIPs[1:] {
			net.AdditionalIps = append(net.AdditionalIps, &runtimeapi.PodIP{Ip: ip})
		}
	}
	st := &runtimeapi.PodSandboxStatus{
		Id:             id,
		Metadata:       config.GetMetadata(),
		State:          runtimeapi.PodSandboxState_SANDBOX_READY,
		CreatedAt:      r.now(),
		Network:        net,
		Linux:          &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{Options: nsOpts}},
		Labels:         config.GetLabels(),
		Annotations:    config.GetAnnotations(),
		RuntimeHandler: runtimeHandler,
	}
	r.sandboxes[id] = &fakeSandbox{status: proto.Clone(st).(*runtimeapi.PodSandboxStatus), config: proto.Clone(config).(*runtimeapi.PodSandboxConfig)}
	return id, nil
}

// StopPodSandbox makes the sandbox not ready and stops its containers.
func (r *FakeRuntime) StopPodSandbox(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.call("StopPodSandbox"); err != nil {
		return err
	}
	r.stops = append(r.stops, StopCall{ID: id, Sandbox: true})
	s, ok := r.sandboxes[id]
	if !ok {
		return notFound("sandbox", id)
	}
	s.status.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	for _, c := range r.containers {
		if c.sandboxID == id && c.status.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			r.exitLocked(c, 137, "Error")
		}
	}
	return nil
}

// RemovePodSandbox removes the sandbox and its containers; removing an unknown one succeeds.
func (r *FakeRuntime) RemovePodSandbox(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.call("RemovePodSandbox"); err != nil {
		return err
	}
	for cid, c := range r.containers {
		if c.sandboxID == id {
			delete(r.containers, cid)
		}
	}
	delete(r.sandboxes, id)
	return nil
}

// PodSandboxStatus returns a copy of the sandbox's status.
func (r *FakeRuntime) PodSandboxStatus(_ context.Context, id string, _ bool) (*runtimeapi.PodSandboxStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.call("PodSandboxStatus"); err != nil {
		return nil, err
	}
	s, ok := r.sandboxes[id]
	if !ok {
		return nil, notFound("sandbox", id)
	}
	return &runtimeapi.PodSandboxStatusResponse{Status: proto.Clone(s.status).(*runtimeapi.PodSandboxStatus)}, nil
}

// ListPodSandbox lists the sandboxes matching the filter's ID, state and labels.
func (r *FakeRuntime) ListPodSandbox(_ context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.call("ListPodSandbox"); err != nil {
		return nil, err
	}
	out := []*runtimeapi.PodSandbox{}
	for id, s := range r.sandboxes {
		st := s.status
		if filter != nil && ((filter.Id != "" && filter.Id != id) ||
			(filter.State != nil && filter.State.State != st.State) ||
			!labelsMatch(filter.LabelSelector, st.Labels)) {
			continue
		}
		out = append(out, proto.Clone(&runtimeapi.PodSandbox{Id: id, Metadata: st.Metadata, State: st.State,
			CreatedAt: st.CreatedAt, Labels: st.Labels, Annotations: st.Annotations, RuntimeHandler: st.RuntimeHandler}).(*runtimeapi.PodSandbox))
	}
	return out, nil
}

// CreateContainer creates a container in the created state.
func (r *FakeRuntime) CreateContainer(_ context.Context, sandboxID string, config *runtimeapi.ContainerConfig, _ *runtimeapi.PodSandboxConfig) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.call("CreateContainer"); err != nil {
		return "", err
	}
	if _, ok := r.sandboxes[sandboxID]; !ok {
		return "", notFound("sandbox", sandboxID)
	}
	id := ContainerID(sandboxID, config.GetMetadata())
	if _, ok := r.containers[id]; ok {
		return "", status.Errorf(codes.AlreadyExists, "container name %q is reserved", id)
	}
	st := &runtimeapi.ContainerStatus{
		Id:          id,
		Metadata:    config.GetMetadata(),
		State:       runtimeapi.ContainerState_CONTAINER_CREATED,
		CreatedAt:   r.now(),
		Image:       config.GetImage(),
		ImageRef:    config.GetImage().GetImage(),
		Labels:      config.GetLabels(),
		Annotations: config.GetAnnotations(),
		LogPath:     config.GetLogPath(),
	}
	if res := config.GetLinux().GetResources(); res != nil {
		st.Resources = &runtimeapi.ContainerResources{Linux: proto.Clone(res).(*runtimeapi.LinuxContainerResources)}
	}
	r.containers[id] = &fakeContainer{status: proto.Clone(st).(*runtimeapi.ContainerStatus), sandboxID: sandboxID,
		config: proto.Clone(config).(*runtimeapi.ContainerConfig)}
	return id, nil
}

// StartContainer runs a created container.
func (r *FakeRuntime) StartContainer(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.call("StartContainer"); err != nil {
		return err
	}
	c, ok := r.containers[id]
	if !ok {
		return notFound("container", id)
	}
	if c.status.State != runtimeapi.ContainerState_CONTAINER_CREATED {
		return status.Errorf(codes.FailedPrecondition, "container %q is in %s state", id, c.status.State)
	}
	c.status.State = runtimeapi.ContainerState_CONTAINER_RUNNING
	c.status.StartedAt = r.now()
	return nil
}

// UpdateContainerResources replaces a container's resources, which its status then reports,
// as containerd does.
func (r *FakeRuntime) UpdateContainerResources(_ context.Context, id string, linux *runtimeapi.LinuxContainerResources) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.call("UpdateContainerResources"); err != nil {
		return err
	}
	c, ok := r.containers[id]
	if !ok {
		return notFound("container", id)
	}
	c.status.Resources = &runtimeapi.ContainerResources{Linux: proto.Clone(linux).(*runtimeapi.LinuxContainerResources)}
	return nil
}

// StopContainer stops a container: it exits with 137 if it was running.
func (r *FakeRuntime) StopContainer(_ context.Context, id string, timeout int64) error {
	r.mu.Lock()
	if err := r.call("StopContainer"); err != nil {
		r.mu.Unlock()
		return err
	}
	r.stops = append(r.stops, StopCall{ID: id, Timeout: timeout})
	_, ok := r.containers[id]
	hook := r.OnStop
	r.mu.Unlock()
	if !ok {
		return notFound("container", id)
	}
	if hook != nil {
		hook(id, timeout)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.containers[id]; ok && c.status.State != runtimeapi.ContainerState_CONTAINER_EXITED {
		r.exitLocked(c, 137, "Error")
	}
	return nil
}

// RemoveContainer removes a container; removing an unknown one succeeds.
func (r *FakeRuntime) RemoveContainer(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.call("RemoveContainer"); err != nil {
		return err
	}
	r.removed = append(r.removed, id)
	delete(r.containers, id)
	return nil
}

// ListContainers lists the containers matching the filter's ID, sandbox, state and labels.
func (r *FakeRuntime) ListContainers(_ context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.call("ListContainers"); err != nil {
		return nil, err
	}
	out := []*runtimeapi.Container{}
	for id, c := range r.containers {
		st := c.status
		if filter != nil && ((filter.Id != "" && filter.Id != id) ||
			(filter.PodSandboxId != "" && filter.PodSandboxId != c.sandboxID) ||
			(filter.State != nil && filter.State.State != st.State) ||
			!labelsMatch(filter.LabelSelector, st.Labels)) {
			continue
		}
		out = append(out, proto.Clone(&runtimeapi.Container{Id: id, PodSandboxId: c.sandboxID, Metadata: st.Metadata,
			Image: st.Image, ImageRef: st.ImageRef, State: st.State, CreatedAt: st.CreatedAt,
			Labels: st.Labels, Annotations: st.Annotations}).(*runtimeapi.Container))
	}
	return out, nil
}

// ContainerStatus returns a copy of the container's status.
func (r *FakeRuntime) ContainerStatus(_ context.Context, id string, _ bool) (*runtimeapi.ContainerStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.call("ContainerStatus"); err != nil {
		return nil, err
	}
	c, ok := r.containers[id]
	if !ok {
		return nil, notFound("container", id)
	}
	return &runtimeapi.ContainerStatusResponse{Status: proto.Clone(c.status).(*runtimeapi.ContainerStatus)}, nil
}

func labelsMatch(selector, labels map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// exitLocked makes a container exited now; r.mu must be held.
func (r *FakeRuntime) exitLocked(c *fakeContainer, code int32, reason string) {
	c.status.State = runtimeapi.ContainerState_CONTAINER_EXITED
	c.status.FinishedAt = r.now()
	c.status.ExitCode = code
	c.status.Reason = reason
}

// ExitContainer makes a container exit with the code at the given time (the clock's now if
// zero), as the runtime reports a container whose process ended.
func (r *FakeRuntime) ExitContainer(id string, code int32, at time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[id]
	if !ok {
		return notFound("container", id)
	}
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	r.exitLocked(c, code, reason)
	if !at.IsZero() {
		c.status.FinishedAt = at.UnixNano()
	}
	return nil
}

// SetSandboxState changes a sandbox's state, as when its pause process dies.
func (r *FakeRuntime) SetSandboxState(id string, state runtimeapi.PodSandboxState) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sandboxes[id]
	if !ok {
		return notFound("sandbox", id)
	}
	s.status.State = state
	return nil
}

// AddSandbox stores a sandbox as is (ID, labels, state, creation time), as if created earlier.
func (r *FakeRuntime) AddSandbox(st *runtimeapi.PodSandboxStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sandboxes[st.Id] = &fakeSandbox{status: proto.Clone(st).(*runtimeapi.PodSandboxStatus)}
}

// AddContainer stores a container of a sandbox as is, as if created earlier.
func (r *FakeRuntime) AddContainer(sandboxID string, st *runtimeapi.ContainerStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.containers[st.Id] = &fakeContainer{status: proto.Clone(st).(*runtimeapi.ContainerStatus), sandboxID: sandboxID}
}

// Sandbox returns a copy of a sandbox's status and the config it was created with (nil for
// one added by AddSandbox), or nils.
func (r *FakeRuntime) Sandbox(id string) (*runtimeapi.PodSandboxStatus, *runtimeapi.PodSandboxConfig) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sandboxes[id]
	if !ok {
		return nil, nil
	}
	var cfg *runtimeapi.PodSandboxConfig
	if s.config != nil {
		cfg = proto.Clone(s.config).(*runtimeapi.PodSandboxConfig)
	}
	return proto.Clone(s.status).(*runtimeapi.PodSandboxStatus), cfg
}

// Container returns a copy of a container's status and the config it was created with (nil for
// one added by AddContainer), or nils.
func (r *FakeRuntime) Container(id string) (*runtimeapi.ContainerStatus, *runtimeapi.ContainerConfig) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[id]
	if !ok {
		return nil, nil
	}
	var cfg *runtimeapi.ContainerConfig
	if c.config != nil {
		cfg = proto.Clone(c.config).(*runtimeapi.ContainerConfig)
	}
	return proto.Clone(c.status).(*runtimeapi.ContainerStatus), cfg
}

// SandboxIDs and ContainerIDs list what the runtime holds, in no particular order.
func (r *FakeRuntime) SandboxIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.sandboxes))
	for id := range r.sandboxes {
		out = append(out, id)
	}
	return out
}

// ContainerIDs lists the containers the runtime holds, in no particular order.
func (r *FakeRuntime) ContainerIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.containers))
	for id := range r.containers {
		out = append(out, id)
	}
	return out
}
