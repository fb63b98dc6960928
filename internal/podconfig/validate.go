package podconfig

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate checks what a node agent needs to trust in a static pod, with errors that name the
// field as the API server would. It is not the whole of the API server's ValidatePodCreate (that
// lives in k8s.io/kubernetes); it covers names, labels and annotations, containers, images,
// ports, env names, volumes and mounts, resources, probes, policies, and the rule that static
// pods may not reference API objects.
func Validate(pod *v1.Pod) field.ErrorList {
	var errs field.ErrorList
	meta := field.NewPath("metadata")
	for _, msg := range validation.IsDNS1123Subdomain(pod.Name) {
		errs = append(errs, field.Invalid(meta.Child("name"), pod.Name, msg))
	}
	for _, msg := range validation.IsDNS1123Label(pod.Namespace) {
		errs = append(errs, field.Invalid(meta.Child("namespace"), pod.Namespace, msg))
	}
	errs = append(errs, metav1validation.ValidateLabels(pod.Labels, meta.Child("labels"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(pod.Annotations, meta.Child("annotations"))...)
	errs = append(errs, validateSpec(&pod.Spec, field.NewPath("spec"))...)
	if res := apiObjectReference(&pod.Spec); res != "" {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "static pods may not reference "+res))
	}
	return errs
}

func validateSpec(spec *v1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	volumes, verrs := validateVolumes(spec.Volumes, p.Child("volumes"))
	errs = append(errs, verrs...)
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), "a pod needs at least one container"))
	}
	names := sets.New[string]()
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		cp := p.Child("initContainers").Index(i)
		errs = append(errs, validateContainer(c, names, volumes, spec.HostNetwork, cp)...)
		if c.RestartPolicy != nil && *c.RestartPolicy != v1.ContainerRestartPolicyAlways {
			errs = append(errs, field.NotSupported(cp.Child("restartPolicy"), *c.RestartPolicy, []string{string(v1.ContainerRestartPolicyAlways)}))
		}
		if c.RestartPolicy == nil && (c.LivenessProbe != nil || c.ReadinessProbe != nil || c.StartupProbe != nil) {
			errs = append(errs, field.Forbidden(cp, "probes are only allowed on init containers with restartPolicy: Always (sidecars)"))
		}
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		cp := p.Child("containers").Index(i)
		errs = append(errs, validateContainer(c, names, volumes, spec.HostNetwork, cp)...)
		if c.RestartPolicy != nil {
			errs = append(errs, field.Forbidden(cp.Child("restartPolicy"), "only init containers may set restartPolicy"))
		}
		if c.ReadinessProbe != nil && c.ReadinessProbe.TerminationGracePeriodSeconds != nil {
			errs = append(errs, field.Invalid(cp.Child("readinessProbe", "terminationGracePeriodSeconds"), *c.ReadinessProbe.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
		}
	}
	if len(spec.EphemeralContainers) > 0 { // as upstream's ValidatePodCreate: they come by the API's subresource only
		errs = append(errs, field.Forbidden(p.Child("ephemeralContainers"), "cannot be set on create"))
	}
	errs = append(errs, validateSecurity(spec, p)...)
	errs = append(errs, oneOf(p.Child("restartPolicy"), string(spec.RestartPolicy), "Always", "OnFailure", "Never")...)
	errs = append(errs, oneOf(p.Child("dnsPolicy"), string(spec.DNSPolicy), "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")...)
	if spec.DNSPolicy == v1.DNSNone && (spec.DNSConfig == nil || len(spec.DNSConfig.Nameservers) == 0) {
		errs = append(errs, field.Required(p.Child("dnsConfig", "nameservers"), "must provide at least one DNS nameserver when dnsPolicy is None"))
	}
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), *g, "must be greater than or equal to 0"))
	}
	if d := spec.ActiveDeadlineSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(p.Child("activeDeadlineSeconds"), *d, "must be greater than 0"))
	}
	if spec.Hostname != "" {
		for _, msg := range validation.IsDNS1123Label(spec.Hostname) {
			errs = append(errs, field.Invalid(p.Child("hostname"), spec.Hostname, msg))
		}
	}
	if spec.Subdomain != "" {
		for _, msg := range validation.IsDNS1123Label(spec.Subdomain) {
			errs = append(errs, field.Invalid(p.Child("subdomain"), spec.Subdomain, msg))
		}
	}
	return errs
}

