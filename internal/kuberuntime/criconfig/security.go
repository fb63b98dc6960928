package criconfig

import (
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// effectiveSC merges the pod's security context under the container's, as upstream's
// DetermineEffectiveSecurityContext.
func effectiveSC(pod *v1.Pod, c *v1.Container) *v1.SecurityContext {
	sc := &v1.SecurityContext{}
	if p := pod.Spec.SecurityContext; p != nil {
		sc.RunAsUser, sc.RunAsGroup, sc.RunAsNonRoot = p.RunAsUser, p.RunAsGroup, p.RunAsNonRoot
		sc.SELinuxOptions, sc.SeccompProfile = p.SELinuxOptions, p.SeccompProfile
	}
	if cs := c.SecurityContext; cs != nil {
		if cs.RunAsUser != nil {
			sc.RunAsUser = cs.RunAsUser
		}
		if cs.RunAsGroup != nil {
			sc.RunAsGroup = cs.RunAsGroup
		}
		if cs.RunAsNonRoot != nil {
			sc.RunAsNonRoot = cs.RunAsNonRoot
		}
		if cs.SELinuxOptions != nil {
			sc.SELinuxOptions = cs.SELinuxOptions
		}
		if cs.SeccompProfile != nil {
			sc.SeccompProfile = cs.SeccompProfile
		}
		sc.Capabilities, sc.Privileged = cs.Capabilities, cs.Privileged
		sc.ReadOnlyRootFilesystem, sc.AllowPrivilegeEscalation = cs.ReadOnlyRootFilesystem, cs.AllowPrivilegeEscalation
		sc.ProcMount = cs.ProcMount
	}
	return sc
}

// Security builds the container's LinuxContainerSecurityContext as upstream's
// determineEffectiveSecurityContext (seccomp and AppArmor apart). hostMaskedPaths are masked
// besides DefaultMaskedPaths (see ProcPaths).
func Security(pod *v1.Pod, c *v1.Container, hostMaskedPaths []string) *runtimeapi.LinuxContainerSecurityContext {
	sc := effectiveSC(pod, c)
	out := &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: NamespaceOptions(pod)}
	if sc.RunAsUser != nil {
		out.RunAsUser = &runtimeapi.Int64Value{Value: *sc.RunAsUser}
	}
	if sc.RunAsGroup != nil {
		out.RunAsGroup = &runtimeapi.Int64Value{Value: *sc.RunAsGroup}
	}
	if sc.Privileged != nil {
		out.Privileged = *sc.Privileged
	}
	if sc.ReadOnlyRootFilesystem != nil {
		out.ReadonlyRootfs = *sc.ReadOnlyRootFilesystem
	}
	// no_new_privs: set only when escalation is explicitly disallowed and not privileged.
	if sc.AllowPrivilegeEscalation != nil && !out.Privileged {
		out.NoNewPrivs = !*sc.AllowPrivilegeEscalation
	}
	if caps := sc.Capabilities; caps != nil {
		out.Capabilities = &runtimeapi.Capability{}
		for _, a := range caps.Add {
			out.Capabilities.AddCapabilities = append(out.Capabilities.AddCapabilities, string(a))
		}
		for _, d := range caps.Drop {
			out.Capabilities.DropCapabilities = append(out.Capabilities.DropCapabilities, string(d))
		}
	}
	if so := sc.SELinuxOptions; so != nil {
		out.SelinuxOptions = &runtimeapi.SELinuxOption{User: so.User, Role: so.Role, Type: so.Type, Level: so.Level}
	}
	if p := pod.Spec.SecurityContext; p != nil {
		out.SupplementalGroups = append(out.SupplementalGroups, p.SupplementalGroups...)
		if p.FSGroup != nil {
			out.SupplementalGroups = append(out.SupplementalGroups, *p.FSGroup)
		}
		if p.SupplementalGroupsPolicy != nil && *p.SupplementalGroupsPolicy == v1.SupplementalGroupsPolicyStrict {
			out.SupplementalGroupsPolicy = runtimeapi.SupplementalGroupsPolicy_Strict
		}
	}
	out.MaskedPaths, out.ReadonlyPaths = ProcPaths(sc.ProcMount, hostMaskedPaths)
	return out
}

// VerifyRunAsNonRoot enforces runAsNonRoot against the effective user: an explicit runAsUser
// 0, or an image user that is root, by name or not numeric, fails, with upstream's messages.
// imageUID is the image's numeric user, imageUser its user name (one of them or neither).
func VerifyRunAsNonRoot(pod *v1.Pod, c *v1.Container, imageUID *int64, imageUser string) error {
	sc := effectiveSC(pod, c)
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		return nil
	}
	if sc.RunAsUser != nil {
		if *sc.RunAsUser == 0 {
			return fmt.Errorf("container's runAsUser breaks non-root policy (pod: %q, container: %s)", pod.Name, c.Name)
		}
		return nil
	}
	switch {
	case imageUID != nil && *imageUID == 0:
		return fmt.Errorf("container has runAsNonRoot and image will run as root (pod: %q, container: %s)", pod.Name, c.Name)
	case imageUID != nil:
		return nil
	case imageUser != "":
		if n, err := strconv.ParseInt(imageUser, 10, 64); err == nil && n != 0 {
			return nil
		}
		return fmt.Errorf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root (pod: %q, container: %s)", imageUser, pod.Name, c.Name)
	}
	return fmt.Errorf("container has runAsNonRoot and image will run as root (pod: %q, container: %s)", pod.Name, c.Name)
}
