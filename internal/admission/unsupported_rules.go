package admission

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Why a field is refused, for the fields that share a reason.
const (
	needsUserNamespaces = "needs user namespaces, which nodelet does not support yet"
	needsDRA            = "dynamic resource allocation (DRA) is not supported by nodelet yet"
	volumeUsers         = "file owners in volumes (AtomicWriteVolumeUserFields, alpha) are not supported by nodelet yet"
)

// supportedVolumes are the volume types nodelet sets up (internal/volumes).
func supportedVolumes() []string {
	return []string{"emptyDir", "hostPath", "configMap", "secret", "projected", "downwardAPI", "image"}
}

// unsupportedRules are the fields whose values, or some of them, nodelet cannot honour, in
// the order of the API's fields. A value is refused only when nodelet would run the pod
// differently from what it asks.
func unsupportedRules() []unsupportedRule {
	rules := []unsupportedRule{
		podRule("spec.hostUsers", "false "+needsUserNamespaces, func(s *v1.PodSpec) bool {
			return s.HostUsers != nil && !*s.HostUsers
		}),
		podRule("spec.setHostnameAsFQDN", "true with a subdomain: nodelet does not make the pod's FQDN its hostname yet", func(s *v1.PodSpec) bool {
			return s.SetHostnameAsFQDN != nil && *s.SetHostnameAsFQDN && s.Subdomain != "" && !s.HostNetwork
		}),
		podRule("spec.resourceClaims", needsDRA, func(s *v1.PodSpec) bool { return len(s.ResourceClaims) > 0 }),
		{UnsupportedField{"spec.resources", "pod-level limits (and claims) are not supported by nodelet yet: it sets no limits on the pod's cgroup"},
			func(pod *v1.Pod) []string {
				r := pod.Spec.Resources
				if r == nil {
					return nil
				}
				return append(when(len(r.Limits) > 0, "spec.resources.limits"), when(len(r.Claims) > 0, "spec.resources.claims")...)
			}},
		podRule("spec.hostnameOverride", "nodelet does not set the pod's hostname from hostnameOverride yet", func(s *v1.PodSpec) bool {
			return s.HostnameOverride != nil
		}),
	}
	rules = append(rules, containerRules()...)
	return append(rules, volumeRules()...)
}

func containerRules() []unsupportedRule {
	return []unsupportedRule{
		containerRule("spec.containers[].env[].valueFrom.fileKeyRef", "environment variables from files (EnvFiles) are not supported by nodelet yet",
			func(c *v1.Container) []string {
				var out []string
				for i, e := range c.Env {
					out = append(out, when(e.ValueFrom != nil && e.ValueFrom.FileKeyRef != nil, fmt.Sprintf("env[%d].valueFrom.fileKeyRef", i))...)
				}
				return out
			}),
		containerRule("spec.containers[].resources.limits", "hugepages-<size> limits are not enforced by nodelet yet: "+
			"upstream sets hugetlb limits; nodelet sets none",
			func(c *v1.Container) []string {
				var out []string
				for _, name := range sortedNames(c.Resources.Limits) {
					refused := strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
					out = append(out, when(refused, fmt.Sprintf("resources.limits[%s]", name))...)
				}
				return out
			}),
		containerRule("spec.containers[].resources.claims", needsDRA, func(c *v1.Container) []string {
			return when(len(c.Resources.Claims) > 0, "resources.claims")
		}),
		containerRule("spec.containers[].restartPolicyRules", "action RestartAllContainers is not supported by nodelet yet", func(c *v1.Container) []string {
			var out []string
			for i, r := range c.RestartPolicyRules {
				out = append(out, when(r.Action == v1.ContainerRestartRuleActionRestartAllContainers, fmt.Sprintf("restartPolicyRules[%d].action", i))...)
			}
			return out
		}),
		containerRule("spec.containers[].volumeMounts[].bindMountOptions", "bind mount options (VolumeBindMountOptions, alpha) are not supported by nodelet yet",
			func(c *v1.Container) []string {
				var out []string
				for i, m := range c.VolumeMounts {
					out = append(out, when(len(m.BindMountOptions) > 0, fmt.Sprintf("volumeMounts[%d].bindMountOptions", i))...)
				}
				return out
			}),
		containerRule("spec.containers[].volumeDevices", "raw block devices are not supported by nodelet (they come from persistentVolumeClaim volumes)",
			func(c *v1.Container) []string { return when(len(c.VolumeDevices) > 0, "volumeDevices") }),
		containerRule("spec.containers[].livenessProbe.httpGet.protocol", "HTTP/2 (h2c) probes and hooks (H2CContainerProbe, alpha) are not supported by nodelet yet",
			func(c *v1.Container) []string {
				return handlers(c, func(p *v1.ProbeHandler) bool { return p.HTTPGet != nil && p.HTTPGet.Protocol != nil }, "httpGet.protocol")
			}),
		containerRule("spec.containers[].livenessProbe.grpc.mode", "gRPC probes over TLS (GRPCContainerProbeTLS, alpha) are not supported by nodelet yet",
			func(c *v1.Container) []string {
				return handlers(c, func(p *v1.ProbeHandler) bool { return p.GRPC != nil && p.GRPC.Mode != nil }, "grpc.mode")
			}),
		containerRule("spec.containers[].lifecycle.stopSignal", "custom stop signals (ContainerStopSignals, alpha) are not supported by nodelet yet",
			func(c *v1.Container) []string {
				return when(c.Lifecycle != nil && c.Lifecycle.StopSignal != nil, "lifecycle.stopSignal")
			}),
		containerRule("spec.containers[].securityContext.procMount", "Unmasked "+needsUserNamespaces, func(c *v1.Container) []string {
			sc := c.SecurityContext
			return when(sc != nil && sc.ProcMount != nil && *sc.ProcMount == v1.UnmaskedProcMount, "securityContext.procMount")
		}),
	}
}

