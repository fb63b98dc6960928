package kubeletconfig

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// implementedFields are the KubeletConfiguration fields (JSON paths) that
// nodelet honours. A file may set any other field, but if it sets one to a
// non-default value the field is reported in Config.Ignored and logged.
//
// A dotted path ("logging.verbosity") marks a partially implemented object:
// the object's other keys are checked one level down ("logging.format").
//
// Extend this list when a feature lands; validation for the new field goes in
// validation.go.
var implementedFields = []string{
	// Static pods (file and HTTP sources).
	"staticPodPath",
	"staticPodURL",
	"staticPodURLHeader",
	"fileCheckFrequency",
	"httpCheckFrequency",
	"syncFrequency",
	"maxPods",

	// CRI and the pods it runs.
	"containerRuntimeEndpoint",
	"podLogsDir",
	"serializeImagePulls",
	"seccompDefault",
	"failCgroupV1",
	"singleProcessOOMKill",
	"podPidsLimit",
	"cgroupRoot",
	"cgroupsPerQOS",
	"cgroupDriver",
	"allowedUnsafeSysctls",
	"clusterDNS",
	"clusterDomain",
	"resolvConf",
	"containerLogMaxSize",
	"containerLogMaxFiles",
	"containerLogMaxWorkers",
	"containerLogMonitorInterval",
	"imageGCHighThresholdPercent",
	"imageGCLowThresholdPercent",
	"imageMinimumGCAge",
	"imageMaximumGCAge",

	// Eviction (internal/eviction).
	"evictionHard",
	"evictionSoft",
	"evictionSoftGracePeriod",
	"evictionMinimumReclaim",
	"evictionPressureTransitionPeriod",
	"evictionMaxPodGracePeriod",
	"mergeDefaultEvictionSettings",
	"kernelMemcgNotification",
	"volumeStatsAggPeriod",

	// API-server mode: node registration, status, lease.
	"nodeStatusUpdateFrequency",
	"nodeStatusReportFrequency",
	"nodeLeaseDurationSeconds",
	"nodeStatusMaxImages",
	"registerWithTaints",
	"kubeReserved",
	"systemReserved",
	"enforceNodeAllocatable",
	"kubeReservedCgroup",
	"systemReservedCgroup",

	// Kubelet HTTP servers.
	"authentication.x509",
	"authentication.x509.clientCAFile",
	"authentication.webhook",
	"authentication.anonymous",
	"authorization.mode",
	"authorization.webhook",
	"tlsCertFile",
	"tlsPrivateKeyFile",
	"rotateCertificates",
	"serverTLSBootstrap",
	"address",
	"port",
	"readOnlyPort",
	"enableProfilingHandler",

	// Logging: applied to klog by Load.
	"logging.verbosity",
	"logging.vmodule",

	// Feature gates nodelet reads; any other gate is reported as ignored.
	"featureGates.EventedPLEG",
	"featureGates.RotateKubeletServerCertificate",
	"featureGates.GracefulNodeShutdown",
	"featureGates.GracefulNodeShutdownBasedOnPodPriority",
	"shutdownGracePeriod",
	"shutdownGracePeriodCriticalPods",
	"shutdownGracePeriodByPodPriority",
}

// acceptedFields are not implemented yet but are accepted silently: they only
// tune features nodelet does not have yet (API-server mode: node status and
// lease; CRI call timeouts), so ignoring them changes nothing today. They are
// validated like implemented fields so a bad value fails now rather than
// when the feature lands. Move an entry to implementedFields when it is used.
var acceptedFields = []string{
	"runtimeRequestTimeout",
}

// isKnownField reports whether path is implemented or accepted.
func isKnownField(path string) bool {
	return slices.Contains(implementedFields, path) || slices.Contains(acceptedFields, path)
}

// hasKnownChild reports whether some implemented or accepted path lies under
// path.
func hasKnownChild(path string) bool {
	prefix := path + "."
	for _, list := range [][]string{implementedFields, acceptedFields} {
		for _, f := range list {
			if strings.HasPrefix(f, prefix) {
				return true
			}
		}
	}
	return false
}

// ignoredFields returns the sorted JSON paths of fields the file sets (raw
// keys) that nodelet does not implement and whose resolved value differs from
// the resolved value of an empty file. Setting a field to its default is not
// reported.
func ignoredFields(raw map[string]any, got kubeletconfigv1beta1.KubeletConfiguration) ([]string, error) {
	gotMap, err := toJSONMap(got)
	if err != nil {
		return nil, err
	}
	defMap, err := toJSONMap(fileDefaults())
	if err != nil {
		return nil, err
	}
	var out []string
	collectIgnored(raw, gotMap, defMap, "", &out)
	slices.Sort(out)
	return out, nil
}

func collectIgnored(raw, got, def map[string]any, prefix string, out *[]string) {
	for key, rawValue := range raw {
		if prefix == "" && (key == "kind" || key == "apiVersion") {
			continue
		}
		path := key
		if prefix != "" {
			path = prefix + "." + key
		}
		if isKnownField(path) {
			continue
		}
		if sub, ok := rawValue.(map[string]any); ok && hasKnownChild(path) {
			collectIgnored(sub, asMap(got[key]), asMap(def[key]), path, out)
			continue
		}
		if !reflect.DeepEqual(got[key], def[key]) {
			*out = append(*out, path)
		}
	}
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// toJSONMap renders v the way it would be serialized, so that values that
// decode differently but mean the same ("0s" vs 0) compare equal after
// defaulting.
func toJSONMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}
