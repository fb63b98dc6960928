package kuberuntime

import (
	"errors"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/container"
)

// debug adds an ephemeral container, as `kubectl debug --target` does to a running pod.
func debug(pod *v1.Pod, name, image, target string) {
	ec := v1.EphemeralContainer{EphemeralContainerCommon: v1.EphemeralContainerCommon(ctr(name, image)), TargetContainerName: target}
	pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, ec)
}

func TestSyncPodStartsEphemeralContainerOnceInTheTargetsPIDNamespace(t *testing.T) {
	h := newHarness(t)
	pod := newPod(mains("app"))
	h.mustSync(pod)

	debug(pod, "debugger", testImage, "app")
	h.rt.ResetCalls()
	h.mustSync(pod)
	if n := h.rt.CallCount("CreateContainer"); n != 1 {
		t.Fatalf("%d creates, want the ephemeral container alone", n)
	}
	id := containerID(pod, "debugger", 0)
	if st := h.state(id); st != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("debugger is %v", st)
	}
	_, cfg := h.rt.Container(id)
	ns := cfg.GetLinux().GetSecurityContext().GetNamespaceOptions()
	if ns.GetPid() != runtimeapi.NamespaceMode_TARGET || ns.GetTargetId() != containerID(pod, "app", 0) {
		t.Errorf("pid namespace %v target %q, want TARGET of app's container %q", ns.GetPid(), ns.GetTargetId(), containerID(pod, "app", 0))
	}

	// It exits: it is never restarted, whatever the pod's restart policy.
	h.exit(id, 1)
	h.rt.ResetCalls()
	h.mustSync(pod)
	h.mustSync(pod)
	if n := h.rt.CallCount("CreateContainer"); n != 0 {
		t.Errorf("%d creates after the ephemeral container exited, want none", n)
	}
	if got := h.started(pod); !slices.Equal(got, []string{"app"}) {
		t.Errorf("running %v, want app undisturbed", got)
	}
}

func TestSyncPodEphemeralContainerWithoutTarget(t *testing.T) {
	t.Run("its own pid namespace", func(t *testing.T) {
		h := newHarness(t)
		pod := newPod(mains("app"))
		h.mustSync(pod)
		debug(pod, "debugger", testImage, "")
		h.mustSync(pod)
		_, cfg := h.rt.Container(containerID(pod, "debugger", 0))
		if ns := cfg.GetLinux().GetSecurityContext().GetNamespaceOptions(); ns.GetPid() != runtimeapi.NamespaceMode_CONTAINER || ns.GetTargetId() != "" {
			t.Errorf("pid namespace %v target %q, want its own", ns.GetPid(), ns.GetTargetId())
		}
	})
	t.Run("a shared process namespace wins over the target", func(t *testing.T) {
		h := newHarness(t)
		pod := newPod(mains("app"), mod(func(p *v1.Pod) { p.Spec.ShareProcessNamespace = ptr.To(true) }))
		h.mustSync(pod)
		debug(pod, "debugger", testImage, "app")
		h.mustSync(pod)
		_, cfg := h.rt.Container(containerID(pod, "debugger", 0))
		if ns := cfg.GetLinux().GetSecurityContext().GetNamespaceOptions(); ns.GetPid() != runtimeapi.NamespaceMode_POD {
			t.Errorf("pid namespace %v, want POD", ns.GetPid())
		}
	})
}

