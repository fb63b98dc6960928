package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/crilog"
)

// The tests of terminationMessagePolicy FallbackToLogsOnError (podstatus.go). Their fakes are
// prefixed fb. k8s.io/cri-api/pkg/apis/testing's FakeRuntimeService is not used: its package
// imports testify and yaml.v3, which go.mod does not require; fbRuntime is the part of it
// that GetPodStatus reads (containers by label, statuses with every field, LogPath included).
var (
	_ SandboxService   = (*fbRuntime)(nil)
	_ ContainerService = (*fbRuntime)(nil)
	_ ContainerReader  = (*fbRuntime)(nil)
	_ ImageService     = (*fbRuntime)(nil)
	_ Volumes          = (*fbVolumes)(nil)
	_ Recorder         = (*fbRecorder)(nil)
)

var errFbNotImplemented = errors.New("fb fake: not implemented")

// fbRuntime holds container statuses, as cri-api's FakeRuntimeService.Containers.
type fbRuntime struct {
	mu         sync.Mutex
	containers map[string]*runtimeapi.ContainerStatus
}

func (r *fbRuntime) ListContainers(_ context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*runtimeapi.Container
	for _, s := range r.containers {
		if !fbMatches(filter.GetLabelSelector(), s.GetLabels()) {
			continue
		}
		out = append(out, &runtimeapi.Container{Id: s.Id, PodSandboxId: "fb-sandbox", Metadata: s.Metadata, Image: s.Image,
			ImageRef: s.ImageRef, State: s.State, CreatedAt: s.CreatedAt, Labels: s.Labels, Annotations: s.Annotations})
	}
	return out, nil
}

func (r *fbRuntime) ContainerStatus(_ context.Context, id string, _ bool) (*runtimeapi.ContainerStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.containers[id]
	if !ok {
		return nil, fmt.Errorf("container %q not found", id)
	}
	return &runtimeapi.ContainerStatusResponse{Status: proto.Clone(s).(*runtimeapi.ContainerStatus)}, nil
}

func fbMatches(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func (r *fbRuntime) ListPodSandbox(context.Context, *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	return nil, nil
}

func (r *fbRuntime) PodSandboxStatus(context.Context, string, bool) (*runtimeapi.PodSandboxStatusResponse, error) {
	return nil, errFbNotImplemented
}

func (r *fbRuntime) RunPodSandbox(context.Context, *runtimeapi.PodSandboxConfig, string) (string, error) {
	return "", errFbNotImplemented
}

func (r *fbRuntime) StopPodSandbox(context.Context, string) error   { return errFbNotImplemented }
func (r *fbRuntime) RemovePodSandbox(context.Context, string) error { return errFbNotImplemented }

func (r *fbRuntime) CreateContainer(context.Context, string, *runtimeapi.ContainerConfig, *runtimeapi.PodSandboxConfig) (string, error) {
	return "", errFbNotImplemented
}

func (r *fbRuntime) StartContainer(context.Context, string) error       { return errFbNotImplemented }
func (r *fbRuntime) StopContainer(context.Context, string, int64) error { return errFbNotImplemented }
func (r *fbRuntime) RemoveContainer(context.Context, string) error      { return errFbNotImplemented }
func (r *fbRuntime) UpdateContainerResources(context.Context, string, *runtimeapi.LinuxContainerResources) error {
	return errFbNotImplemented
}

func (r *fbRuntime) PullImage(context.Context, *runtimeapi.ImageSpec, *runtimeapi.AuthConfig, *runtimeapi.PodSandboxConfig) (string, error) {
	return "", errFbNotImplemented
}

func (r *fbRuntime) ImageStatus(context.Context, *runtimeapi.ImageSpec, bool) (*runtimeapi.ImageStatusResponse, error) {
	return nil, errFbNotImplemented
}

// fbTermMsg is what ReadTerminationMessage returns for a container.
type fbTermMsg struct {
	msg string
	err error
}

// fbVolumes answers ReadTerminationMessage from a map (absent: fs.ErrNotExist, as the volume
// manager answers for a container without a termination message file) and counts the reads.
type fbVolumes struct {
	mu    sync.Mutex
	msgs  map[string]fbTermMsg // by container name
	reads int
}

func (f *fbVolumes) SetUp(*v1.Pod) (map[string]string, error) { return nil, errFbNotImplemented }

func (f *fbVolumes) Mounts(*v1.Pod, *v1.Container, map[string]string, map[string]*runtimeapi.ImageSpec, int, []string) ([]*runtimeapi.Mount, error) {
	return nil, errFbNotImplemented
}

func (f *fbVolumes) ReadTerminationMessage(_ types.UID, name string, _ int) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	m, ok := f.msgs[name]
	if !ok {
		return "", fmt.Errorf("open /var/lib/nodelet/pods/fb/%s: %w", name, fs.ErrNotExist)
	}
	return m.msg, m.err
}

