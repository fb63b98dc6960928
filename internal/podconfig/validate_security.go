package podconfig

import (
	"regexp"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// sysctlName is upstream's SysctlContainSlashFmt: segments of [a-z0-9_-] separated by '.' or
// '/', at most 253 characters.
var sysctlName = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

// validateSecurity checks the pod's and its containers' security settings as upstream's
// validation does for what a static pod can get wrong: sysctl names (valid, unique), seccomp and
// AppArmor profile types, Localhost profiles that name their profile, and the
// supplementalGroupsPolicy.
func validateSecurity(spec *v1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sc := spec.SecurityContext; sc != nil {
		sp := p.Child("securityContext")
		seen := sets.New[string]()
		for i, s := range sc.Sysctls {
			np := sp.Child("sysctls").Index(i).Child("name")
			switch {
			case s.Name == "":
				errs = append(errs, field.Required(np, ""))
			case len(s.Name) > 253 || !sysctlName.MatchString(s.Name):
				errs = append(errs, field.Invalid(np, s.Name, "must have at most 253 characters and match regex "+sysctlName.String()))
			case seen.Has(s.Name):
				errs = append(errs, field.Duplicate(np, s.Name))
			}
			seen.Insert(s.Name)
		}
		errs = append(errs, validateSeccomp(sc.SeccompProfile, sp.Child("seccompProfile"))...)
		errs = append(errs, validateAppArmor(sc.AppArmorProfile, sp.Child("appArmorProfile"))...)
		if pol := sc.SupplementalGroupsPolicy; pol != nil {
			errs = append(errs, oneOf(sp.Child("supplementalGroupsPolicy"), string(*pol), "Merge", "Strict")...)
		}
	}
	for _, list := range []struct {
		name       string
		containers []v1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i := range list.containers {
			if sc := list.containers[i].SecurityContext; sc != nil {
				sp := p.Child(list.name).Index(i).Child("securityContext")
				errs = append(errs, validateSeccomp(sc.SeccompProfile, sp.Child("seccompProfile"))...)
				errs = append(errs, validateAppArmor(sc.AppArmorProfile, sp.Child("appArmorProfile"))...)
			}
		}
	}
	return errs
}

func validateSeccomp(sp *v1.SeccompProfile, p *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	return validateProfile(string(sp.Type), sp.LocalhostProfile, "seccomp", p)
}

func validateAppArmor(ap *v1.AppArmorProfile, p *field.Path) field.ErrorList {
	if ap == nil {
		return nil
	}
	return validateProfile(string(ap.Type), ap.LocalhostProfile, "AppArmor", p)
}

// validateProfile checks a seccomp or AppArmor profile (what: its kind): a known type, and a
// localhostProfile exactly when the type is Localhost.
func validateProfile(typ string, localhost *string, what string, p *field.Path) field.ErrorList {
	errs := oneOf(p.Child("type"), typ, "Localhost", "RuntimeDefault", "Unconfined")
	switch {
	case typ == "Localhost" && (localhost == nil || *localhost == ""):
		errs = append(errs, field.Required(p.Child("localhostProfile"), "must be set when "+what+" type is Localhost"))
	case typ != "Localhost" && localhost != nil:
		errs = append(errs, field.Invalid(p.Child("localhostProfile"), *localhost, "can only be set when "+what+" type is Localhost"))
	}
	return errs
}
