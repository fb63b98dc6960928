package admission

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Checks are the node's admit handlers in upstream's order: the sysctl allowlist, the
// predicates of Admit (resources, affinity, ports, taints), then AppArmor; nodelet's own
// Unsupported (fields nodelet cannot honour) comes before AppArmor.
type Checks struct {
	// Sysctls is the allowlist (safe sysctls and allowedUnsafeSysctls). Required.
	Sysctls *SysctlAllowlist
	// AppArmorHostErr says why the host cannot enforce AppArmor (AppArmorHostError); nil when
	// it can.
	AppArmorHostErr error
	// UserNamespacesErr says why the runtime cannot run a pod with hostUsers: false
	// (UserNamespacesError); nil when it reports that it can.
	UserNamespacesErr error
}

// Admit runs the checks and returns the first refusal.
func (c Checks) Admit(node *v1.Node, pod *v1.Pod, admitted []*v1.Pod) Result {
	if r := c.Sysctls.Sysctls(pod); !r.Admit {
		return r
	}
	if r := Admit(node, pod, admitted); !r.Admit {
		return r
	}
	if c.UserNamespacesErr != nil && pod.Spec.HostUsers != nil && !*pod.Spec.HostUsers {
		// What is missing first: this runtime could not run the pod even once nodelet maps IDs.
		return Result{Reason: UnsupportedPodSpec, Message: "spec.hostUsers: " + c.UserNamespacesErr.Error()}
	}
	if r := Unsupported(pod); !r.Admit {
		return r
	}
	return AppArmor(pod, c.AppArmorHostErr)
}

// UserNamespacesError says why the runtime handler cannot run pods in user namespaces, in
// upstream's words (the kubelet's user-namespace manager), or nil when it reports that it can
// (CRI RuntimeStatus: the handler's features.user_namespaces).
func UserNamespacesError(handlers []*runtimeapi.RuntimeHandler, handler string) error {
	for _, h := range handlers {
		if h.GetName() == handler && h.GetFeatures().GetUserNamespaces() {
			return nil
		}
	}
	if handler != "" {
		return fmt.Errorf("can't set `spec.hostUsers: false`, RuntimeClass handler %q does not support user namespaces", handler)
	}
	return errors.New("can't set `spec.hostUsers: false`, runtime does not support user namespaces")
}