func (f *fbVolumes) TearDown(types.UID) error { return nil }

type fbRecorder struct{}

func (fbRecorder) Eventf(*v1.Pod, string, string, string, ...any) {}

// fbContainer is an exited container of pod fb-uid as the runtime reports it.
type fbContainer struct {
	name     string
	policy   v1.TerminationMessagePolicy // "": no annotation
	state    runtimeapi.ContainerState
	exitCode int32
	reason   string
	message  string // the runtime's
	logPath  string
}

// fbPodStatus serves the containers from a runtime and returns GetPodStatus's statuses by name.
func fbPodStatus(t *testing.T, vol *fbVolumes, cs ...fbContainer) map[string]*container.Status {
	t.Helper()
	rt := &fbRuntime{containers: map[string]*runtimeapi.ContainerStatus{}}
	for i, c := range cs {
		annotations := map[string]string{container.ContainerRestartCountAnnotation: "0", container.ContainerHashAnnotation: "1"}
		if c.policy != "" {
			annotations[container.ContainerTerminationMessagePolicyAnnotation] = string(c.policy)
		}
		id := fmt.Sprintf("fb-%d", i)
		rt.containers[id] = &runtimeapi.ContainerStatus{
			Id: id, Metadata: &runtimeapi.ContainerMetadata{Name: c.name}, State: c.state,
			CreatedAt: int64(i + 1), StartedAt: int64(i + 2), FinishedAt: int64(i + 3),
			ExitCode: c.exitCode, Reason: c.reason, Message: c.message, LogPath: c.logPath,
			Image:       &runtimeapi.ImageSpec{Image: "sha256:fb"},
			Labels:      map[string]string{container.PodUIDLabel: "fb-uid", container.ContainerNameLabel: c.name},
			Annotations: annotations,
		}
	}
	m, err := New(Config{}, Deps{Sandboxes: rt, Containers: rt, Reader: rt, Images: rt, Volumes: vol,
		Recorder: fbRecorder{}, Clock: testingclock.NewFakeClock(time.Unix(0, 0))})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := m.GetPodStatus(context.Background(), "fb-uid", "web", "default")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*container.Status{}
	for _, s := range ps.ContainerStatuses {
		out[s.Name] = s
	}
	if len(out) != len(cs) {
		t.Fatalf("%d statuses, want %d", len(out), len(cs))
	}
	return out
}

// fbWriteLog writes a CRI log file and returns its path.
func fbWriteLog(t *testing.T, records ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app", "0.log")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(records, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func fbRec(stream, tag, content string) string {
	return "2026-03-01T12:00:00.123456789Z " + stream + " " + tag + " " + content + "\n"
}

