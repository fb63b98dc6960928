package kubeletconfig

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/eviction"
)

// validate checks the fields nodelet implements or accepts (implemented.go)
// on a fully resolved configuration. Paths are the JSON field paths of the
// config file. Rules follow upstream validation where upstream has one
// (ports, maxPods, nodeLeaseDurationSeconds, containerRuntimeEndpoint) and are
// stricter where nodelet would otherwise misbehave at run time (zero periods,
// malformed URLs, header names, endpoints).
func validate(kc *kubeletconfigv1beta1.KubeletConfiguration) field.ErrorList {
	errs := validateFeatureGates(kc.FeatureGates)

	for _, d := range []struct {
		name  string
		value metav1.Duration
	}{
		{"fileCheckFrequency", kc.FileCheckFrequency},
		{"httpCheckFrequency", kc.HTTPCheckFrequency},
		{"syncFrequency", kc.SyncFrequency},
		{"nodeStatusUpdateFrequency", kc.NodeStatusUpdateFrequency},
		{"nodeStatusReportFrequency", kc.NodeStatusReportFrequency},
		{"runtimeRequestTimeout", kc.RuntimeRequestTimeout},
	} {
		if d.value.Duration <= 0 {
			errs = append(errs, field.Invalid(field.NewPath(d.name), d.value.Duration.String(), "must be greater than 0"))
		}
	}

	if kc.NodeLeaseDurationSeconds <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("nodeLeaseDurationSeconds"), kc.NodeLeaseDurationSeconds, "must be greater than 0"))
	}
	if n := ptr.Deref(kc.NodeStatusMaxImages, 50); n < -1 {
		errs = append(errs, field.Invalid(field.NewPath("nodeStatusMaxImages"), n, "must be -1 (no limit) or greater"))
	}
	if kc.MaxPods < 0 {
		errs = append(errs, field.Invalid(field.NewPath("maxPods"), kc.MaxPods, "must not be negative"))
	}
	if net.ParseIP(kc.Address) == nil {
		errs = append(errs, field.Invalid(field.NewPath("address"), kc.Address, "must be a valid IP address"))
	}
	if kc.Port < 1 || kc.Port > 65535 {
		errs = append(errs, field.Invalid(field.NewPath("port"), kc.Port, "must be between 1 and 65535"))
	}
	if kc.ReadOnlyPort < 0 || kc.ReadOnlyPort > 65535 {
		errs = append(errs, field.Invalid(field.NewPath("readOnlyPort"), kc.ReadOnlyPort, "must be between 0 and 65535"))
	}

	errs = append(errs, validateCgroups(kc)...)
	errs = append(errs, validateShutdown(kc)...)
	errs = append(errs, validateContainerLogs(kc)...)
	errs = append(errs, validateImageGC(kc)...)
	errs = append(errs, validateEviction(kc)...)
	errs = append(errs, validateRuntimeEndpoint(kc.ContainerRuntimeEndpoint, field.NewPath("containerRuntimeEndpoint"))...)
	errs = append(errs, validateStaticPodURL(kc.StaticPodURL, field.NewPath("staticPodURL"))...)
	errs = append(errs, validateHeaders(kc.StaticPodURLHeader, field.NewPath("staticPodURLHeader"))...)
	return errs
}

// validateCgroups checks the cgroup layout fields: cgroupDriver is upstream's two values (the
// runtime's, when it reports one, wins at start); cgroupRoot is an absolute, clean cgroup path
// (pods go under <cgroupRoot>/kubepods); cgroupsPerQOS false (every container directly under
// cgroupRoot, no pod cgroups) is refused: nodelet always creates pods in QoS cgroups.
func validateCgroups(kc *kcfg) field.ErrorList {
	var errs field.ErrorList
	switch kc.CgroupDriver {
	case "cgroupfs", "systemd":
	default:
		errs = append(errs, field.NotSupported(field.NewPath("cgroupDriver"), kc.CgroupDriver, []string{"cgroupfs", "systemd"}))
	}
	if r := kc.CgroupRoot; r != "" && (!path.IsAbs(r) || path.Clean(r) != r || strings.ContainsAny(r, " \t\n:")) {
		errs = append(errs, field.Invalid(field.NewPath("cgroupRoot"), r, "must be an absolute cgroup path, such as / or /nodelet, without a trailing slash"))
	}
	if !ptr.Deref(kc.CgroupsPerQOS, true) {
		errs = append(errs, field.Invalid(field.NewPath("cgroupsPerQOS"), false,
			"nodelet always runs pods in the QoS cgroups under <cgroupRoot>/kubepods; false is not supported"))
	}
	return append(errs, validateEnforceNodeAllocatable(kc)...)
}

