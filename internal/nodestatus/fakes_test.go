package nodestatus

import (
	"context"
	"fmt"
	"github.com/nodelet/nodelet/internal/fakekube"
	"net"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
)

const (
	testNode = "node-a"
	testUID  = types.UID("node-a-uid")
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type fakeMachine struct {
	mu   sync.Mutex
	info MachineInfo
	err  error
}

var _ MachineInfoGetter = (*fakeMachine)(nil)

func (f *fakeMachine) MachineInfo() (MachineInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.info, f.err
}

func testMachine() *fakeMachine {
	return &fakeMachine{info: MachineInfo{
		NumCPU:                   4,
		MemoryCapacity:           8 << 30,
		EphemeralStorageCapacity: 100 << 30,
		MachineID:                "machine-1",
		SystemUUID:               "uuid-1",
		BootID:                   "boot-1",
		KernelVersion:            "6.8.0-generic",
		OSImage:                  "Ubuntu 24.04 LTS",
	}}
}

type fakeRuntime struct {
	name, version string
	err           error
}

var _ RuntimeVersioner = (*fakeRuntime)(nil)

func (f *fakeRuntime) RuntimeName() string { return f.name }
func (f *fakeRuntime) RuntimeVersion(context.Context) (string, error) {
	return f.version, f.err
}

// readiness is a readiness-errors func the test can flip.
type readiness struct {
	mu   sync.Mutex
	errs []error
}

func (r *readiness) set(errs ...error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = errs
}

func (r *readiness) get() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

type fakeRecorder struct {
	mu     sync.Mutex
	events []string
}

var _ EventRecorder = (*fakeRecorder)(nil)

func (f *fakeRecorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	ref := object.(*v1.ObjectReference)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, fmt.Sprintf("%s/%s %s %s: %s", ref.Kind, ref.Name, eventtype, reason, fmt.Sprintf(messageFmt, args...)))
}

func (f *fakeRecorder) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.events...)
}

// newClient returns a fake clientset that gives created nodes a UID, as the API server does.
func newClient(objects ...runtime.Object) *fake.Clientset {
	c := fake.NewClientset(objects...)
	c.PrependReactor("create", "nodes", func(a clienttesting.Action) (bool, runtime.Object, error) {
		a.(clienttesting.CreateAction).GetObject().(*v1.Node).UID = testUID
		return false, nil, nil
	})
	return c
}

type testEnv struct {
	client    *fake.Clientset
	machine   *fakeMachine
	readiness *readiness
	recorder  *fakeRecorder
	m         *Manager
}

func newTestEnv(t *testing.T, clk clock.WithTicker, objects ...runtime.Object) *testEnv {
	t.Helper()
	env := &testEnv{client: newClient(objects...), machine: testMachine(), readiness: &readiness{}, recorder: &fakeRecorder{}}
	m, err := New(Config{
		NodeName: testNode,
		NodeIPs:  []net.IP{net.ParseIP("10.0.0.5")},
		Labels:   map[string]string{"role": "worker"},
		Version:  "v1.37.1",
		Clock:    clk,
	}, Deps{
		Client:          Clients{Core: fakekube.Core(env.client), Leases: fakekube.Leases(env.client)},
		Machine:         env.machine,
		Runtime:         &fakeRuntime{name: "containerd", version: "v2.4.2"},
		ReadinessErrors: env.readiness.get,
		Recorder:        env.recorder,
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	m.randFloat = func() float64 { return 0.5 } // no random report delay
	env.m = m
	return env
}

// countActions counts the client's actions with this verb on this resource/subresource.
func countActions(c *fake.Clientset, verb, res, sub string) int {
	n := 0
	for _, a := range c.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == res && a.GetSubresource() == sub {
			n++
		}
	}
	return n
}

func condition(node *v1.Node, t v1.NodeConditionType) v1.NodeCondition {
	for _, c := range node.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return v1.NodeCondition{}
}

func q(s string) resource.Quantity { return resource.MustParse(s) }
