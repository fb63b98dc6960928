package kuberuntime

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/kuberuntime/criconfig"
	"github.com/nodelet/nodelet/internal/kuberuntime/runtimetest"
	"github.com/nodelet/nodelet/internal/prober/probeview"
)

func TestNewRequiresEveryDependency(t *testing.T) {
	h := newHarness(t)
	full := Deps{Sandboxes: h.rt, Containers: h.rt, Reader: h.rt, Images: h.img, Volumes: h.vol, Recorder: h.rec, Clock: h.clock}
	for name, drop := range map[string]func(*Deps){
		"Sandboxes":  func(d *Deps) { d.Sandboxes = nil },
		"Containers": func(d *Deps) { d.Containers = nil },
		"Reader":     func(d *Deps) { d.Reader = nil },
		"Images":     func(d *Deps) { d.Images = nil },
		"Volumes":    func(d *Deps) { d.Volumes = nil },
		"Recorder":   func(d *Deps) { d.Recorder = nil },
		"Clock":      func(d *Deps) { d.Clock = nil },
	} {
		d := full
		drop(&d)
		if _, err := New(Config{}, d); err == nil {
			t.Errorf("New without %s: no error", name)
		}
	}
	m, err := New(Config{}, full)
	if err != nil {
		t.Fatal(err)
	}
	if m.cfg.PodLogsDir != "/var/log/pods" || m.cfg.CgroupRoot != "/kubepods" {
		t.Errorf("defaults: PodLogsDir %q, CgroupRoot %q; want /var/log/pods, /kubepods", m.cfg.PodLogsDir, m.cfg.CgroupRoot)
	}
	m.GCBackOff() // nothing to forget; must not panic
}

func TestSyncPodNewPod(t *testing.T) {
	for _, tc := range []struct {
		name       string
		opts       []podOpt
		wantCgroup string
	}{
		{"best effort", nil, "/kubepods/besteffort/poduid-1"},
		{"burstable", []podOpt{mains("app", "log"), resources("100m", "200m", "", "")}, "/kubepods/burstable/poduid-1"},
		{"guaranteed", []podOpt{mains("app", "log"), resources("1", "1", "1Gi", "1Gi")}, "/kubepods/poduid-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			pod := newPod(tc.opts...)
			h.mustSync(pod)

			sb, sbCfg := h.rt.Sandbox(sandboxID(pod, 0))
			if sb == nil || len(h.rt.SandboxIDs()) != 1 {
				t.Fatalf("sandboxes %v, want one %s", h.rt.SandboxIDs(), sandboxID(pod, 0))
			}
			for k, want := range map[string]string{container.PodNameLabel: "web", container.PodNamespaceLabel: "default",
				container.PodUIDLabel: "uid-1", "app": "web"} {
				if got := sbCfg.GetLabels()[k]; got != want {
					t.Errorf("sandbox label %s = %q, want %q", k, got, want)
				}
			}
			if got := sbCfg.GetLinux().GetCgroupParent(); got != tc.wantCgroup {
				t.Errorf("cgroup parent %q, want %q", got, tc.wantCgroup)
			}
			wantLogDir := filepath.Join(h.cfg.PodLogsDir, "default_web_uid-1")
			if sbCfg.GetLogDirectory() != wantLogDir {
				t.Errorf("log directory %q, want %q", sbCfg.GetLogDirectory(), wantLogDir)
			}
			if md := sbCfg.GetMetadata(); md.GetAttempt() != 0 || md.GetUid() != "uid-1" {
				t.Errorf("sandbox metadata %v", md)
			}

			for _, c := range pod.Spec.Containers {
				id := containerID(pod, c.Name, 0)
				st, cfg := h.rt.Container(id)
				if st == nil {
					t.Fatalf("container %s was not created; have %v", id, h.rt.ContainerIDs())
				}
				if st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
					t.Errorf("%s is %v, want running", c.Name, st.State)
				}
				for k, want := range map[string]string{container.PodNameLabel: "web", container.PodNamespaceLabel: "default",
					container.PodUIDLabel: "uid-1", container.ContainerNameLabel: c.Name} {
					if got := cfg.GetLabels()[k]; got != want {
						t.Errorf("%s: label %s = %q, want %q", c.Name, k, got, want)
					}
				}
				wantHash := strconv.FormatUint(container.HashContainer(&c), 16)
				if got := cfg.GetAnnotations()[container.ContainerHashAnnotation]; got != wantHash {
					t.Errorf("%s: hash annotation %q, want %q", c.Name, got, wantHash)
				}
				if got := cfg.GetAnnotations()[container.ContainerRestartCountAnnotation]; got != "0" {
					t.Errorf("%s: restartCount annotation %q, want 0", c.Name, got)
				}
				if got := cfg.GetLogPath(); got != filepath.Join(c.Name, "0.log") {
					t.Errorf("%s: log path %q", c.Name, got)
				}
				if fi, err := os.Stat(filepath.Join(wantLogDir, c.Name)); err != nil || !fi.IsDir() {
					t.Errorf("%s: container log directory missing: %v", c.Name, err)
				}
			}
			h.vol.mu.Lock()
			for _, mc := range h.vol.mounts {
				if len(mc.podIPs) != 1 || mc.podIPs[0] != runtimetest.DefaultPodIP || mc.restartCount != 0 {
					t.Errorf("Mounts(%s) got restartCount %d, pod IPs %v", mc.container, mc.restartCount, mc.podIPs)
				}
			}
			h.vol.mu.Unlock()
			for _, reason := range []string{"Pulled", "Created", "Started"} {
				if !h.rec.has(reason) {
					t.Errorf("no %s event in %v", reason, h.rec.all())
				}
			}

			// The second sync, on the status read back, has nothing to do.
			h.rt.ResetCalls()
			res := h.sync(pod)
			if res.Err != nil || len(res.Waiting) != 0 {
				t.Fatalf("second SyncPod: %v, waiting %v", res.Err, res.Waiting)
			}
			for _, call := range []string{"RunPodSandbox", "CreateContainer", "StartContainer", "StopContainer", "StopPodSandbox", "RemoveContainer"} {
				if n := h.rt.CallCount(call); n != 0 {
					t.Errorf("second SyncPod called %s %d times; calls %v", call, n, h.rt.GetCalls())
				}
			}
		})
	}
}

