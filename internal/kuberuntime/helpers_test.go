package kuberuntime

// The test harness: a Manager over the CRI fakes of runtimetest, a fake volume manager and
// event recorder, a fake clock, and pod builders.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/kuberuntime/criconfig"
	"github.com/nodelet/nodelet/internal/kuberuntime/runtimetest"
	"github.com/nodelet/nodelet/internal/prober/probeview"
)

// The fakes satisfy the manager's interfaces.
var (
	_ SandboxService   = (*runtimetest.FakeRuntime)(nil)
	_ ContainerService = (*runtimetest.FakeRuntime)(nil)
	_ ContainerReader  = (*runtimetest.FakeRuntime)(nil)
	_ ImageService     = (*runtimetest.FakeImages)(nil)
	_ Volumes          = (*fakeVolumes)(nil)
	_ Recorder         = (*fakeRecorder)(nil)
)

// fakeVolumes records what the manager asks of the volume manager.
type fakeVolumes struct {
	mu        sync.Mutex
	setUpErr  error
	mountsErr error
	setUps    int
	mounts    []mountCall
	termMsgs  map[string]string // by "<container>/<restartCount>"
	tornDown  []types.UID
}

type mountCall struct {
	container    string
	restartCount int
	podIPs       []string
	images       map[string]*runtimeapi.ImageSpec
}

func (f *fakeVolumes) SetUp(*v1.Pod) (map[string]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setUps++
	if f.setUpErr != nil {
		return nil, f.setUpErr
	}
	return map[string]string{"data": "/var/lib/nodelet/pods/data"}, nil
}

func (f *fakeVolumes) Mounts(_ *v1.Pod, c *v1.Container, _ map[string]string, images map[string]*runtimeapi.ImageSpec, restartCount int, podIPs []string) ([]*runtimeapi.Mount, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mounts = append(f.mounts, mountCall{container: c.Name, restartCount: restartCount, podIPs: podIPs, images: images})
	if f.mountsErr != nil {
		return nil, f.mountsErr
	}
	return []*runtimeapi.Mount{{ContainerPath: "/etc/hosts", HostPath: "/var/lib/nodelet/hosts"}}, nil
}

func (f *fakeVolumes) ReadTerminationMessage(_ types.UID, name string, restartCount int) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	msg, ok := f.termMsgs[fmt.Sprintf("%s/%d", name, restartCount)]
	if !ok {
		return "", os.ErrNotExist
	}
	return msg, nil
}

func (f *fakeVolumes) TearDown(uid types.UID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tornDown = append(f.tornDown, uid)
	return nil
}

// fakeRecorder keeps events and formats them as client-go's recorder does, when read. (It keeps
// the format and the arguments apart so that vet does not take Eventf for a printf wrapper.)
type fakeRecorder struct {
	mu     sync.Mutex
	events []recordedEvent
	// onEvent, when set, is called with each event's reason after it is recorded (set it before
	// the manager records anything).
	onEvent func(reason string)
}

type recordedEvent struct {
	eventType, reason, format string
	args                      []any
}

func (r *fakeRecorder) Eventf(_ *v1.Pod, eventType, reason, messageFmt string, args ...any) {
	r.mu.Lock()
	r.events = append(r.events, recordedEvent{eventType, reason, messageFmt, args})
	hook := r.onEvent
	r.mu.Unlock()
	if hook != nil {
		hook(reason)
	}
}

// all returns the events as "<type> <reason> <message>".
func (r *fakeRecorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.events))
	for _, e := range r.events {
		out = append(out, e.eventType+" "+e.reason+" "+fmt.Sprintf(e.format, e.args...))
	}
	return out
}

// messages returns the messages of the events with the reason.
func (r *fakeRecorder) messages(reason string) []string {
	var out []string
	for _, e := range r.all() {
		if f := strings.SplitN(e, " ", 3); f[1] == reason {
			out = append(out, f[2])
		}
	}
	return out
}