func TestFallbackToLogsOnError(t *testing.T) {
	const fallback, file = v1.TerminationMessageFallbackToLogsOnError, v1.TerminationMessageReadFile
	exited := runtimeapi.ContainerState_CONTAINER_EXITED
	logPath := fbWriteLog(t,
		fbRec("stdout", "F", "starting"),
		fbRec("stderr", "P", "panic: "),
		fbRec("stdout", "F", "still running"),
		fbRec("stderr", "F", "config missing"),
	)
	const tail = "starting\nstill running\npanic: config missing\n"
	missing := filepath.Join(t.TempDir(), "gone", "0.log")

	cases := []struct {
		name   string
		c      fbContainer
		file   *fbTermMsg // nil: no file
		want   string
		noRead bool // the termination message file is not read
	}{
		{name: "no file: the log's end", c: fbContainer{policy: fallback, exitCode: 1, reason: "Error"}, want: tail},
		{name: "empty file: the log's end", c: fbContainer{policy: fallback, exitCode: 1, reason: "Error"}, file: &fbTermMsg{}, want: tail},
		{name: "the file wins", c: fbContainer{policy: fallback, exitCode: 1, reason: "Error"}, file: &fbTermMsg{msg: "bad config"}, want: "bad config"},
		{name: "exit code 0: no fallback", c: fbContainer{policy: fallback, exitCode: 0, reason: "Completed"}, want: ""},
		{name: "exit code 0 with a file", c: fbContainer{policy: fallback, exitCode: 0, reason: "Completed"}, file: &fbTermMsg{msg: "done"}, want: "done"},
		{name: "OOMKilled falls back", c: fbContainer{policy: fallback, exitCode: 137, reason: "OOMKilled"}, want: tail},
		{name: "ContainerCannotRun: no logs to fall back to", c: fbContainer{policy: fallback, exitCode: 128, reason: "ContainerCannotRun"}, want: ""},
		{name: "policy File", c: fbContainer{policy: file, exitCode: 1, reason: "Error"}, want: ""},
		{name: "no policy annotation", c: fbContainer{exitCode: 1, reason: "Error"}, want: ""},
		{name: "runtime message and the log's end, as upstream",
			c: fbContainer{policy: fallback, exitCode: 1, reason: "Error", message: "from the runtime"}, want: "from the runtime: " + tail},
		{name: "runtime message and the file, joined as upstream",
			c: fbContainer{policy: fallback, exitCode: 1, reason: "Error", message: "from the runtime"}, file: &fbTermMsg{msg: "from the file"}, want: "from the runtime: from the file"},
		{name: "runtime message and the file, policy File", c: fbContainer{policy: file, exitCode: 1, reason: "Error", message: "from the runtime"},
			file: &fbTermMsg{msg: "from the file"}, want: "from the runtime: from the file"},
		{name: "file read error: no fallback",
			c:    fbContainer{policy: fallback, exitCode: 1, reason: "Error"},
			file: &fbTermMsg{msg: "Error on reading termination log /x: permission denied", err: fs.ErrPermission},
			want: "Error on reading termination log /x: permission denied"},
		{name: "log file missing",
			c:    fbContainer{policy: fallback, exitCode: 1, reason: "Error", logPath: missing},
			want: fmt.Sprintf("Error on reading termination message from logs: failed to open log file %q: open %s: no such file or directory", missing, missing)},
		{name: "running: nothing read", c: fbContainer{policy: fallback, state: runtimeapi.ContainerState_CONTAINER_RUNNING}, want: "", noRead: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.name = "app"
			if c.state == runtimeapi.ContainerState_CONTAINER_CREATED { // unset
				c.state = exited
			}
			if c.logPath == "" {
				c.logPath = logPath
			}
			vol := &fbVolumes{msgs: map[string]fbTermMsg{}}
			if tc.file != nil {
				vol.msgs["app"] = *tc.file
			}
			got := fbPodStatus(t, vol, c)["app"]
			if got.Message != tc.want {
				t.Errorf("message\n got %q\nwant %q", got.Message, tc.want)
			}
			if tc.noRead && vol.reads != 0 {
				t.Errorf("the termination message file was read %d times", vol.reads)
			}
			if got.ExitCode != int(tc.c.exitCode) || got.Reason != tc.c.reason {
				t.Errorf("exit code %d reason %q changed", got.ExitCode, got.Reason)
			}
		})
	}
}

// TestFallbackToLogsOnErrorBounds: the message is the last 80 lines, at most 2048 bytes, of
// a long log, as upstream reads it.
func TestFallbackToLogsOnErrorBounds(t *testing.T) {
	var records []string
	for i := range 200 {
		records = append(records, fbRec("stdout", "F", fmt.Sprintf("line %03d %s", i, strings.Repeat("x", 20))))
	}
	records = append(records, fbRec("stderr", "P", strings.Repeat("y", 3000)), fbRec("stderr", "F", "fatal"))
	short := fbWriteLog(t, records[:150]...)
	long := fbWriteLog(t, records...)
	st := fbPodStatus(t, &fbVolumes{},
		fbContainer{name: "short", policy: v1.TerminationMessageFallbackToLogsOnError, state: runtimeapi.ContainerState_CONTAINER_EXITED, exitCode: 2, reason: "Error", logPath: short},
		fbContainer{name: "long", policy: v1.TerminationMessageFallbackToLogsOnError, state: runtimeapi.ContainerState_CONTAINER_EXITED, exitCode: 2, reason: "Error", logPath: long},
	)

	// 80 lines of 30 bytes are more than 2048: the last 2048 bytes, the first line cut.
	msg := st["short"].Message
	if len(msg) != 2048 || !strings.HasSuffix(msg, "line 149 "+strings.Repeat("x", 20)+"\n") {
		t.Errorf("short log: %d bytes ending %q, want the last 2048 bytes", len(msg), msg[max(0, len(msg)-40):])
	}
	// A line joined from partial records longer than 2048 bytes: its end only.
	if want := strings.Repeat("y", 2048-len("fatal\n")) + "fatal\n"; st["long"].Message != want {
		t.Errorf("long log: %d bytes %q..., want the joined line's last 2048 bytes", len(st["long"].Message), st["long"].Message[:min(40, len(st["long"].Message))])
	}
	for name, path := range map[string]string{"short": short, "long": long} {
		want, err := crilog.Tail(path, 80, 2048)
		if err != nil || st[name].Message != want {
			t.Errorf("%s: the message is not crilog.Tail(path, 80, 2048): %v", name, err)
		}
	}
}