func TestSyncPodRecreatesDeadSandbox(t *testing.T) {
	h := newHarness(t)
	pod := newPod(inits("setup"))
	h.mustSync(pod)
	h.exit(containerID(pod, "setup", 0), 0)
	h.mustSync(pod) // app starts
	if err := h.rt.SetSandboxState(sandboxID(pod, 0), runtimeapi.PodSandboxState_SANDBOX_NOTREADY); err != nil {
		t.Fatal(err)
	}
	h.rt.ResetCalls()
	h.mustSync(pod)

	if !h.rec.has("SandboxChanged") {
		t.Errorf("no SandboxChanged event: %v", h.rec.all())
	}
	if st := h.state(containerID(pod, "app", 0)); st != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Errorf("app in the old sandbox is %v, want stopped", st)
	}
	if _, err := h.rt.ContainerStatus(h.ctx, containerID(pod, "setup", 0), false); err == nil {
		t.Errorf("the old sandbox's exited init container was not purged")
	}
	newSandbox := sandboxID(pod, 1)
	if sb, _ := h.rt.Sandbox(newSandbox); sb == nil {
		t.Fatalf("no sandbox with attempt 1: %v", h.rt.SandboxIDs())
	}
	// Initialization runs again in the new sandbox, with the restart count carried on.
	setup := runtimetest.ContainerID(newSandbox, &runtimeapi.ContainerMetadata{Name: "setup", Attempt: 1})
	if st := h.state(setup); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("setup in the new sandbox is %v", st)
	}
	if n := h.rt.CallCount("CreateContainer"); n != 1 {
		t.Errorf("%d containers created, want the first init container only", n)
	}
}

func TestSyncPodFailures(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name       string
		setup      func(h *harness)
		opts       []podOpt
		wantReason string // the waiting reason of app; "" when the sync fails before
		wantCalls  map[string]int
	}{
		{name: "volumes", setup: func(h *harness) { h.vol.setUpErr = boom },
			wantCalls: map[string]int{"RunPodSandbox": 0}},
		{name: "sandbox", setup: func(h *harness) { h.rt.InjectError("RunPodSandbox", boom) },
			wantCalls: map[string]int{"RunPodSandbox": 1, "CreateContainer": 0}},
		{name: "mounts", setup: func(h *harness) { h.vol.mountsErr = boom },
			wantReason: ReasonCreateContainerConfigError, wantCalls: map[string]int{"CreateContainer": 0}},
		{name: "env needs the API server", opts: []podOpt{withContainer("app", func(c *v1.Container) {
			c.EnvFrom = []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "cm"}}}}
		})}, wantReason: ReasonCreateContainerConfigError, wantCalls: map[string]int{"CreateContainer": 0}},
		{name: "create", setup: func(h *harness) { h.rt.InjectError("CreateContainer", boom) },
			wantReason: ReasonCreateContainerError, wantCalls: map[string]int{"StartContainer": 0}},
		{name: "start", setup: func(h *harness) { h.rt.InjectError("StartContainer", boom) },
			wantReason: ReasonRunContainerError, wantCalls: map[string]int{"StartContainer": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			if tc.setup != nil {
				tc.setup(h)
			}
			res := h.sync(newPod(tc.opts...))
			if res.Err == nil {
				t.Fatal("SyncPod succeeded")
			}
			if tc.wantReason != "" {
				if got := res.Waiting["app"].Reason; got != tc.wantReason {
					t.Errorf("waiting reason %q, want %q (err %v)", got, tc.wantReason, res.Err)
				}
				var ce *ContainerError
				if !errors.As(res.Err, &ce) || ce.Container != "app" || ce.Reason != tc.wantReason || !ce.RetryAt().IsZero() {
					t.Errorf("error %v: want a ContainerError %s for app with no RetryAt", res.Err, tc.wantReason)
				}
				if tc.setup != nil && !errors.Is(res.Err, boom) {
					t.Errorf("error %v does not wrap the cause", res.Err)
				}
			} else if len(res.Waiting) != 0 {
				t.Errorf("waiting %v, want none", res.Waiting)
			}
			for call, want := range tc.wantCalls {
				if got := h.rt.CallCount(call); got != want {
					t.Errorf("%s called %d times, want %d", call, got, want)
				}
			}
		})
	}
}