// validateEnforceNodeAllocatable is upstream's check of enforceNodeAllocatable: known values,
// no duplicate, none alone, a reservation and its -compressible variant not together, and the
// reserved cgroup named (kubeReservedCgroup, systemReservedCgroup, absolute) for each
// reservation enforced.
func validateEnforceNodeAllocatable(kc *kcfg) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("enforceNodeAllocatable")
	valid := []string{"pods", "system-reserved", "system-reserved-compressible", "kube-reserved", "kube-reserved-compressible", "none"}
	seen := map[string]bool{}
	for i, v := range kc.EnforceNodeAllocatable {
		if seen[v] {
			errs = append(errs, field.Duplicate(p.Index(i), v))
			continue
		}
		seen[v] = true
		switch v {
		case "pods":
		case "system-reserved", "system-reserved-compressible":
			if kc.SystemReservedCgroup == "" {
				errs = append(errs, field.Required(field.NewPath("systemReservedCgroup"),
					fmt.Sprintf("must be specified when %q or %q is in enforceNodeAllocatable", "system-reserved", "system-reserved-compressible")))
			}
		case "kube-reserved", "kube-reserved-compressible":
			if kc.KubeReservedCgroup == "" {
				errs = append(errs, field.Required(field.NewPath("kubeReservedCgroup"),
					fmt.Sprintf("must be specified when %q or %q is in enforceNodeAllocatable", "kube-reserved", "kube-reserved-compressible")))
			}
		case "none":
			if len(kc.EnforceNodeAllocatable) > 1 {
				errs = append(errs, field.Invalid(p, kc.EnforceNodeAllocatable, `may not contain additional enforcements when "none" is specified`))
			}
		default:
			errs = append(errs, field.NotSupported(p.Index(i), v, valid))
		}
	}
	for _, pair := range [][2]string{{"system-reserved", "system-reserved-compressible"}, {"kube-reserved", "kube-reserved-compressible"}} {
		if seen[pair[0]] && seen[pair[1]] {
			errs = append(errs, field.Invalid(p, kc.EnforceNodeAllocatable, fmt.Sprintf("%q and %q cannot be specified together", pair[0], pair[1])))
		}
	}
	for _, c := range []struct{ name, value string }{{"kubeReservedCgroup", kc.KubeReservedCgroup}, {"systemReservedCgroup", kc.SystemReservedCgroup}} {
		if c.value != "" && (!path.IsAbs(c.value) || path.Clean(c.value) != c.value) {
			errs = append(errs, field.Invalid(field.NewPath(c.name), c.value, "must be an absolute cgroup path, as the cgroup driver names it (/system.slice with systemd)"))
		}
	}
	return errs
}

// validateShutdown is upstream's check of the graceful node shutdown budgets: each period zero
// or at least a second, the critical pods' share within the whole, and the budgets by priority
// instead of, not with, the two periods.
func validateShutdown(kc *kcfg) field.ErrorList {
	var errs field.ErrorList
	whole, critical := kc.ShutdownGracePeriod.Duration, kc.ShutdownGracePeriodCriticalPods.Duration
	for _, p := range []struct {
		name  string
		value time.Duration
	}{{"shutdownGracePeriod", whole}, {"shutdownGracePeriodCriticalPods", critical}} {
		if p.value < 0 || (p.value > 0 && p.value < time.Second) {
			errs = append(errs, field.Invalid(field.NewPath(p.name), p.value.String(), "must be either zero or otherwise >= 1 sec"))
		}
	}
	if critical > whole {
		errs = append(errs, field.Invalid(field.NewPath("shutdownGracePeriodCriticalPods"), critical.String(),
			fmt.Sprintf("must be <= shutdownGracePeriod %v", whole)))
	}
	if len(kc.ShutdownGracePeriodByPodPriority) > 0 && (whole > 0 || critical > 0) {
		errs = append(errs, field.Invalid(field.NewPath("shutdownGracePeriodByPodPriority"), len(kc.ShutdownGracePeriodByPodPriority),
			"cannot be specified with shutdownGracePeriod or shutdownGracePeriodCriticalPods"))
	}
	// The settings with their feature gate off would be dropped: refused, as upstream does.
	if (whole > 0 || critical > 0) && !FeatureEnabled(*kc, "GracefulNodeShutdown") {
		errs = append(errs, field.Invalid(field.NewPath("shutdownGracePeriod"), whole.String(),
			"specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires feature gate GracefulNodeShutdown"))
	}
	if len(kc.ShutdownGracePeriodByPodPriority) > 0 && !FeatureEnabled(*kc, "GracefulNodeShutdownBasedOnPodPriority") {
		errs = append(errs, field.Invalid(field.NewPath("shutdownGracePeriodByPodPriority"), len(kc.ShutdownGracePeriodByPodPriority),
			"specifying shutdownGracePeriodByPodPriority requires feature gate GracefulNodeShutdownBasedOnPodPriority"))
	}
	return errs
}