func TestSyncPodEphemeralContainerBadInput(t *testing.T) {
	t.Run("a missing target is a config error, the pod undisturbed", func(t *testing.T) {
		h := newHarness(t)
		pod := newPod(mains("app"))
		h.mustSync(pod)
		debug(pod, "debugger", testImage, "nosuch")
		res := h.sync(pod)
		if w := res.Waiting["debugger"]; w.Reason != ReasonCreateContainerConfigError || w.Message != "unable to find target container nosuch" {
			t.Errorf("waiting %+v, want CreateContainerConfigError naming the target", w)
		}
		if got := h.started(pod); !slices.Equal(got, []string{"app"}) {
			t.Errorf("running %v, want app undisturbed", got)
		}
	})
	t.Run("a missing image waits in ErrImagePull, the pod undisturbed", func(t *testing.T) {
		h := newHarness(t)
		pod := newPod(mains("app"))
		h.mustSync(pod)
		debug(pod, "debugger", "registry.local/nosuch:1", "app")
		h.img.InjectError("PullImage", errors.New("registry.local/nosuch:1: not found"))
		res := h.sync(pod)
		if w := res.Waiting["debugger"]; w.Reason != ReasonErrImagePull {
			t.Errorf("waiting %+v, want ErrImagePull", w)
		}
		if got := h.started(pod); !slices.Equal(got, []string{"app"}) {
			t.Errorf("running %v, want app undisturbed", got)
		}
		for _, cs := range h.status(pod).ContainerStatuses {
			if cs.Name == "app" && cs.State != container.StateRunning {
				t.Errorf("app is %v", cs.State)
			}
		}
	})
}

// fakeServices is a ServiceLister.
type fakeServices struct {
	list   []*v1.Service
	synced bool
}

var _ ServiceLister = (*fakeServices)(nil)

func (f *fakeServices) Services() ([]*v1.Service, bool) { return f.list, f.synced }

func envOf(cfg *runtimeapi.ContainerConfig) map[string]string {
	out := map[string]string{}
	for _, kv := range cfg.GetEnvs() {
		out[kv.Key] = string(kv.Value)
	}
	return out
}

func TestSyncPodServiceEnvironment(t *testing.T) {
	master := &v1.Service{Spec: v1.ServiceSpec{ClusterIP: "10.0.0.1", Ports: []v1.ServicePort{{Name: "https", Port: 443}}}}
	master.Namespace, master.Name = "default", "kubernetes"
	apiPod := func(opts ...podOpt) *v1.Pod {
		p := newPod(opts...)
		p.Annotations = map[string]string{"kubernetes.io/config.source": "api"}
		return p
	}
	staticPod := func() *v1.Pod {
		p := newPod()
		p.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
		return p
	}

	t.Run("the master service's variables, even with enableServiceLinks false", func(t *testing.T) {
		h := newHarness(t)
		h.m.deps.Services = &fakeServices{list: []*v1.Service{master}, synced: true}
		pod := apiPod(mod(func(p *v1.Pod) { p.Spec.EnableServiceLinks = ptr.To(false) }))
		h.mustSync(pod)
		_, cfg := h.rt.Container(containerID(pod, "app", 0))
		env := envOf(cfg)
		if env["KUBERNETES_SERVICE_HOST"] != "10.0.0.1" || env["KUBERNETES_SERVICE_PORT"] != "443" {
			t.Errorf("env %v, want the master service's variables", env)
		}
	})
	t.Run("an API pod waits for the first list of services", func(t *testing.T) {
		h := newHarness(t)
		h.m.deps.Services = &fakeServices{synced: false}
		pod := apiPod()
		res := h.sync(pod)
		if w := res.Waiting["app"]; w.Reason != ReasonCreateContainerConfigError || w.Message != errServicesNotSynced.Error() {
			t.Errorf("waiting %+v, want upstream's CreateContainerConfigError", w)
		}
		if n := h.rt.CallCount("CreateContainer"); n != 0 {
			t.Errorf("%d containers created without KUBERNETES_SERVICE_HOST", n)
		}
	})
	t.Run("a static pod does not wait", func(t *testing.T) {
		h := newHarness(t)
		h.m.deps.Services = &fakeServices{list: []*v1.Service{master}, synced: false}
		pod := staticPod()
		h.mustSync(pod)
		_, cfg := h.rt.Container(containerID(pod, "app", 0))
		if env := envOf(cfg); env["KUBERNETES_SERVICE_HOST"] != "10.0.0.1" {
			t.Errorf("env %v, want what is known", env)
		}
	})
	t.Run("standalone: none", func(t *testing.T) {
		h := newHarness(t)
		pod := staticPod()
		h.mustSync(pod)
		_, cfg := h.rt.Container(containerID(pod, "app", 0))
		if env := envOf(cfg); len(env) != 0 {
			t.Errorf("env %v, want none", env)
		}
	})
}
