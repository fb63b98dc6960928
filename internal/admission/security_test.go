package admission

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/version"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

func pendingPod(mutate func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app"}}}, Status: v1.PodStatus{Phase: v1.PodPending}}
	p.Name, p.Namespace = "p", "default"
	if mutate != nil {
		mutate(p)
	}
	return p
}

func TestAppArmor(t *testing.T) {
	noAppArmor := errors.New("AppArmor is not enabled on the host")
	withProfile := func(tp v1.AppArmorProfileType) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: tp}}
		}
	}
	annotated := func(v string) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Annotations = map[string]string{v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "app": v}
		}
	}
	const refused = "Cannot enforce AppArmor: AppArmor is not enabled on the host"
	for _, tc := range []struct {
		name    string
		pod     *v1.Pod
		hostErr error
		want    string // "" admits
	}{
		{"no profile, no AppArmor", pendingPod(nil), noAppArmor, ""},
		{"Unconfined, no AppArmor", pendingPod(withProfile(v1.AppArmorProfileTypeUnconfined)), noAppArmor, ""},
		{"RuntimeDefault, no AppArmor", pendingPod(withProfile(v1.AppArmorProfileTypeRuntimeDefault)), noAppArmor, refused},
		{"pod-level Localhost, no AppArmor", pendingPod(func(p *v1.Pod) {
			p.Spec.SecurityContext = &v1.PodSecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("k8s-x")}}
		}), noAppArmor, refused},
		{"deprecated annotation runtime/default, no AppArmor", pendingPod(annotated("runtime/default")), noAppArmor, refused},
		{"deprecated annotation unconfined, no AppArmor", pendingPod(annotated("unconfined")), noAppArmor, ""},
		{"deprecated annotation with a bad value, no AppArmor", pendingPod(annotated("bogus")), noAppArmor, refused},
		{"an ephemeral container's profile counts", pendingPod(func(p *v1.Pod) {
			p.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "dbg",
				SecurityContext: &v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}}}}}
		}), noAppArmor, refused},
		{"RuntimeDefault with AppArmor", pendingPod(withProfile(v1.AppArmorProfileTypeRuntimeDefault)), nil, ""},
		{"Localhost without a name, with AppArmor", pendingPod(withProfile(v1.AppArmorProfileTypeLocalhost)), nil,
			`Cannot enforce AppArmor: invalid empty AppArmor profile name: "&AppArmorProfile{Type:Localhost,LocalhostProfile:nil,}"`},
		{"a running pod is not checked again", func() *v1.Pod {
			p := pendingPod(withProfile(v1.AppArmorProfileTypeRuntimeDefault))
			p.Status.Phase = v1.PodRunning
			return p
		}(), noAppArmor, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := AppArmor(tc.pod, tc.hostErr)
			if tc.want == "" {
				if !r.Admit {
					t.Errorf("refused: %+v", r)
				}
				return
			}
			if r.Admit || r.Reason != AppArmorNotAdmitted || r.Message != tc.want {
				t.Errorf("got %+v, want reason AppArmor, message %q", r, tc.want)
			}
		})
	}
}

func TestAppArmorHostError(t *testing.T) {
	dir := t.TempDir()
	if err := AppArmorHostError(dir); err == nil || err.Error() != "AppArmor is not enabled on the host" {
		t.Errorf("no apparmor module: %v", err)
	}
}

func TestSafeSysctls(t *testing.T) {
	old := SafeSysctls(version.MustParseGeneric("4.4"))
	if slices.Contains(old, "net.ipv4.tcp_keepalive_time") || !slices.Contains(old, "net.ipv4.ip_local_reserved_ports") {
		t.Errorf("kernel 4.4: %v", old)
	}
	if n := len(SafeSysctls(version.MustParseGeneric("6.1"))); n != len(safeSysctls) {
		t.Errorf("kernel 6.1: %d safe sysctls, want all %d", n, len(safeSysctls))
	}
	if got := SafeSysctls(nil); len(got) != 5 {
		t.Errorf("unknown kernel: %v, want the 5 any kernel namespaces", got)
	}
}