func validateVolumes(vols []v1.Volume, p *field.Path) (sets.Set[string], field.ErrorList) {
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range vols {
		vp := p.Index(i)
		v := &vols[i]
		for _, msg := range validation.IsDNS1123Label(v.Name) {
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, msg))
		}
		if names.Has(v.Name) {
			errs = append(errs, field.Duplicate(vp.Child("name"), v.Name))
		}
		names.Insert(v.Name)
		if n := countSources(&v.VolumeSource); n > 1 {
			errs = append(errs, field.Forbidden(vp, "may not specify more than 1 volume type"))
		}
		if hp := v.HostPath; hp != nil && (hp.Path == "" || !strings.HasPrefix(hp.Path, "/")) {
			errs = append(errs, field.Invalid(vp.Child("hostPath", "path"), hp.Path, "must be an absolute path"))
		}
		if im := v.Image; im != nil { // as upstream's validateImageVolumeSource
			if im.Reference == "" {
				errs = append(errs, field.Required(vp.Child("image", "reference"), ""))
			} else if strings.TrimSpace(im.Reference) != im.Reference {
				errs = append(errs, field.Invalid(vp.Child("image", "reference"), im.Reference, "must not have leading or trailing whitespace"))
			}
			errs = append(errs, oneOf(vp.Child("image", "pullPolicy"), string(im.PullPolicy), "Always", "IfNotPresent", "Never")...)
		}
		if ed := v.EmptyDir; ed != nil {
			errs = append(errs, oneOf(vp.Child("emptyDir", "medium"), string(ed.Medium), "", "Memory", "HugePages")...)
			if ed.SizeLimit != nil && ed.SizeLimit.Sign() < 0 {
				errs = append(errs, field.Invalid(vp.Child("emptyDir", "sizeLimit"), ed.SizeLimit.String(), "must be greater than or equal to 0"))
			}
		}
	}
	return names, errs
}

// countSources counts the set pointer fields of a VolumeSource: exactly one may be set.
func countSources(vs *v1.VolumeSource) int {
	n := 0
	for _, one := range volumeSourceFields(vs) {
		if one {
			n++
		}
	}
	return n
}

func oneOf(p *field.Path, value string, allowed ...string) field.ErrorList {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(p, value, allowed)}
}

// apiObjectReference names the API objects a pod spec references, as upstream's
// HasAPIObjectReference does for static pods, or returns "".
func apiObjectReference(spec *v1.PodSpec) string {
	if spec.ServiceAccountName != "" {
		return "serviceaccounts"
	}
	if len(spec.ResourceClaims) > 0 {
		return "resourceclaims"
	}
	if len(spec.ImagePullSecrets) > 0 {
		return "secrets"
	}
	for _, cs := range [][]v1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			if res := envReference(&cs[i]); res != "" {
				return res
			}
		}
	}
	for _, v := range spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			return "configmaps (via configmap volumes)"
		case v.Secret != nil:
			return "secrets (via secret volumes)"
		case v.CSI != nil:
			return "csidrivers (via CSI volumes)"
		case v.PersistentVolumeClaim != nil:
			return "persistentvolumeclaims"
		case v.Ephemeral != nil:
			return "persistentvolumeclaims (via ephemeral volumes)"
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				switch {
				case s.ConfigMap != nil:
					return "configmaps (via projected volumes)"
				case s.Secret != nil:
					return "secrets (via projected volumes)"
				case s.ServiceAccountToken != nil:
					return "serviceaccounts (via projected volumes)"
				case s.ClusterTrustBundle != nil:
					return "clustertrustbundles"
				case s.PodCertificate != nil:
					return "podcertificates"
				}
			}
		}
	}
	return ""
}

func envReference(c *v1.Container) string {
	for _, e := range c.EnvFrom {
		if e.SecretRef != nil {
			return "secrets"
		}
		if e.ConfigMapRef != nil {
			return "configmaps"
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			continue
		}
		if e.ValueFrom.SecretKeyRef != nil {
			return "secrets"
		}
		if e.ValueFrom.ConfigMapKeyRef != nil {
			return "configmaps"
		}
	}
	return ""
}