// validateRuntimeEndpoint accepts unix:///abs/path.sock, as upstream on Linux,
// and a bare absolute path, which upstream still accepts (with a deprecation
// warning) by prefixing unix://.
func validateRuntimeEndpoint(ep string, p *field.Path) field.ErrorList {
	if ep == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if strings.HasPrefix(ep, "/") {
		return nil
	}
	u, err := url.Parse(ep)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(p, ep, err.Error())}
	case u.Scheme == "":
		return field.ErrorList{field.Invalid(p, ep, "must be a unix:// URL or an absolute path")}
	case u.Scheme != "unix":
		return field.ErrorList{field.Invalid(p, ep, fmt.Sprintf("scheme %q is not supported, must be unix", u.Scheme))}
	case u.Host != "" || !strings.HasPrefix(u.Path, "/"):
		return field.ErrorList{field.Invalid(p, ep, "must be unix:// followed by an absolute socket path, e.g. "+defaultContainerRuntimeEndpoint)}
	}
	return nil
}

// validateStaticPodURL requires an absolute http or https URL when set.
func validateStaticPodURL(raw string, p *field.Path) field.ErrorList {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return field.ErrorList{field.Invalid(p, raw, err.Error())}
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return field.ErrorList{field.Invalid(p, raw, "must be an absolute http:// or https:// URL")}
	}
	return nil
}

// validateHeaders requires valid HTTP header field names and values.
func validateHeaders(h map[string][]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !httpguts.ValidHeaderFieldName(k) {
			errs = append(errs, field.Invalid(p.Key(k), k, "must be a valid HTTP header name"))
			continue
		}
		for i, v := range h[k] {
			if !httpguts.ValidHeaderFieldValue(v) {
				errs = append(errs, field.Invalid(p.Key(k).Index(i), v, "must be a valid HTTP header value"))
			}
		}
	}
	return errs
}

// validateNodeIP checks --node-ip: one IP, or two of different families
// (dual-stack), as upstream's ParseNodeIPArgument.
func validateNodeIP(s string) error {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > 2 {
		return fmt.Errorf("%q: at most two comma-separated IP addresses (one IPv4, one IPv6) are allowed", s)
	}
	var ips []net.IP
	for _, part := range parts {
		ip := net.ParseIP(strings.TrimSpace(part))
		if ip == nil {
			return fmt.Errorf("%q: %q is not a valid IP address", s, strings.TrimSpace(part))
		}
		ips = append(ips, ip)
	}
	if len(ips) == 2 && (ips[0].To4() == nil) == (ips[1].To4() == nil) {
		return fmt.Errorf("%q: two addresses must be one IPv4 and one IPv6", s)
	}
	return nil
}