func TestSyncPodSandboxErrors(t *testing.T) {
	t.Run("no cluster DNS: the host's, with a warning", func(t *testing.T) {
		h := newHarness(t)
		h.m.cfg.ClusterDNS = criconfig.ClusterDNS{}
		h.mustSync(newPod())
		if !h.rec.has("MissingClusterDNS") {
			t.Errorf("no MissingClusterDNS event: %v", h.rec.all())
		}
	})
	t.Run("status of the new sandbox", func(t *testing.T) {
		h := newHarness(t)
		h.rt.InjectError("PodSandboxStatus", errors.New("boom"))
		if res := h.m.SyncPod(h.ctx, newPod(), &container.PodStatus{ID: "uid-1"}, probeview.View{}); res.Err == nil {
			t.Error("SyncPod hid the failure")
		}
		if n := h.rt.CallCount("CreateContainer"); n != 0 {
			t.Errorf("%d containers created without the sandbox's status", n)
		}
	})
	t.Run("pod log directory", func(t *testing.T) {
		h := newHarness(t)
		file := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(file, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		h.m.cfg.PodLogsDir = file // a file: no directory below it
		if res := h.sync(newPod()); res.Err == nil || h.rt.CallCount("RunPodSandbox") != 0 {
			t.Errorf("err %v, %d sandboxes: want an error before RunPodSandbox", res.Err, h.rt.CallCount("RunPodSandbox"))
		}
	})
	t.Run("invalid hostname", func(t *testing.T) {
		h := newHarness(t)
		pod := newPod()
		pod.Spec.Hostname = strings.Repeat("-", 64)
		if res := h.sync(pod); res.Err == nil || h.rt.CallCount("RunPodSandbox") != 0 {
			t.Errorf("err %v: want a sandbox config error", res.Err)
		}
	})
}

func TestSyncPodHostNetwork(t *testing.T) {
	h := newHarness(t)
	pod := newPod(mod(func(p *v1.Pod) { p.Spec.HostNetwork = true }))
	h.mustSync(pod)
	if ps := h.status(pod); ps.IPs != nil {
		t.Errorf("pod IPs %v for a host-network pod", ps.IPs)
	}
	h.rt.ResetCalls()
	h.mustSync(pod)
	if n := h.rt.CallCount("RunPodSandbox") + h.rt.CallCount("CreateContainer"); n != 0 {
		t.Errorf("a host-network pod without an IP was recreated: %v", h.rt.GetCalls())
	}
}

func TestRunAsNonRoot(t *testing.T) {
	nonRoot := func(user *int64) podOpt {
		return withContainer("app", func(c *v1.Container) {
			yes := true
			c.SecurityContext = &v1.SecurityContext{RunAsNonRoot: &yes, RunAsUser: user}
		})
	}
	uid := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name      string
		image     func(*runtimetest.FakeImages)
		runAsUser *int64
		wantError bool
	}{
		{"image uid 0", func(i *runtimetest.FakeImages) { i.SetImageUID(testImage, 0) }, nil, true},
		{"image user root", func(i *runtimetest.FakeImages) { i.SetImageUser(testImage, "root") }, nil, true},
		{"image without a user", func(*runtimetest.FakeImages) {}, nil, true},
		{"image uid 1000", func(i *runtimetest.FakeImages) { i.SetImageUID(testImage, 1000) }, nil, false},
		{"image user 1000", func(i *runtimetest.FakeImages) { i.SetImageUser(testImage, "1000") }, nil, false},
		{"runAsUser 1000 over an image uid 0", func(i *runtimetest.FakeImages) { i.SetImageUID(testImage, 0) }, uid(1000), false},
		{"runAsUser 0", func(i *runtimetest.FakeImages) { i.SetImageUID(testImage, 1000) }, uid(0), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			tc.image(h.img)
			res := h.sync(newPod(nonRoot(tc.runAsUser)))
			got := res.Waiting["app"].Reason
			if tc.wantError {
				if got != ReasonCreateContainerConfigError || res.Err == nil || h.rt.CallCount("CreateContainer") != 0 {
					t.Errorf("waiting %q, err %v, %d creates; want CreateContainerConfigError and no container",
						got, res.Err, h.rt.CallCount("CreateContainer"))
				}
				if !strings.Contains(strings.ToLower(res.Waiting["app"].Message), "nonroot") && !strings.Contains(res.Waiting["app"].Message, "non-root") {
					t.Errorf("message %q does not explain the non-root policy", res.Waiting["app"].Message)
				}
				return
			}
			if res.Err != nil || h.rt.CallCount("StartContainer") != 1 {
				t.Errorf("err %v, %d starts; want app started", res.Err, h.rt.CallCount("StartContainer"))
			}
		})
	}
}
