package admission

import (
	"fmt"
	"os"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// AppArmorNotAdmitted is upstream's AppArmorNotAdmittedReason.
const AppArmorNotAdmitted = "AppArmor"

// AppArmorProfile is upstream's apparmor.GetProfile: the container's appArmorProfile, else the
// deprecated container annotation, else the pod's; nil when none applies.
func AppArmorProfile(pod *v1.Pod, c *v1.Container) *v1.AppArmorProfile {
	if c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil {
		return c.SecurityContext.AppArmorProfile
	}
	if val, ok := pod.Annotations[v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+c.Name]; ok {
		switch {
		case val == v1.DeprecatedAppArmorBetaProfileRuntimeDefault:
			return &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}
		case val == v1.DeprecatedAppArmorBetaProfileNameUnconfined:
			return &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeUnconfined}
		case strings.HasPrefix(val, v1.DeprecatedAppArmorBetaProfileNamePrefix):
			name := strings.TrimPrefix(val, v1.DeprecatedAppArmorBetaProfileNamePrefix)
			return &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: &name}
		}
		// Any other value is no profile, as upstream (validation refuses it for API pods).
	}
	if pod.Spec.SecurityContext != nil && pod.Spec.SecurityContext.AppArmorProfile != nil {
		return pod.Spec.SecurityContext.AppArmorProfile
	}
	return nil
}

// appArmorRequired is upstream's isRequired: some profile other than Unconfined is asked for.
func appArmorRequired(pod *v1.Pod) bool {
	for _, c := range allContainers(pod) {
		if p := AppArmorProfile(pod, c); p != nil && p.Type != v1.AppArmorProfileTypeUnconfined {
			return true
		}
	}
	if pod.Spec.SecurityContext != nil && pod.Spec.SecurityContext.AppArmorProfile != nil &&
		pod.Spec.SecurityContext.AppArmorProfile.Type != v1.AppArmorProfileTypeUnconfined {
		return true
	}
	for k, v := range pod.Annotations { // any value but unconfined, even one no container uses
		if strings.HasPrefix(k, v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) && v != v1.DeprecatedAppArmorBetaProfileNameUnconfined {
			return true
		}
	}
	return false
}

// AppArmor is upstream's AppArmor admit handler: a pending pod that asks for an AppArmor profile
// other than Unconfined is refused when the host cannot enforce it (hostErr, from
// AppArmorHostError), or when a Localhost profile has no name.
func AppArmor(pod *v1.Pod, hostErr error) Result {
	if pod.Status.Phase != v1.PodPending || !appArmorRequired(pod) {
		return Result{Admit: true}
	}
	refuse := func(err error) Result {
		return Result{Reason: AppArmorNotAdmitted, Message: fmt.Sprintf("Cannot enforce AppArmor: %v", err)}
	}
	if hostErr != nil {
		return refuse(hostErr)
	}
	for _, c := range allContainers(pod) {
		p := AppArmorProfile(pod, c)
		if p != nil && p.Type == v1.AppArmorProfileTypeLocalhost && (p.LocalhostProfile == nil || strings.TrimSpace(*p.LocalhostProfile) == "") {
			return refuse(fmt.Errorf("invalid empty AppArmor profile name: %q", p))
		}
	}
	return Result{Admit: true}
}

// AppArmorHostError says why this host cannot enforce AppArmor profiles, or nil when it can:
// libcontainer's IsEnabled reads /sys/module/apparmor/parameters/enabled.
func AppArmorHostError(sysModule string) error {
	b, err := os.ReadFile(sysModule + "/apparmor/parameters/enabled")
	if err != nil || !strings.HasPrefix(string(b), "Y") {
		return fmt.Errorf("AppArmor is not enabled on the host")
	}
	return nil
}

// allContainers lists the pod's init, regular and ephemeral containers (upstream's
// podutil.AllContainers).
func allContainers(pod *v1.Pod) []*v1.Container {
	all := append(ptrs(pod.Spec.InitContainers), ptrs(pod.Spec.Containers)...)
	return append(all, ephemeralPtrs(pod)...)
}
