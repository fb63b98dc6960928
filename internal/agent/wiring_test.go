package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/cgroups"
	"github.com/nodelet/nodelet/internal/fakekube"
	"github.com/nodelet/nodelet/internal/kubeletconfig"
	"github.com/nodelet/nodelet/internal/kuberuntime/runtimetest"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/testharness"
)

// The whole agent, built from the command line as cmd/nodelet builds it, against a fake CRI
// runtime served over gRPC on a unix socket (and, in cluster mode, client-go's fake clientset):
// what is wired to what, and that a pod runs through every component, its container IDs
// carrying the runtime's name. Events, not time, tell the tests when to look; the deadline only
// bounds a failure.

const wiringDeadline = 60 * time.Second

// fakeCRI serves a fake runtime named "fakert" with busybox present.
func fakeCRI(t *testing.T) (*runtimetest.Server, string) {
	t.Helper()
	srv := &runtimetest.Server{RuntimeName: "fakert", RuntimeVersion: "1.0.0",
		Runtime: runtimetest.NewFakeRuntime(clock.RealClock{}), Images: runtimetest.NewFakeImages()}
	srv.Images.SetFakeImages("busybox:1.35")
	return srv, srv.Serve(t)
}

// loadConfig is the agent's Config from these flags plus a config file with the logs directory
// and no host resolv.conf, as cmd/nodelet does it; the cgroups are under a temporary directory,
// which is no cgroup v2 hierarchy: --fail-cgroupv1=false comes first (args may set it again).
func loadConfig(t *testing.T, dir string, args ...string) Config {
	t.Helper()
	file := filepath.Join(dir, "config.yaml")
	conf := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodLogsDir: " + filepath.Join(dir, "logs") + "\nresolvConf: \"\"\n"
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	kc, err := kubeletconfig.Load(append([]string{"--config", file, "--root-dir", filepath.Join(dir, "root"), "--fail-cgroupv1=false"}, args...), nil)
	if err != nil {
		t.Fatalf("load the configuration: %v", err)
	}
	cfg, err := ConfigFrom(kc)
	if err != nil {
		t.Fatalf("ConfigFrom: %v", err)
	}
	cfg.CgroupFSRoot = filepath.Join(dir, "cgroup")
	return cfg
}

// startNode builds the node and runs it until the test ends.
func startNode(t *testing.T, cfg Config, deps Deps) *node {
	t.Helper()
	n, err := newNode(cfg, deps)
	if err != nil {
		t.Fatalf("newNode: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v", err)
			}
		case <-time.After(wiringDeadline):
			t.Error("the node did not stop")
		}
	})
	return n
}

const busybox = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers:
  - {name: app, image: busybox:1.35, imagePullPolicy: IfNotPresent, command: [sleep, "3600"]}