// handlers returns "<probe or hook>.<sub>" for each of the container's probes and lifecycle
// hooks whose handler matches.
func handlers(c *v1.Container, match func(*v1.ProbeHandler) bool, sub string) []string {
	var out []string
	for _, p := range []struct {
		name  string
		probe *v1.Probe
	}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}} {
		out = append(out, when(p.probe != nil && match(&p.probe.ProbeHandler), p.name+"."+sub)...)
	}
	if c.Lifecycle != nil {
		for _, h := range []struct {
			name    string
			handler *v1.LifecycleHandler
		}{{"lifecycle.postStart", c.Lifecycle.PostStart}, {"lifecycle.preStop", c.Lifecycle.PreStop}} {
			if h.handler != nil {
				out = append(out, when(match(&v1.ProbeHandler{HTTPGet: h.handler.HTTPGet}), h.name+"."+sub)...)
			}
		}
	}
	return out
}

func volumeRules() []unsupportedRule {
	rules := unsupportedVolumeTypes()
	return append(rules,
		volumeRule("spec.volumes[].emptyDir.medium", "HugePages media are not supported by nodelet (it has no hugetlbfs support)", func(v *v1.Volume) []string {
			return when(v.EmptyDir != nil && strings.HasPrefix(string(v.EmptyDir.Medium), string(v1.StorageMediumHugePages)), "emptyDir.medium")
		}),
		volumeRule("spec.volumes[].emptyDir.mode", "an emptyDir's mode (EmptyDirVolumeMode, alpha) is not supported by nodelet yet", func(v *v1.Volume) []string {
			return when(v.EmptyDir != nil && v.EmptyDir.Mode != nil, "emptyDir.mode")
		}),
		volumeRule("spec.volumes[].secret.defaultUser", volumeUsers, func(v *v1.Volume) []string {
			return when(v.Secret != nil && v.Secret.DefaultUser != nil, "secret.defaultUser")
		}),
		volumeRule("spec.volumes[].configMap.defaultUser", volumeUsers, func(v *v1.Volume) []string {
			return when(v.ConfigMap != nil && v.ConfigMap.DefaultUser != nil, "configMap.defaultUser")
		}),
		volumeRule("spec.volumes[].configMap.items[].user", volumeUsers, keyUsers),
		volumeRule("spec.volumes[].downwardAPI.defaultUser", volumeUsers, func(v *v1.Volume) []string {
			return when(v.DownwardAPI != nil && v.DownwardAPI.DefaultUser != nil, "downwardAPI.defaultUser")
		}),
		volumeRule("spec.volumes[].downwardAPI.items[].user", volumeUsers, fileUsers),
		volumeRule("spec.volumes[].projected.defaultUser", volumeUsers, func(v *v1.Volume) []string {
			return when(v.Projected != nil && v.Projected.DefaultUser != nil, "projected.defaultUser")
		}),
		volumeRule("spec.volumes[].projected.sources[].clusterTrustBundle", "clusterTrustBundle projections are not supported by nodelet yet",
			projections(func(p *v1.VolumeProjection) bool { return p.ClusterTrustBundle != nil }, "clusterTrustBundle")),
		volumeRule("spec.volumes[].projected.sources[].podCertificate", "podCertificate projections are not supported by nodelet yet",
			projections(func(p *v1.VolumeProjection) bool { return p.PodCertificate != nil }, "podCertificate")),
		volumeRule("spec.volumes[].projected.sources[].serviceAccountToken.user", volumeUsers,
			projections(func(p *v1.VolumeProjection) bool {
				return p.ServiceAccountToken != nil && p.ServiceAccountToken.User != nil
			}, "serviceAccountToken.user")),
	)
}