func TestSysctls(t *testing.T) {
	w, err := NewSysctlAllowlist(append(SafeSysctls(version.MustParseGeneric("6.1")), "net.core.*", "kernel.msgmax"))
	if err != nil {
		t.Fatal(err)
	}
	with := func(hostNet, hostIPC bool, names ...string) *v1.Pod {
		return pendingPod(func(p *v1.Pod) {
			p.Spec.HostNetwork, p.Spec.HostIPC = hostNet, hostIPC
			p.Spec.SecurityContext = &v1.PodSecurityContext{}
			for _, n := range names {
				p.Spec.SecurityContext.Sysctls = append(p.Spec.SecurityContext.Sysctls, v1.Sysctl{Name: n, Value: "1"})
			}
		})
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want string // "" admits
	}{
		{"none", with(false, false), ""},
		{"safe", with(false, false, "net.ipv4.tcp_syncookies", "kernel.shm_rmid_forced"), ""},
		{"slash-separated safe", with(false, false, "net/ipv4/tcp_syncookies"), ""},
		{"unsafe, allowed by a prefix", with(false, false, "net.core.somaxconn"), ""},
		{"unsafe, allowed by name", with(false, false, "kernel.msgmax"), ""},
		{"unsafe, not allowed", with(false, false, "kernel.msgmnb"), `forbidden sysctl: "kernel.msgmnb" not allowlisted`},
		{"a node-level sysctl", with(false, false, "vm.swappiness"), `forbidden sysctl: "vm.swappiness" not allowlisted`},
		{"net sysctl with hostNetwork", with(true, false, "net.ipv4.tcp_syncookies"), `forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host Net enabled`},
		{"ipc sysctl with hostIPC", with(false, true, "kernel.shm_rmid_forced"), `forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host IPC enabled`},
		{"ipc sysctl with hostNetwork only", with(true, false, "kernel.shm_rmid_forced"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := w.Sysctls(tc.pod)
			if tc.want == "" {
				if !r.Admit {
					t.Errorf("refused: %+v", r)
				}
				return
			}
			if r.Admit || r.Reason != SysctlForbidden || r.Message != tc.want {
				t.Errorf("got %+v, want SysctlForbidden %q", r, tc.want)
			}
		})
	}
}

func TestNewSysctlAllowlistRefusesBadPatterns(t *testing.T) {
	for _, tc := range []struct{ pattern, want string }{
		{"vm.swappiness", `the sysctls "vm.swappiness" are not known to be namespaced`},
		{"net.core.so$maxconn", `sysctl "net.core.so$maxconn" must have at most 253 characters and match regex`},
		{"Net.core.*", `sysctl "Net.core.*" must have at most 253 characters and match regex`},
		{"*", `the sysctls "" are not known to be namespaced`},
	} {
		_, err := NewSysctlAllowlist([]string{tc.pattern})
		if err == nil || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want {
			t.Errorf("%q: err %v, want %q...", tc.pattern, err, tc.want)
		}
	}
}

func TestChecksOrder(t *testing.T) {
	w, err := NewSysctlAllowlist(SafeSysctls(nil))
	if err != nil {
		t.Fatal(err)
	}
	c := Checks{Sysctls: w, AppArmorHostErr: errors.New("AppArmor is not enabled on the host")}
	node := &v1.Node{Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourcePods: resource.MustParse("10")}}}
	node.Name = "n"
	both := pendingPod(func(p *v1.Pod) {
		p.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{{Name: "kernel.msgmax", Value: "1"}},
			AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}}
	})
	if r := c.Admit(node, both, nil); r.Reason != SysctlForbidden {
		t.Errorf("a pod with a forbidden sysctl and an AppArmor profile: %+v, want the sysctl first, as upstream", r)
	}
	both.Spec.SecurityContext.Sysctls = nil
	if r := c.Admit(node, both, nil); r.Reason != AppArmorNotAdmitted {
		t.Errorf("AppArmor profile on a host without AppArmor: %+v", r)
	}
	both.Spec.HostUsers = ptr.To(false)
	if r := c.Admit(node, both, nil); r.Reason != UnsupportedPodSpec {
		t.Errorf("hostUsers false and an AppArmor profile: %+v, want UnsupportedPodSpec before AppArmor", r)
	}
	both.Spec.NodeName = "other"
	if r := c.Admit(node, both, nil); r.Reason != NodeName {
		t.Errorf("wrong node, hostUsers false and an AppArmor profile: %+v, want the predicates first", r)
	}
}

