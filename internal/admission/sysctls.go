package admission

import (
	"fmt"
	"regexp"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
)

// SysctlForbidden is upstream's sysctl.ForbiddenReason.
const SysctlForbidden = "SysctlForbidden"

// safeSysctls is upstream's safe set (pkg/kubelet/sysctl): namespaced sysctls that cannot hurt
// the node or other pods, each with the first kernel that namespaces it ("" for any).
var safeSysctls = []struct{ name, kernel string }{
	{"kernel.shm_rmid_forced", ""},
	{"net.ipv4.ip_local_port_range", ""},
	{"net.ipv4.tcp_syncookies", ""},
	{"net.ipv4.ping_group_range", ""},
	{"net.ipv4.ip_unprivileged_port_start", ""},
	{"net.ipv4.ip_local_reserved_ports", "3.16"},
	{"net.ipv4.tcp_keepalive_time", "4.5"},
	{"net.ipv4.tcp_fin_timeout", "4.6"},
	{"net.ipv4.tcp_keepalive_intvl", "4.5"},
	{"net.ipv4.tcp_keepalive_probes", "4.5"},
	{"net.ipv4.tcp_rmem", "4.15"},
	{"net.ipv4.tcp_wmem", "4.15"},
	{"net.ipv4.tcp_slow_start_after_idle", "4.15"},
	{"net.ipv4.tcp_notsent_lowat", "4.6"},
}

// SafeSysctls is upstream's SafeSysctlAllowlist for a kernel: the safe sysctls the kernel
// namespaces (those that need a newer kernel are left out; all of them with an unknown kernel
// but the ones any kernel namespaces).
func SafeSysctls(kernel *version.Version) []string {
	var out []string
	for _, s := range safeSysctls {
		if s.kernel == "" || kernel != nil && kernel.AtLeast(version.MustParseGeneric(s.kernel)) {
			out = append(out, s.name)
		}
	}
	return out
}

// sysctlPattern is upstream's IsValidSysctlPattern: a sysctl name, with '/' or '.' between
// segments, optionally ending in '*'.
var sysctlPattern = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]$`)

// maxSysctlLength is upstream's SysctlMaxLength.
const maxSysctlLength = 253

// SysctlAllowlist is upstream's patternAllowlist: sysctls and prefixes ("net.core.*") a pod may
// set, each with its namespace.
type SysctlAllowlist struct {
	sysctls, prefixes map[string]utilsysctl.Namespace
}

// NewSysctlAllowlist builds the allowlist from the safe sysctls and allowedUnsafeSysctls; a
// pattern that is malformed or not known to be namespaced is an error naming it, as upstream.
func NewSysctlAllowlist(patterns []string) (*SysctlAllowlist, error) {
	w := &SysctlAllowlist{sysctls: map[string]utilsysctl.Namespace{}, prefixes: map[string]utilsysctl.Namespace{}}
	for _, p := range patterns {
		if len(p) > maxSysctlLength || !sysctlPattern.MatchString(p) {
			return nil, fmt.Errorf("sysctl %q must have at most %d characters and match regex %s", p, maxSysctlLength, sysctlPattern)
		}
		ns, nameOrPrefix, prefixed := utilsysctl.GetNamespace(p)
		if ns == utilsysctl.UnknownNamespace {
			return nil, fmt.Errorf("the sysctls %q are not known to be namespaced", nameOrPrefix)
		}
		if prefixed {
			w.prefixes[nameOrPrefix] = ns
		} else {
			w.sysctls[nameOrPrefix] = ns
		}
	}
	return w, nil
}

// Sysctls is upstream's sysctl admit handler: every sysctl of the pod must be allowlisted, and
// not in a namespace the pod shares with the host (network, IPC, user).
func (w *SysctlAllowlist) Sysctls(pod *v1.Pod) Result {
	if pod.Spec.SecurityContext == nil || len(pod.Spec.SecurityContext.Sysctls) == 0 {
		return Result{Admit: true}
	}
	hostUsers := pod.Spec.HostUsers == nil || *pod.Spec.HostUsers
	for _, s := range pod.Spec.SecurityContext.Sysctls {
		if err := w.check(s.Name, pod.Spec.HostNetwork, pod.Spec.HostIPC, hostUsers); err != nil {
			return Result{Reason: SysctlForbidden, Message: fmt.Sprintf("forbidden sysctl: %v", err)}
		}
	}
	return Result{Admit: true}
}

func (w *SysctlAllowlist) check(name string, hostNet, hostIPC, hostUsers bool) error {
	name = utilsysctl.NormalizeName(name)
	ns, found := w.sysctls[name]
	if !found {
		for p, pns := range w.prefixes {
			if strings.HasPrefix(name, p) {
				ns, found = pns, true
				break
			}
		}
	}
	if !found {
		return fmt.Errorf("%q not allowlisted", name)
	}
	if ns == utilsysctl.IPCNamespace && hostIPC || ns == utilsysctl.NetNamespace && hostNet || ns == utilsysctl.UserNamespace && hostUsers {
		return fmt.Errorf("%q not allowed with host %s enabled", name, ns)
	}
	return nil
}
