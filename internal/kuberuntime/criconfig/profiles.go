package criconfig

import (
	"errors"
	"fmt"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Seccomp is the node's seccomp settings.
type Seccomp struct {
	// Default makes RuntimeDefault the profile of containers that set none (seccompDefault).
	Default bool
	// Root is where Localhost profiles are, upstream's <root-dir>/seccomp.
	Root string
}

// errNoLocalhostProfile is upstream's message for a Localhost profile without its name (the
// API server refuses such a pod; a static pod can have one).
var errNoLocalhostProfile = errors.New("localhostProfile must be set if seccompProfile type is Localhost.") //nolint:staticcheck // upstream's message

// SeccompProfile is upstream's getSeccompProfile: the container's seccompProfile, else the
// pod's, else RuntimeDefault with seccompDefault and Unconfined without. A Localhost profile is
// the file under s.Root; the runtime fails the container when it does not exist. As upstream,
// a privileged container gets the profile too: the runtime does not apply it.
func SeccompProfile(pod *v1.Pod, c *v1.Container, s Seccomp) (*runtimeapi.SecurityProfile, error) {
	var p *v1.SeccompProfile
	switch {
	case c.SecurityContext != nil && c.SecurityContext.SeccompProfile != nil:
		p = c.SecurityContext.SeccompProfile
	case pod.Spec.SecurityContext != nil && pod.Spec.SecurityContext.SeccompProfile != nil:
		p = pod.Spec.SecurityContext.SeccompProfile
	case s.Default:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}, nil
	default:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, nil
	}
	switch p.Type {
	case v1.SeccompProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}, nil
	case v1.SeccompProfileTypeLocalhost:
		if p.LocalhostProfile == nil || *p.LocalhostProfile == "" {
			return nil, errNoLocalhostProfile
		}
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost,
			LocalhostRef: filepath.Join(s.Root, *p.LocalhostProfile)}, nil
	}
	return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, nil
}

// AppArmorProfile is upstream's getAppArmorProfile: the CRI profile for p (nil for none), and
// the deprecated string form older runtimes read. Admission has refused profiles the host
// cannot enforce.
func AppArmorProfile(p *v1.AppArmorProfile) (*runtimeapi.SecurityProfile, string, error) {
	if p == nil {
		return nil, "", nil
	}
	switch p.Type {
	case v1.AppArmorProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}, v1.DeprecatedAppArmorBetaProfileRuntimeDefault, nil
	case v1.AppArmorProfileTypeUnconfined:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}, v1.DeprecatedAppArmorBetaProfileNameUnconfined, nil
	case v1.AppArmorProfileTypeLocalhost:
		if p.LocalhostProfile == nil {
			return nil, "", errors.New("missing localhost apparmor profile name")
		}
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: *p.LocalhostProfile},
			v1.DeprecatedAppArmorBetaProfileNamePrefix + *p.LocalhostProfile, nil
	}
	return nil, "", fmt.Errorf("unknown apparmor profile type: %q", p.Type)
}