func TestUserNamespaces(t *testing.T) {
	containerd := []*runtimeapi.RuntimeHandler{ // what containerd 2.4.2 with runc 1.1.5 reports here
		{Features: &runtimeapi.RuntimeHandlerFeatures{RecursiveReadOnlyMounts: true}},
		{Name: "runc", Features: &runtimeapi.RuntimeHandlerFeatures{RecursiveReadOnlyMounts: true}},
	}
	err := UserNamespacesError(containerd, "")
	if err == nil || err.Error() != "can't set `spec.hostUsers: false`, runtime does not support user namespaces" {
		t.Errorf("default handler without user namespaces: %v", err)
	}
	if err := UserNamespacesError(containerd, "runc"); err == nil || err.Error() != "can't set `spec.hostUsers: false`, RuntimeClass handler \"runc\" does not support user namespaces" {
		t.Errorf("named handler without user namespaces: %v", err)
	}
	capable := []*runtimeapi.RuntimeHandler{{Features: &runtimeapi.RuntimeHandlerFeatures{UserNamespaces: true}}}
	if err := UserNamespacesError(capable, ""); err != nil {
		t.Errorf("a handler with user namespaces: %v", err)
	}

	w, err := NewSysctlAllowlist(SafeSysctls(nil))
	if err != nil {
		t.Fatal(err)
	}
	node := &v1.Node{Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourcePods: resource.MustParse("10")}}}
	c := Checks{Sysctls: w, Handlers: containerd}
	pod := pendingPod(func(p *v1.Pod) { p.Spec.HostUsers = ptr.To(false) })
	if r := c.Admit(node, pod, nil); r.Reason != UnsupportedPodSpec ||
		r.Message != "spec.hostUsers: can't set `spec.hostUsers: false`, runtime does not support user namespaces" {
		t.Errorf("hostUsers false on a runtime without user namespaces: %+v", r)
	}
	// The handler of the pod's RuntimeClass is the one that must support them.
	c.RuntimeClasses = classes{"alt": "runc"}
	pod.Spec.RuntimeClassName = ptr.To("alt")
	if r := c.Admit(node, pod, nil); r.Reason != UnsupportedPodSpec ||
		r.Message != "spec.hostUsers: can't set `spec.hostUsers: false`, RuntimeClass handler \"runc\" does not support user namespaces" {
		t.Errorf("hostUsers false with a class whose handler lacks them: %+v", r)
	}
	pod.Spec.RuntimeClassName = ptr.To("gone")
	if r := c.Admit(node, pod, nil); r.Reason != UnsupportedPodSpec || !strings.Contains(r.Message, `"gone" not found`) {
		t.Errorf("hostUsers false with an unknown class: %+v", r)
	}
	pod.Spec.RuntimeClassName = nil
	c.Handlers = capable // the runtime could: nodelet's own limit
	if r := c.Admit(node, pod, nil); r.Reason != UnsupportedPodSpec || !strings.Contains(r.Message, "nodelet does not support") {
		t.Errorf("hostUsers false on a runtime with user namespaces: %+v", r)
	}
	pod.Spec.HostUsers = ptr.To(true)
	if r := c.Admit(node, pod, nil); !r.Admit {
		t.Errorf("hostUsers true: %+v", r)
	}
}

// classes resolves RuntimeClasses from a map.
type classes map[string]string

var _ RuntimeHandlerResolver = classes(nil)

func (c classes) LookupRuntimeHandler(name *string) (string, error) {
	if name == nil || *name == "" {
		return "", nil
	}
	if h, ok := c[*name]; ok {
		return h, nil
	}
	return "", fmt.Errorf("runtimeclasses.node.k8s.io %q not found", *name)
}

// A RuntimeClass is honoured in cluster mode; standalone, where no API server holds one, a pod
// that names a class is refused rather than run with the default handler.
func TestRuntimeClassAdmission(t *testing.T) {
	w, err := NewSysctlAllowlist(SafeSysctls(nil))
	if err != nil {
		t.Fatal(err)
	}
	node := &v1.Node{Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourcePods: resource.MustParse("10")}}}
	pod := pendingPod(func(p *v1.Pod) { p.Spec.RuntimeClassName = ptr.To("gvisor") })
	standalone := Checks{Sysctls: w}
	if r := standalone.Admit(node, pod, nil); r.Admit || r.Reason != UnsupportedPodSpec ||
		!strings.HasPrefix(r.Message, `spec.runtimeClassName: RuntimeClass "gvisor" is an API object and nodelet runs standalone`) {
		t.Errorf("standalone: %+v, want a refusal naming the field", r)
	}
	cluster := Checks{Sysctls: w, RuntimeClasses: classes{}}
	if r := cluster.Admit(node, pod, nil); !r.Admit {
		t.Errorf("cluster mode: %+v, want admitted (the sandbox resolves the class)", r)
	}
	pod.Spec.RuntimeClassName = ptr.To("")
	if r := standalone.Admit(node, pod, nil); !r.Admit {
		t.Errorf("standalone, empty class: %+v", r)
	}
}
