package admission

import v1 "k8s.io/api/core/v1"

// Checks are the node's admit handlers in upstream's order: the sysctl allowlist, the
// predicates of Admit (resources, affinity, ports, taints), then AppArmor; nodelet's own
// Unsupported (fields nodelet cannot honour) comes before AppArmor.
type Checks struct {
	// Sysctls is the allowlist (safe sysctls and allowedUnsafeSysctls). Required.
	Sysctls *SysctlAllowlist
	// AppArmorHostErr says why the host cannot enforce AppArmor (AppArmorHostError); nil when
	// it can.
	AppArmorHostErr error
}

// Admit runs the checks and returns the first refusal.
func (c Checks) Admit(node *v1.Node, pod *v1.Pod, admitted []*v1.Pod) Result {
	if r := c.Sysctls.Sysctls(pod); !r.Admit {
		return r
	}
	if r := Admit(node, pod, admitted); !r.Admit {
		return r
	}
	if r := Unsupported(pod); !r.Admit {
		return r
	}
	return AppArmor(pod, c.AppArmorHostErr)
}