// has reports whether an event with the reason was recorded.
func (r *fakeRecorder) has(reason string) bool { return len(r.messages(reason)) > 0 }

// TestMain keeps klog's error logs of expected failures out of the test output.
func TestMain(m *testing.M) {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	os.Exit(m.Run())
}

// t0 is when every test starts.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// harness is a Manager over fakes.
type harness struct {
	t     *testing.T
	ctx   context.Context
	m     *Manager
	cfg   Config
	rt    *runtimetest.FakeRuntime
	img   *runtimetest.FakeImages
	vol   *fakeVolumes
	rec   *fakeRecorder
	clock *testingclock.FakeClock
}

// newHarness returns a manager whose runtime already has the images testImage and sidecarImage.
func newHarness(t *testing.T) *harness {
	t.Helper()
	clk := testingclock.NewFakeClock(t0)
	h := &harness{t: t, ctx: context.Background(), rt: runtimetest.NewFakeRuntime(clk), img: runtimetest.NewFakeImages(),
		vol: &fakeVolumes{}, rec: &fakeRecorder{}, clock: clk}
	h.img.SetFakeImages(testImage, sidecarImage)
	h.cfg = Config{NodeName: "node-a", PodLogsDir: t.TempDir(), SerializeImagePulls: true,
		ClusterDNS: criconfig.ClusterDNS{Servers: []string{"10.96.0.10"}, Domain: "cluster.local"}}
	m, err := New(h.cfg, Deps{Sandboxes: h.rt, Containers: h.rt, Reader: h.rt, Images: h.img,
		Volumes: h.vol, Recorder: h.rec, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	h.m = m
	return h
}

// status is the pod's status as the pod cache would hold it.
func (h *harness) status(pod *v1.Pod) *container.PodStatus {
	h.t.Helper()
	ps, err := h.m.GetPodStatus(h.ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		h.t.Fatalf("GetPodStatus: %v", err)
	}
	return ps
}

// sync runs SyncPod on the pod's current status.
func (h *harness) sync(pod *v1.Pod) SyncResult {
	h.t.Helper()
	return h.m.SyncPod(h.ctx, pod, h.status(pod), probeview.View{})
}

// mustSync runs SyncPod and fails the test on an error.
func (h *harness) mustSync(pod *v1.Pod) {
	h.t.Helper()
	if res := h.sync(pod); res.Err != nil {
		h.t.Fatalf("SyncPod: %v", res.Err)
	}
}

// sandboxID is the ID of the pod's sandbox with this attempt.
func sandboxID(pod *v1.Pod, attempt uint32) string {
	return runtimetest.SandboxID(&runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt})
}

// containerID is the ID of a container instance in the pod's first sandbox.
func containerID(pod *v1.Pod, name string, attempt uint32) string {
	return runtimetest.ContainerID(sandboxID(pod, 0), &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt})
}

// state returns the CRI state of a container, failing when it does not exist.
func (h *harness) state(id string) runtimeapi.ContainerState {
	h.t.Helper()
	st, _ := h.rt.Container(id)
	if st == nil {
		h.t.Fatalf("container %s does not exist; have %v", id, h.rt.ContainerIDs())
	}
	return st.State
}

// exit makes a container exit with the code now.
func (h *harness) exit(id string, code int32) {
	h.t.Helper()
	if err := h.rt.ExitContainer(id, code, h.clock.Now()); err != nil {
		h.t.Fatal(err)
	}
}

const (
	testImage    = "registry.local/app:1.0"
	sidecarImage = "registry.local/proxy:1.0"
)

// A podOpt either adds containers (shape) or changes the pod and its containers (mod); newPod
// applies every shape, adds the default main container "app" if there is none, then every mod.
type podOpt interface{ apply(*v1.Pod) }

type (
	shape func(*v1.Pod)
	mod   func(*v1.Pod)
)

func (f shape) apply(p *v1.Pod) { f(p) }
func (f mod) apply(p *v1.Pod)   { f(p) }

