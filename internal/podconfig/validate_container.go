package podconfig

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validateContainer(c *v1.Container, names, volumes sets.Set[string], hostNetwork bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(c.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
	}
	if names.Has(c.Name) {
		errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
	}
	names.Insert(c.Name)
	if c.Image == "" {
		errs = append(errs, field.Required(p.Child("image"), "every container needs an image"))
	} else if strings.TrimSpace(c.Image) != c.Image {
		errs = append(errs, field.Invalid(p.Child("image"), c.Image, "must not have leading or trailing whitespace"))
	}
	errs = append(errs, oneOf(p.Child("imagePullPolicy"), string(c.ImagePullPolicy), "Always", "IfNotPresent", "Never")...)
	errs = append(errs, oneOf(p.Child("terminationMessagePolicy"), string(c.TerminationMessagePolicy), "File", "FallbackToLogsOnError")...)
	errs = append(errs, validatePorts(c.Ports, hostNetwork, p.Child("ports"))...)
	for i, e := range c.Env {
		for _, msg := range validation.IsEnvVarName(e.Name) {
			errs = append(errs, field.Invalid(p.Child("env").Index(i).Child("name"), e.Name, msg))
		}
	}
	mountPaths := sets.New[string]()
	for i, m := range c.VolumeMounts {
		mp := p.Child("volumeMounts").Index(i)
		if !volumes.Has(m.Name) {
			errs = append(errs, field.NotFound(mp.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(mp.Child("mountPath"), ""))
		} else if mountPaths.Has(m.MountPath) {
			errs = append(errs, field.Invalid(mp.Child("mountPath"), m.MountPath, "must be unique"))
		}
		mountPaths.Insert(m.MountPath)
	}
	errs = append(errs, validateResources(&c.Resources, p.Child("resources"))...)
	errs = append(errs, validateProbe(c.LivenessProbe, true, p.Child("livenessProbe"))...)
	errs = append(errs, validateProbe(c.ReadinessProbe, false, p.Child("readinessProbe"))...)
	errs = append(errs, validateProbe(c.StartupProbe, true, p.Child("startupProbe"))...)
	if c.Lifecycle != nil {
		errs = append(errs, validateHandler(c.Lifecycle.PostStart, p.Child("lifecycle", "postStart"))...)
		errs = append(errs, validateHandler(c.Lifecycle.PreStop, p.Child("lifecycle", "preStop"))...)
	}
	return errs
}

func validatePorts(ports []v1.ContainerPort, hostNetwork bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		pp := p.Index(i)
		if port.Name != "" {
			for _, msg := range validation.IsValidPortName(port.Name) {
				errs = append(errs, field.Invalid(pp.Child("name"), port.Name, msg))
			}
			if names.Has(port.Name) {
				errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
			}
			names.Insert(port.Name)
		}
		for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
			errs = append(errs, field.Invalid(pp.Child("containerPort"), port.ContainerPort, msg))
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				errs = append(errs, field.Invalid(pp.Child("hostPort"), port.HostPort, msg))
			}
		}
		if hostNetwork && port.HostPort != port.ContainerPort {
			errs = append(errs, field.Invalid(pp.Child("containerPort"), port.ContainerPort, "must match `hostPort` when `hostNetwork` is true"))
		}
		errs = append(errs, oneOf(pp.Child("protocol"), string(port.Protocol), "TCP", "UDP", "SCTP")...)
	}
	return errs
}

func validateResources(r *v1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, q := range r.Limits {
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(p.Child("limits").Key(string(name)), q.String(), "must be greater than or equal to 0"))
		}
	}
	for name, q := range r.Requests {
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), q.String(), "must be greater than or equal to 0"))
		}
		if l, ok := r.Limits[name]; ok && q.Cmp(l) > 0 {
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), q.String(), "must be less than or equal to "+string(name)+" limit of "+l.String()))
		}
	}
	return errs
}

func validateProbe(pr *v1.Probe, successMustBeOne bool, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	var errs field.ErrorList
	positive := map[string]int32{"periodSeconds": pr.PeriodSeconds, "timeoutSeconds": pr.TimeoutSeconds,
		"successThreshold": pr.SuccessThreshold, "failureThreshold": pr.FailureThreshold}
	for _, name := range []string{"periodSeconds", "timeoutSeconds", "successThreshold", "failureThreshold"} {
		if positive[name] < 1 {
			errs = append(errs, field.Invalid(p.Child(name), positive[name], "must be greater than or equal to 1"))
		}
	}
	if pr.InitialDelaySeconds < 0 {
		errs = append(errs, field.Invalid(p.Child("initialDelaySeconds"), pr.InitialDelaySeconds, "must be greater than or equal to 0"))
	}
	if successMustBeOne && pr.SuccessThreshold != 1 {
		errs = append(errs, field.Invalid(p.Child("successThreshold"), pr.SuccessThreshold, "must be 1"))
	}
	n := 0
	for _, set := range []bool{pr.Exec != nil, pr.HTTPGet != nil, pr.TCPSocket != nil, pr.GRPC != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		errs = append(errs, field.Required(p, "must specify exactly one handler type (exec, httpGet, tcpSocket or grpc)"))
	}
	if pr.HTTPGet != nil {
		errs = append(errs, validatePortOrName(pr.HTTPGet.Port.IntValue(), pr.HTTPGet.Port.StrVal, p.Child("httpGet", "port"))...)
	}
	if pr.TCPSocket != nil {
		errs = append(errs, validatePortOrName(pr.TCPSocket.Port.IntValue(), pr.TCPSocket.Port.StrVal, p.Child("tcpSocket", "port"))...)
	}
	return errs
}

func validateHandler(h *v1.LifecycleHandler, p *field.Path) field.ErrorList {
	if h == nil {
		return nil
	}
	n := 0
	for _, set := range []bool{h.Exec != nil, h.HTTPGet != nil, h.TCPSocket != nil, h.Sleep != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return field.ErrorList{field.Required(p, "must specify exactly one handler type (exec, httpGet, sleep)")}
	}
	return nil
}

func validatePortOrName(num int, name string, p *field.Path) field.ErrorList {
	if name != "" {
		var errs field.ErrorList
		for _, msg := range validation.IsValidPortName(name) {
			errs = append(errs, field.Invalid(p, name, msg))
		}
		return errs
	}
	var errs field.ErrorList
	for _, msg := range validation.IsValidPortNum(num) {
		errs = append(errs, field.Invalid(p, num, msg))
	}
	return errs
}

// volumeSourceFields lists, for each volume type, whether it is set.
func volumeSourceFields(vs *v1.VolumeSource) []bool {
	return []bool{vs.HostPath != nil, vs.EmptyDir != nil, vs.GCEPersistentDisk != nil, vs.AWSElasticBlockStore != nil,
		vs.GitRepo != nil, vs.Secret != nil, vs.NFS != nil, vs.ISCSI != nil, vs.Glusterfs != nil,
		vs.PersistentVolumeClaim != nil, vs.RBD != nil, vs.FlexVolume != nil, vs.Cinder != nil, vs.CephFS != nil,
		vs.Flocker != nil, vs.DownwardAPI != nil, vs.FC != nil, vs.AzureFile != nil, vs.ConfigMap != nil,
		vs.VsphereVolume != nil, vs.Quobyte != nil, vs.AzureDisk != nil, vs.PhotonPersistentDisk != nil,
		vs.Projected != nil, vs.PortworxVolume != nil, vs.ScaleIO != nil, vs.StorageOS != nil, vs.CSI != nil,
		vs.Ephemeral != nil, vs.Image != nil}
}