// validateContainerLogs checks the log rotation settings as upstream (validation.go and the
// container log manager's constructor).
func validateContainerLogs(kc *kcfg) field.ErrorList {
	var errs field.ErrorList
	if q, err := resource.ParseQuantity(kc.ContainerLogMaxSize); err != nil || q.Sign() == 0 {
		errs = append(errs, field.Invalid(field.NewPath("containerLogMaxSize"), kc.ContainerLogMaxSize, "must be a quantity such as 10Mi (negative: no rotation)"))
	}
	if n := ptr.Deref(kc.ContainerLogMaxFiles, 0); n <= 1 {
		errs = append(errs, field.Invalid(field.NewPath("containerLogMaxFiles"), n, "must be greater than 1"))
	}
	if n := ptr.Deref(kc.ContainerLogMaxWorkers, 0); n < 1 {
		errs = append(errs, field.Invalid(field.NewPath("containerLogMaxWorkers"), n, "must be greater than or equal to 1"))
	}
	if d := kc.ContainerLogMonitorInterval; d == nil || d.Duration < 3*time.Second {
		errs = append(errs, field.Invalid(field.NewPath("containerLogMonitorInterval"), d, "must be a duration of at least 3s"))
	}
	return errs
}

// validateImageGC checks the image garbage collection settings as upstream's validation.
func validateImageGC(kc *kcfg) field.ErrorList {
	var errs field.ErrorList
	high, low := ptr.Deref(kc.ImageGCHighThresholdPercent, 85), ptr.Deref(kc.ImageGCLowThresholdPercent, 80)
	if high < 0 || high > 100 {
		errs = append(errs, field.Invalid(field.NewPath("imageGCHighThresholdPercent"), high, "must be between 0 and 100, inclusive (--image-gc-high-threshold)"))
	}
	if low < 0 || low > 100 {
		errs = append(errs, field.Invalid(field.NewPath("imageGCLowThresholdPercent"), low, "must be between 0 and 100, inclusive (--image-gc-low-threshold)"))
	}
	if low >= high {
		errs = append(errs, field.Invalid(field.NewPath("imageGCLowThresholdPercent"), low,
			fmt.Sprintf("must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) %d", high)))
	}
	if kc.ImageMinimumGCAge.Duration < 0 {
		errs = append(errs, field.Invalid(field.NewPath("imageMinimumGCAge"), kc.ImageMinimumGCAge.Duration.String(), "must not be negative"))
	}
	if max := kc.ImageMaximumGCAge.Duration; max < 0 {
		errs = append(errs, field.Invalid(field.NewPath("imageMaximumGCAge"), max.String(), "must not be negative"))
	} else if max != 0 && kc.ImageMinimumGCAge.Duration > max {
		errs = append(errs, field.Invalid(field.NewPath("imageMaximumGCAge"), max.String(),
			"must be greater than imageMinimumGCAge "+kc.ImageMinimumGCAge.Duration.String()))
	}
	return errs
}

// validateEviction checks the eviction settings as upstream's eviction.ParseThresholdConfig
// and validation: each error names the field and the signal.
func validateEviction(kc *kcfg) field.ErrorList {
	var errs field.ErrorList
	if _, err := eviction.Parse(EvictionSettings(kc)); err != nil {
		errs = append(errs, evictionError(err.Error()))
	}
	if kc.EvictionPressureTransitionPeriod.Duration < 0 {
		errs = append(errs, field.Invalid(field.NewPath("evictionPressureTransitionPeriod"), kc.EvictionPressureTransitionPeriod.Duration.String(), "must not be negative"))
	}
	if kc.EvictionMaxPodGracePeriod < 0 {
		errs = append(errs, field.Invalid(field.NewPath("evictionMaxPodGracePeriod"), kc.EvictionMaxPodGracePeriod, "must not be negative"))
	}
	return errs
}

// evictionError turns an eviction.Parse error ("evictionHard[memory.available]: detail") into a
// field error on that path.
func evictionError(msg string) *field.Error {
	path, detail, ok := strings.Cut(msg, ": ")
	if !ok {
		return field.Invalid(field.NewPath("evictionHard"), field.OmitValueType{}, msg)
	}
	name, key, hasKey := strings.Cut(strings.TrimSuffix(path, "]"), "[")
	p := field.NewPath(name)
	if hasKey {
		p = p.Key(key)
	}
	return field.Invalid(p, field.OmitValueType{}, detail)
}

// EvictionSettings are the configuration's eviction maps, for eviction.Parse.
func EvictionSettings(kc *kcfg) eviction.Settings {
	return eviction.Settings{Hard: kc.EvictionHard, Soft: kc.EvictionSoft, SoftGracePeriod: kc.EvictionSoftGracePeriod,
		MinimumReclaim: kc.EvictionMinimumReclaim, EnforceNodeAllocatable: kc.EnforceNodeAllocatable}
}