// newPod is a defaulted pod named "web" in "default" with the main containers (default "app").
func newPod(opts ...podOpt) *v1.Pod {
	grace := int64(30)
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", Labels: map[string]string{"app": "web"}},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, DNSPolicy: v1.DNSClusterFirst,
			TerminationGracePeriodSeconds: &grace},
	}
	for _, o := range opts {
		if s, ok := o.(shape); ok {
			s.apply(p)
		}
	}
	if len(p.Spec.Containers) == 0 {
		mains("app").apply(p)
	}
	for _, o := range opts {
		if m, ok := o.(mod); ok {
			m.apply(p)
		}
	}
	return p
}

func ctr(name, image string) v1.Container {
	return v1.Container{Name: name, Image: image, ImagePullPolicy: v1.PullIfNotPresent,
		TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: v1.TerminationMessageReadFile}
}

func mains(names ...string) podOpt {
	return shape(func(p *v1.Pod) {
		for _, n := range names {
			p.Spec.Containers = append(p.Spec.Containers, ctr(n, testImage))
		}
	})
}

func inits(names ...string) podOpt {
	return shape(func(p *v1.Pod) {
		for _, n := range names {
			p.Spec.InitContainers = append(p.Spec.InitContainers, ctr(n, testImage))
		}
	})
}

func sidecars(names ...string) podOpt {
	return shape(func(p *v1.Pod) {
		always := v1.ContainerRestartPolicyAlways
		for _, n := range names {
			c := ctr(n, sidecarImage)
			c.RestartPolicy = &always
			p.Spec.InitContainers = append(p.Spec.InitContainers, c)
		}
	})
}

func restartPolicy(rp v1.RestartPolicy) podOpt {
	return mod(func(p *v1.Pod) { p.Spec.RestartPolicy = rp })
}

func withContainer(name string, f func(*v1.Container)) podOpt {
	return mod(func(p *v1.Pod) {
		for _, list := range [][]v1.Container{p.Spec.InitContainers, p.Spec.Containers} {
			for i := range list {
				if list[i].Name == name {
					f(&list[i])
				}
			}
		}
	})
}

func resources(cpuReq, cpuLim, memReq, memLim string) podOpt {
	return mod(func(p *v1.Pod) {
		for i := range p.Spec.Containers {
			r := &p.Spec.Containers[i].Resources
			r.Requests, r.Limits = v1.ResourceList{}, v1.ResourceList{}
			set := func(l v1.ResourceList, name v1.ResourceName, v string) {
				if v != "" {
					l[name] = resource.MustParse(v)
				}
			}
			set(r.Requests, v1.ResourceCPU, cpuReq)
			set(r.Limits, v1.ResourceCPU, cpuLim)
			set(r.Requests, v1.ResourceMemory, memReq)
			set(r.Limits, v1.ResourceMemory, memLim)
		}
	})
}

// started lists the names of the pod's running containers, sorted.
func (h *harness) started(pod *v1.Pod) []string {
	h.t.Helper()
	var out []string
	for _, cs := range h.status(pod).ContainerStatuses {
		if cs.State == container.StateRunning {
			out = append(out, cs.Name)
		}
	}
	sort.Strings(out)
	return out
}

// restartAnnotation reads the restartCount annotation a container was created with.
func (h *harness) restartAnnotation(id string) string {
	h.t.Helper()
	_, cfg := h.rt.Container(id)
	if cfg == nil {
		h.t.Fatalf("container %s was not created; have %v", id, h.rt.ContainerIDs())
	}
	return cfg.GetAnnotations()[container.ContainerRestartCountAnnotation]
}

// containerError returns the ContainerError of the sync result, failing without one.
func containerError(t *testing.T, res SyncResult) *ContainerError {
	t.Helper()
	var ce *ContainerError
	if !errors.As(res.Err, &ce) {
		t.Fatalf("SyncPod error %v is not a ContainerError", res.Err)
	}
	return ce
}

func i64(v int64) *int64 { return &v }
