package podfields

import (
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// APIField is one field the walk of the pod spec found.
type APIField struct {
	// Path is the field's JSON path: "spec.hostUsers", "spec.containers[].resizePolicy".
	Path string
	// SameAs is, for a field of a type whose fields are listed elsewhere, that place:
	// spec.initContainers has the fields of spec.containers[]. Empty otherwise.
	SameAs string
}

// entered are the API types whose fields are listed one by one, each at one place, its
// canonical path; anywhere else such a type appears it is one field, SameAs its canonical
// path. The other types are single fields (the volume types nodelet does not support, node
// selectors, probe actions' ports...).
func entered() map[reflect.Type]string {
	return map[reflect.Type]string{
		reflect.TypeFor[v1.PodSpec]():            "spec",
		reflect.TypeFor[v1.PodSecurityContext](): "spec.securityContext",
		reflect.TypeFor[v1.Affinity]():           "spec.affinity",
		reflect.TypeFor[v1.NodeAffinity]():       "spec.affinity.nodeAffinity",
		reflect.TypeFor[v1.PodDNSConfig]():       "spec.dnsConfig",
		reflect.TypeFor[v1.PodOS]():              "spec.os",

		reflect.TypeFor[v1.Container]():            "spec.containers[]",
		reflect.TypeFor[v1.EphemeralContainer]():   "spec.ephemeralContainers[]",
		reflect.TypeFor[v1.ContainerPort]():        "spec.containers[].ports[]",
		reflect.TypeFor[v1.EnvFromSource]():        "spec.containers[].envFrom[]",
		reflect.TypeFor[v1.EnvVar]():               "spec.containers[].env[]",
		reflect.TypeFor[v1.EnvVarSource]():         "spec.containers[].env[].valueFrom",
		reflect.TypeFor[v1.ResourceRequirements](): "spec.containers[].resources",
		reflect.TypeFor[v1.VolumeMount]():          "spec.containers[].volumeMounts[]",
		reflect.TypeFor[v1.Probe]():                "spec.containers[].livenessProbe",
		reflect.TypeFor[v1.HTTPGetAction]():        "spec.containers[].livenessProbe.httpGet",
		reflect.TypeFor[v1.TCPSocketAction]():      "spec.containers[].livenessProbe.tcpSocket",
		reflect.TypeFor[v1.GRPCAction]():           "spec.containers[].livenessProbe.grpc",
		reflect.TypeFor[v1.Lifecycle]():            "spec.containers[].lifecycle",
		reflect.TypeFor[v1.LifecycleHandler]():     "spec.containers[].lifecycle.postStart",
		reflect.TypeFor[v1.SecurityContext]():      "spec.containers[].securityContext",

		reflect.TypeFor[v1.Volume]():                        "spec.volumes[]",
		reflect.TypeFor[v1.HostPathVolumeSource]():          "spec.volumes[].hostPath",
		reflect.TypeFor[v1.EmptyDirVolumeSource]():          "spec.volumes[].emptyDir",
		reflect.TypeFor[v1.SecretVolumeSource]():            "spec.volumes[].secret",
		reflect.TypeFor[v1.ConfigMapVolumeSource]():         "spec.volumes[].configMap",
		reflect.TypeFor[v1.KeyToPath]():                     "spec.volumes[].configMap.items[]",
		reflect.TypeFor[v1.DownwardAPIVolumeSource]():       "spec.volumes[].downwardAPI",
		reflect.TypeFor[v1.DownwardAPIVolumeFile]():         "spec.volumes[].downwardAPI.items[]",
		reflect.TypeFor[v1.ProjectedVolumeSource]():         "spec.volumes[].projected",
		reflect.TypeFor[v1.VolumeProjection]():              "spec.volumes[].projected.sources[]",
		reflect.TypeFor[v1.ServiceAccountTokenProjection](): "spec.volumes[].projected.sources[].serviceAccountToken",
		reflect.TypeFor[v1.ImageVolumeSource]():             "spec.volumes[].image",
	}
}

// Walk lists every field of v1.PodSpec, by reflection, in the API's order: the fields of the
// types in entered one by one (embedded and inline structs are flattened, as JSON does), every
// other field as one. A field the API adds shows up here, and fails the table's test until
// someone says what nodelet does with it.
func Walk() []APIField {
	w := walker{entered: entered()}
	w.walk(reflect.TypeFor[v1.PodSpec](), "spec")
	return w.out
}

type walker struct {
	entered map[reflect.Type]string
	out     []APIField
}

func (w *walker) walk(t reflect.Type, prefix string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && name == "" { // embedded or inline: its fields are the parent's
			w.walk(f.Type, prefix)
			continue
		}
		path := prefix + "." + name
		elem := f.Type
		for elem.Kind() == reflect.Pointer || elem.Kind() == reflect.Slice {
			if elem.Kind() == reflect.Slice {
				path += "[]"
			}
			elem = elem.Elem()
		}
		canonical, ok := w.entered[elem]
		switch {
		case ok && canonical == path:
			w.walk(elem, path)
		case ok:
			w.out = append(w.out, APIField{Path: strings.TrimSuffix(prefix+"."+name, "[]"), SameAs: canonical})
		default:
			w.out = append(w.out, APIField{Path: prefix + "." + name})
		}
	}
}