`

// cgroupRecorder stands in for the host's cgroups: it records the names set.
type cgroupRecorder struct {
	mu  sync.Mutex
	set []string
}

var _ cgroups.Writer = (*cgroupRecorder)(nil)

func (c *cgroupRecorder) SetExisting(name string, r cgroups.Resources) error {
	return c.Set("existing "+name, r)
}

func (c *cgroupRecorder) Destroy(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set = append(c.set, "destroy "+name)
	return nil
}

func (c *cgroupRecorder) Set(name string, _ cgroups.Resources) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set = append(c.set, name)
	return nil
}

func (c *cgroupRecorder) names() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.set)
}

// TestFailCgroupV1Wiring: with failCgroupV1 (upstream's default) the node is not built on a
// cgroup root that is not cgroup v2, with an error naming the field; nothing is started.
func TestFailCgroupV1Wiring(t *testing.T) {
	_, endpoint := fakeCRI(t)
	dir := t.TempDir()
	cfg := loadConfig(t, dir, "--container-runtime-endpoint", endpoint, "--hostname-override", "node-a", "--fail-cgroupv1=true")
	if err := os.MkdirAll(cfg.CgroupFSRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := newNode(cfg, Deps{Clock: clock.RealClock{}, Reporter: podconfig.LogReporter{}})
	if !errors.Is(err, cgroups.ErrCgroupV1) || !strings.Contains(err.Error(), "failCgroupV1") {
		t.Fatalf("newNode on cgroup v1 with failCgroupV1 = %v, want the refusal naming failCgroupV1", err)
	}
	// The default of a config file with no failCgroupV1 is upstream's: true.
	kc, err := kubeletconfig.Load([]string{"--root-dir", filepath.Join(dir, "root")}, func() (string, error) { return "h", nil })
	if err != nil {
		t.Fatal(err)
	}
	if c, err := ConfigFrom(kc); err != nil || !c.FailCgroupV1 {
		t.Errorf("ConfigFrom(defaults).FailCgroupV1 = %v (%v), want true", c.FailCgroupV1, err)
	}
}

// TestSingleProcessOOMKillWiring: singleProcessOOMKill: false is refused at start on a cgroup v1
// host, naming the field (upstream's validation); left unset, nothing is refused there.
func TestSingleProcessOOMKillWiring(t *testing.T) {
	_, endpoint := fakeCRI(t)
	dir := t.TempDir()
	cfg := loadConfig(t, dir, "--container-runtime-endpoint", endpoint, "--hostname-override", "node-a")
	if err := os.MkdirAll(cfg.CgroupFSRoot, 0o755); err != nil { // not cgroup v2
		t.Fatal(err)
	}
	no := false
	cfg.SingleProcessOOMKill = &no
	if _, err := newNode(cfg, Deps{Clock: clock.RealClock{}, Reporter: podconfig.LogReporter{}}); err == nil ||
		!strings.Contains(err.Error(), "singleProcessOOMKill must not be explicitly set to false when using cgroup v1") {
		t.Fatalf("newNode on cgroup v1 with singleProcessOOMKill: false = %v, want the refusal naming the field", err)
	}
	cfg.SingleProcessOOMKill = nil
	n, err := newNode(cfg, Deps{Clock: clock.RealClock{}, Reporter: podconfig.LogReporter{}})
	if err != nil {
		t.Fatalf("newNode on cgroup v1, singleProcessOOMKill unset: %v", err)
	}
	if n.oomGroup {
		t.Error("memory.oom.group asked for on cgroup v1")
	}
}

// TestCgroupDriverWiring: a cgroup driver nodelet cannot use ends the start with an error saying
// what to change: the runtime's systemd, or the configured one when the runtime does not
// implement RuntimeConfig, on a host without systemd. Nothing runs before.
func TestCgroupDriverWiring(t *testing.T) {
	systemdConfig := &runtimeapi.RuntimeConfigResponse{Linux: &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: runtimeapi.CgroupDriver_SYSTEMD}}
	for _, tc := range []struct {
		name           string
		config         *runtimeapi.RuntimeConfigResponse
		configured     string
		systemdRunning bool
		refusal        error
		want           string
	}{
		{"the runtime's systemd, no systemd here", systemdConfig, "cgroupfs", false, cgroups.ErrNoSystemd, "SystemdCgroup = false"},
		{"no RuntimeConfig, the configured systemd, no systemd here", nil, "systemd", false, cgroups.ErrNoSystemd, "cgroupDriver: systemd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, endpoint := fakeCRI(t)
			srv.Config = tc.config
			dir := t.TempDir()
			cfg := loadConfig(t, dir, "--container-runtime-endpoint", endpoint, "--hostname-override", "node-a", "--read-only-port", "0",
				"--cgroup-driver", tc.configured)
			n, err := newNode(cfg, Deps{Clock: clock.RealClock{}, Reporter: podconfig.LogReporter{}, Cgroups: &cgroupRecorder{},
				SystemdRunning: func() bool { return tc.systemdRunning }})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), wiringDeadline)
			defer cancel()
			err = n.run(ctx)
			if !errors.Is(err, tc.refusal) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run = %v, want %v saying %q", err, tc.refusal, tc.want)
			}
			if ids := srv.Runtime.SandboxIDs(); len(ids) != 0 {
				t.Errorf("sandboxes created before the refusal: %v", ids)
			}
		})
	}
}

func TestStandaloneWiring(t *testing.T) {
	srv, endpoint := fakeCRI(t)
	dir := t.TempDir()
	manifests := filepath.Join(dir, "manifests")
	if err := os.MkdirAll(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	port, err := testharness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	cfg := loadConfig(t, dir, "--pod-manifest-path", manifests, "--container-runtime-endpoint", endpoint,
		"--hostname-override", "node-a", "--read-only-port", fmt.Sprint(port), "--cgroup-root", "/nodelet")
	// The runtime reports cgroupfs: it wins over a configured systemd, as upstream.
	cfg.CgroupDriver = "systemd"
	srv.Config = &runtimeapi.RuntimeConfigResponse{Linux: &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: runtimeapi.CgroupDriver_CGROUPFS}}
	cg := &cgroupRecorder{}
	n := startNode(t, cfg, Deps{Clock: clock.RealClock{}, Reporter: podconfig.LogReporter{}, Cgroups: cg})

	if n.cl != nil {
		t.Error("standalone: cluster parts built")
	}
	if len(n.servers) != 2 || n.servers[0].name != "read-only API" || n.servers[1].name != "local API" {
		t.Errorf("servers = %v, want the read-only API and the local API", n.servers)
	}
	if err := os.WriteFile(filepath.Join(manifests, "web.yaml"), []byte(busybox), 0o644); err != nil {
		t.Fatal(err)
	}
	st := waitForStatus(t, n, "web-node-a", func(st v1.PodStatus) bool { return st.Phase == v1.PodRunning })
	if len(st.ContainerStatuses) != 1 || !strings.HasPrefix(st.ContainerStatuses[0].ContainerID, "fakert://") {
		t.Errorf("container statuses %+v, want one container whose ID is fakert://<id>", st.ContainerStatuses)
	}
	if ids := srv.Runtime.ContainerIDs(); len(ids) != 1 || !strings.HasSuffix(st.ContainerStatuses[0].ContainerID, ids[0]) {
		t.Errorf("runtime containers %v, status %q", ids, st.ContainerStatuses[0].ContainerID)
	}
	// The pods' cgroup got the node's allocatable, and the QoS cgroups their shares, before the
	// pod's sandbox.
	if got := cg.names(); len(got) < 3 || got[0] != "/nodelet/kubepods" || got[1] != "/nodelet/kubepods/burstable" || got[2] != "/nodelet/kubepods/besteffort" {
		t.Errorf("cgroups set %q, want /nodelet/kubepods, then its burstable and besteffort cgroups", got)
	}
	if !slices.ContainsFunc(cg.names(), func(s string) bool { return strings.HasPrefix(s, "/nodelet/kubepods/besteffort/pod") }) {
		t.Errorf("cgroups set %q: the pod's own cgroup is not among them", cg.names())
	}
	// cgroupRoot: the pod's cgroup is under <cgroupRoot>/kubepods.
	if ids := srv.Runtime.SandboxIDs(); len(ids) != 1 {
		t.Errorf("sandboxes %v, want one", ids)
	} else if _, sc := srv.Runtime.Sandbox(ids[0]); !strings.HasPrefix(sc.GetLinux().GetCgroupParent(), "/nodelet/kubepods/besteffort/pod") {
		t.Errorf("the sandbox's cgroup parent is %q, want /nodelet/kubepods/besteffort/pod<uid>", sc.GetLinux().GetCgroupParent())
	}

	// The read-only API serves the status manager's pods and the runtime-backed health checks.
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/pods", port))
	if err != nil {
		t.Fatalf("GET /pods: %v", err)
	}
	defer resp.Body.Close()
	var pods v1.PodList
	if err := json.NewDecoder(resp.Body).Decode(&pods); err != nil || len(pods.Items) != 1 || pods.Items[0].Status.Phase != v1.PodRunning {
		t.Errorf("GET /pods: %d pods (%v), want web Running", len(pods.Items), err)
	}
	if err := n.rs.Check(); err != nil {
		t.Errorf("runtime health: %v", err)
	}
}

// waitForStatus waits for the status manager's change notifications until the named pod's
// status satisfies ok.
func waitForStatus(t *testing.T, n *node, name string, ok func(v1.PodStatus) bool) v1.PodStatus {
	t.Helper()
	deadline := time.After(wiringDeadline)
	for {
		for _, p := range n.pods.Pods() {
			if p.Name != name {
				continue
			}
			if st, found := n.statuses.GetPodStatus(p.UID); found && ok(st) {
				return st
			}
		}
		select {
		case <-n.statuses.Changed():
		case <-deadline:
			t.Fatalf("pod %s: no status as wanted within %v", name, wiringDeadline)
		}
	}
}

func TestClusterWiring(t *testing.T) {
	_, endpoint := fakeCRI(t)
	dir := t.TempDir()
	port, err := testharness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig") // not read: the fakes stand in for the API server
	cfg := loadConfig(t, dir, "--kubeconfig", kubeconfig, "--container-runtime-endpoint", endpoint,
		"--hostname-override", "node-a", "--port", fmt.Sprint(port), "--address", "127.0.0.1")
	api := fake.NewClientset(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec: v1.PodSpec{NodeName: "node-a", Containers: []v1.Container{{Name: "app", Image: "busybox:1.35",
			ImagePullPolicy: v1.PullIfNotPresent, TerminationMessagePolicy: v1.TerminationMessageReadFile}},
			RestartPolicy: v1.RestartPolicyAlways, DNSPolicy: v1.DNSDefault}})
	api.PrependReactor("create", "nodes", func(a clienttesting.Action) (bool, runtime.Object, error) {
		a.(clienttesting.CreateAction).GetObject().(*v1.Node).UID = "uid-node" // as the API server does
		return false, nil, nil
	})
	watcher, err := api.CoreV1().Pods("default").Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	n := startNode(t, cfg, Deps{Clock: clock.RealClock{}, Reporter: podconfig.LogReporter{}, Clients: fakekube.Clients(api), Cgroups: &cgroupRecorder{}})

	if n.cl == nil || n.cl.node.Load() == nil || n.cl.statusSync == nil {
		t.Fatal("cluster mode: node status or pod status sync not built")
	}
	var names []string
	for _, s := range n.servers {
		names = append(names, s.name)
	}
	if strings.Join(names, ",") != "local API,kubelet API,client CA reload" {
		t.Errorf("servers = %v, want the local API and the kubelet API (and its CA reload) only: the read-only port is off on a cluster node", names)
	}

	// The API pod runs and its status reaches the API server, with the runtime's name.
	deadline := time.After(wiringDeadline)
	for {
		select {
		case ev := <-watcher.ResultChan():
			if ev.Type != watch.Modified {
				continue
			}
			p := ev.Object.(*v1.Pod)
			if p.Status.Phase != v1.PodRunning {
				continue
			}
			if len(p.Status.ContainerStatuses) != 1 || !strings.HasPrefix(p.Status.ContainerStatuses[0].ContainerID, "fakert://") {
				t.Errorf("API status %+v, want one container whose ID is fakert://<id>", p.Status.ContainerStatuses)
			}
			node, err := api.CoreV1().Nodes().Get(context.Background(), "node-a", metav1.GetOptions{})
			if err != nil {
				t.Fatalf("the node did not register: %v", err)
			}
			if node.Status.NodeInfo.ContainerRuntimeVersion != "fakert://1.0.0" {
				t.Errorf("node's runtime version %q, want fakert://1.0.0", node.Status.NodeInfo.ContainerRuntimeVersion)
			}
			return
		case <-deadline:
			t.Fatalf("the API pod's status did not reach Running within %v", wiringDeadline)
		}
	}
}
