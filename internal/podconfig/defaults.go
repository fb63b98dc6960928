package podconfig

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// SetDefaults applies the defaults the API server gives a v1.Pod on create, so that a static pod
// read from a file looks like the same pod read back from the API server. It mirrors upstream's
// pkg/apis/core/v1/defaults.go and its generated per-field defaults (that package lives in
// k8s.io/kubernetes, which is not importable as a library; the list is short and stable).
func SetDefaults(pod *v1.Pod) {
	spec := &pod.Spec
	// SetDefaults_Pod: a negative grace period means "as soon as possible", stored as 1.
	if spec.TerminationGracePeriodSeconds != nil && *spec.TerminationGracePeriodSeconds < 0 {
		spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	}
	if spec.EnableServiceLinks == nil {
		spec.EnableServiceLinks = ptr.To(v1.DefaultEnableServiceLinks)
	}
	// SetDefaults_PodSpec.
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = spec.DeprecatedServiceAccount
	}
	spec.DeprecatedServiceAccount = spec.ServiceAccountName
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = v1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = v1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &v1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptr.To[int64](v1.DefaultTerminationGracePeriodSeconds)
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = v1.DefaultSchedulerName
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i], spec.HostNetwork)
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i], spec.HostNetwork)
	}
	for i := range spec.EphemeralContainers {
		c := (*v1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon)
		defaultContainer(c, false)
	}
	for i := range spec.Volumes {
		defaultVolume(&spec.Volumes[i])
	}
	defaultResourceList(spec.Overhead)
	if spec.Resources != nil {
		defaultResourceList(spec.Resources.Limits)
		defaultResourceList(spec.Resources.Requests)
	}
}

func defaultContainer(c *v1.Container, hostNetwork bool) {
	if c.ImagePullPolicy == "" {
		if imageTag(c.Image) == "latest" {
			c.ImagePullPolicy = v1.PullAlways
		} else {
			c.ImagePullPolicy = v1.PullIfNotPresent
		}
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = v1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = v1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		p := &c.Ports[i]
		if p.Protocol == "" {
			p.Protocol = v1.ProtocolTCP
		}
		// defaultHostNetworkPorts: with the host's network the host port is the container port.
		if hostNetwork && p.HostPort == 0 {
			p.HostPort = p.ContainerPort
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil && vf.FieldRef != nil && vf.FieldRef.APIVersion == "" {
			vf.FieldRef.APIVersion = "v1"
		}
	}
	// SetDefaults_Pod: requests default to limits, per resource.
	if c.Resources.Limits != nil {
		if c.Resources.Requests == nil {
			c.Resources.Requests = v1.ResourceList{}
		}
		for name, q := range c.Resources.Limits {
			if _, ok := c.Resources.Requests[name]; !ok {
				c.Resources.Requests[name] = q.DeepCopy()
			}
		}
	}
	defaultResourceList(c.Resources.Limits)
	defaultResourceList(c.Resources.Requests)
	for _, p := range []*v1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		defaultProbe(p)
	}
	if c.Lifecycle != nil {
		defaultHandler(c.Lifecycle.PostStart)
		defaultHandler(c.Lifecycle.PreStop)
	}
}

func defaultProbe(p *v1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	defaultHTTPGet(p.HTTPGet)
	if p.GRPC != nil && p.GRPC.Service == nil {
		p.GRPC.Service = ptr.To("")
	}
}

func defaultHandler(h *v1.LifecycleHandler) {
	if h != nil {
		defaultHTTPGet(h.HTTPGet)
	}
}

func defaultHTTPGet(h *v1.HTTPGetAction) {
	if h == nil {
		return
	}
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = v1.URISchemeHTTP
	}
}

func defaultVolume(v *v1.Volume) {
	if ptr.AllPtrFieldsNil(&v.VolumeSource) {
		v.VolumeSource = v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}
	}
	vs := &v.VolumeSource
	if vs.Image != nil && vs.Image.PullPolicy == "" { // as a container's image
		if imageTag(vs.Image.Reference) == "latest" {
			vs.Image.PullPolicy = v1.PullAlways
		} else {
			vs.Image.PullPolicy = v1.PullIfNotPresent
		}
	}
	if vs.HostPath != nil && vs.HostPath.Type == nil {
		vs.HostPath.Type = ptr.To(v1.HostPathUnset)
	}
	if vs.Secret != nil && vs.Secret.DefaultMode == nil {
		vs.Secret.DefaultMode = ptr.To[int32](v1.SecretVolumeSourceDefaultMode)
	}
	if vs.ConfigMap != nil && vs.ConfigMap.DefaultMode == nil {
		vs.ConfigMap.DefaultMode = ptr.To[int32](v1.ConfigMapVolumeSourceDefaultMode)
	}
	if vs.DownwardAPI != nil {
		if vs.DownwardAPI.DefaultMode == nil {
			vs.DownwardAPI.DefaultMode = ptr.To[int32](v1.DownwardAPIVolumeSourceDefaultMode)
		}
		for i := range vs.DownwardAPI.Items {
			if f := vs.DownwardAPI.Items[i].FieldRef; f != nil && f.APIVersion == "" {
				f.APIVersion = "v1"
			}
		}
	}
	if vs.Projected != nil {
		if vs.Projected.DefaultMode == nil {
			vs.Projected.DefaultMode = ptr.To[int32](v1.ProjectedVolumeSourceDefaultMode)
		}
		for i := range vs.Projected.Sources {
			if t := vs.Projected.Sources[i].ServiceAccountToken; t != nil && t.ExpirationSeconds == nil {
				t.ExpirationSeconds = ptr.To[int64](3600)
			}
		}
	}
	if vs.EmptyDir != nil && vs.EmptyDir.SizeLimit != nil {
		vs.EmptyDir.SizeLimit.RoundUp(-3)
	}
}

// defaultResourceList rounds quantities up to milli scale, as the API server does.
func defaultResourceList(rl v1.ResourceList) {
	for name, q := range rl {
		q.RoundUp(-3)
		rl[name] = q
	}
}

// imageTag returns the tag of an image reference as upstream's parsers.ParseImageName sees it
// for pull-policy defaulting: "latest" when there is neither tag nor digest.
func imageTag(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		return "" // a digest: never "latest"
	}
	lastSlash := strings.LastIndex(image, "/")
	if i := strings.LastIndex(image, ":"); i > lastSlash {
		return image[i+1:]
	}
	return "latest"
}
