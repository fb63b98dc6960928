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
	// Handlers is what the runtime reports of its handlers (CRI RuntimeStatus): whether the
	// pod's handler can run it with hostUsers: false (UserNamespacesError).
	Handlers []*runtimeapi.RuntimeHandler
	// RuntimeClasses resolves a pod's runtimeClassName to its handler (cluster mode). Nil in
	// standalone mode, where there is no RuntimeClass to read: a pod that names one is refused,
	// never run with the default handler.
	RuntimeClasses RuntimeHandlerResolver
	// Pressure is the eviction manager's admit handler (upstream's first): under memory pressure
	// BestEffort pods are refused, under other pressure every pod, critical pods never. Nil
	// admits.
	Pressure PressureAdmitter
}

// PressureAdmitter decides admission under the node's resource pressure.
type PressureAdmitter interface {
	AdmitPod(pod *v1.Pod) (ok bool, reason, message string)
}

// RuntimeHandlerResolver is upstream's runtime class manager: the handler of a RuntimeClass,
// "" for nil or "".
type RuntimeHandlerResolver interface {
	LookupRuntimeHandler(runtimeClassName *string) (string, error)
}

// Admit runs the checks and returns the first refusal.
func (c Checks) Admit(node *v1.Node, pod *v1.Pod, admitted []*v1.Pod) Result {
	if c.Pressure != nil {
		if ok, reason, message := c.Pressure.AdmitPod(pod); !ok {
			return Result{Reason: reason, Message: message}
		}
	}
	if r := c.Sysctls.Sysctls(pod); !r.Admit {
		return r
	}
	if r := Admit(node, pod, admitted); !r.Admit {
		return r
	}
	if class := pod.Spec.RuntimeClassName; class != nil && *class != "" && c.RuntimeClasses == nil {
		return Result{Reason: UnsupportedPodSpec, Message: fmt.Sprintf("spec.runtimeClassName: RuntimeClass %q is an API object and nodelet "+
			"runs standalone, with no API server to read it from; remove runtimeClassName or run the pod in cluster mode", *class)}
	}
	if pod.Spec.HostUsers != nil && !*pod.Spec.HostUsers {
		// What is missing first: this runtime could not run the pod even once nodelet maps IDs.
		if err := c.userNamespacesError(pod); err != nil {
			return Result{Reason: UnsupportedPodSpec, Message: "spec.hostUsers: " + err.Error()}
		}
	}
	if r := Unsupported(pod); !r.Admit {
		return r
	}
	return AppArmor(pod, c.AppArmorHostErr)
}

// userNamespacesError says why the pod's runtime handler cannot run it in a user namespace.
func (c Checks) userNamespacesError(pod *v1.Pod) error {
	handler := ""
	if c.RuntimeClasses != nil {
		h, err := c.RuntimeClasses.LookupRuntimeHandler(pod.Spec.RuntimeClassName)
		if err != nil {
			return fmt.Errorf("can't tell whether the pod's runtime handler supports user namespaces: %w", err)
		}
		handler = h
	}
	return UserNamespacesError(c.Handlers, handler)
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
