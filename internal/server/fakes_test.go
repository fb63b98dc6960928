package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodelet/nodelet/internal/testharness/testclock"
)

// fakePods is a PodSource whose pods a test sets, also while a request runs.
type fakePods struct {
	mu   sync.Mutex
	pods []*v1.Pod
}

var _ PodSource = (*fakePods)(nil)

func (f *fakePods) Pods() []*v1.Pod {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*v1.Pod(nil), f.pods...)
}

func (f *fakePods) set(pods ...*v1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pods = pods
}

// fakeCheck is a HealthCheck failing with err when set.
type fakeCheck struct {
	name string
	err  error
}

var _ HealthCheck = (*fakeCheck)(nil)

func (c *fakeCheck) Name() string { return c.name }
func (c *fakeCheck) Check() error { return c.err }

// fakeLogs is a LogLocator laid out as the kubelet's: <root>/<ns>_<name>_<uid>/<container>.
type fakeLogs struct {
	root string
	uids map[string]types.UID // "ns/name" -> uid
}

var _ LogLocator = (*fakeLogs)(nil)

func (f *fakeLogs) ContainerLogDir(namespace, podName, container string) (string, bool) {
	uid, ok := f.uids[namespace+"/"+podName]
	if !ok {
		return "", false
	}
	return filepath.Join(f.root, fmt.Sprintf("%s_%s_%s", namespace, podName, uid), container), true
}

// t0 is the tests' "now".
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// rec formats one CRI log record: at is relative to t0.
func rec(at time.Duration, stream, tag, content string) string {
	return fmt.Sprintf("%s %s %s %s\n", t0.Add(at).Format(time.RFC3339Nano), stream, tag, content)
}

// env is a server on a fake pod source, a temp log dir and a fake clock.
type env struct {
	t     *testing.T
	pods  *fakePods
	logs  *fakeLogs
	clock *testclock.Armed // a followed log arms a timer each time it waits for its next check
	srv   *Server
}

func newEnv(t *testing.T, checks ...HealthCheck) *env {
	t.Helper()
	e := &env{
		t:     t,
		pods:  &fakePods{},
		logs:  &fakeLogs{root: t.TempDir(), uids: map[string]types.UID{}},
		clock: testclock.NewArmed(t0),
	}
	srv, err := New(Config{Address: "127.0.0.1:0", Clock: e.clock}, Deps{Pods: e.pods, Checks: checks, Logs: e.logs})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	return e
}

// addPod registers a pod for the log locator and the pod source.
func (e *env) addPod(p *v1.Pod) {
	e.logs.uids[p.Namespace+"/"+p.Name] = p.UID
	e.pods.set(append(e.pods.Pods(), p)...)
}

// writeLog writes (replaces) <dir of container>/<attempt>.log.
func (e *env) writeLog(p *v1.Pod, container string, attempt int, records ...string) string {
	e.t.Helper()
	dir, _ := e.logs.ContainerLogDir(p.Namespace, p.Name, container)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%d.log", attempt))
	if err := os.WriteFile(path, []byte(strings.Join(records, "")), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return path
}

func appendFile(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

// podWith builds a pod in namespace "default" with the given containers (all running, attempt
// restarts, with a previous terminated instance when restarts > 0).
func podWith(name string, restarts int32, containers ...string) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
	}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: c, Image: "busybox"})
		st := v1.ContainerStatus{
			Name:         c,
			RestartCount: restarts,
			ContainerID:  fmt.Sprintf("containerd://%s-%d", c, restarts),
			State:        v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}},
		}
		if restarts > 0 {
			st.LastTerminationState.Terminated = &v1.ContainerStateTerminated{
				ExitCode: 1, ContainerID: fmt.Sprintf("containerd://%s-%d", c, restarts-1),
			}
		}
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, st)
	}
	return p
}

var errBroken = errors.New("broken")