// unsupportedVolumeTypes refuses every volume type but the supported ones: a type added to
// the API is refused until nodelet supports it.
func unsupportedVolumeTypes() []unsupportedRule {
	supported := map[string]bool{}
	for _, name := range supportedVolumes() {
		supported[name] = true
	}
	names := supportedVolumes()
	why := "this volume type is not supported by nodelet, which supports " + strings.Join(names[:len(names)-1], ", ") +
		" and " + names[len(names)-1] + " volumes"
	var rules []unsupportedRule
	t := reflect.TypeFor[v1.VolumeSource]()
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if supported[name] {
			continue
		}
		rules = append(rules, volumeRule("spec.volumes[]."+name, why, func(v *v1.Volume) []string {
			return when(!reflect.ValueOf(v.VolumeSource).Field(i).IsNil(), name)
		}))
	}
	return rules
}

// sortedNames are the resource names of list, sorted.
func sortedNames(list v1.ResourceList) []v1.ResourceName {
	out := make([]v1.ResourceName, 0, len(list))
	for name := range list {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// keyUsers finds the items with a user in configMap and secret volumes and in the configMap
// and secret sources of projected volumes.
func keyUsers(v *v1.Volume) []string {
	var out []string
	items := func(prefix string, list []v1.KeyToPath) {
		for i, it := range list {
			out = append(out, when(it.User != nil, fmt.Sprintf("%s.items[%d].user", prefix, i))...)
		}
	}
	if v.ConfigMap != nil {
		items("configMap", v.ConfigMap.Items)
	}
	if v.Secret != nil {
		items("secret", v.Secret.Items)
	}
	if v.Projected != nil {
		for i, s := range v.Projected.Sources {
			if s.ConfigMap != nil {
				items(fmt.Sprintf("projected.sources[%d].configMap", i), s.ConfigMap.Items)
			}
			if s.Secret != nil {
				items(fmt.Sprintf("projected.sources[%d].secret", i), s.Secret.Items)
			}
		}
	}
	return out
}

// fileUsers finds the items with a user in downwardAPI volumes and projections.
func fileUsers(v *v1.Volume) []string {
	var out []string
	items := func(prefix string, list []v1.DownwardAPIVolumeFile) {
		for i, it := range list {
			out = append(out, when(it.User != nil, fmt.Sprintf("%s.items[%d].user", prefix, i))...)
		}
	}
	if v.DownwardAPI != nil {
		items("downwardAPI", v.DownwardAPI.Items)
	}
	if v.Projected != nil {
		for i, s := range v.Projected.Sources {
			if s.DownwardAPI != nil {
				items(fmt.Sprintf("projected.sources[%d].downwardAPI", i), s.DownwardAPI.Items)
			}
		}
	}
	return out
}

// projections finds the sources of a projected volume that match, as
// "projected.sources[i].<sub>".
func projections(match func(*v1.VolumeProjection) bool, sub string) func(v *v1.Volume) []string {
	return func(v *v1.Volume) []string {
		if v.Projected == nil {
			return nil
		}
		var out []string
		for i := range v.Projected.Sources {
			out = append(out, when(match(&v.Projected.Sources[i]), fmt.Sprintf("projected.sources[%d].%s", i, sub))...)
		}
		return out
	}
}
