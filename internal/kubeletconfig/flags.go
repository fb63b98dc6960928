package kubeletconfig

import (
	"errors"
	goflag "flag"
	"fmt"
	"io"
	cliflag "k8s.io/component-base/cli/flag"
	"net"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// Loader owns nodelet's command-line flags and turns a command line into a
// Config. Create it with NewFlagSet; it loads once.
type Loader struct {
	fs        *pflag.FlagSet
	klogFlags *goflag.FlagSet
	logger    klog.Logger // zero: klog.Background() at Load time
	loaded    bool

	configFile       string
	configDir        string
	credProviderCfg  string
	credProviderBin  string
	kubeconfig       string
	bootstrapKubecfg string
	certDir          string
	rootDir          string
	hostnameOverride string
	nodeIP           string
	nodeLabels       map[string]string
	imageGCPeriod    time.Duration
	containerGC      ContainerGC
	evictionPeriod   time.Duration

	// flagConfig receives KubeletConfiguration flags. It starts as the
	// flags-only baseline, so flag defaults read as upstream's; only flags
	// that were set are copied onto the loaded configuration.
	flagConfig kubeletconfigv1beta1.KubeletConfiguration
	// registerErr is a flag of the table that could not be registered; Load returns it.
	registerErr error
}

// NewFlagSet registers nodelet's flags (upstream kubelet names) on a new
// pflag.FlagSet and returns the Loader bound to it. The flag set does not
// exit or print on errors; Load returns them (pflag.ErrHelp for -h/--help).
func NewFlagSet(name string) *Loader {
	l := &Loader{
		fs:        pflag.NewFlagSet(name, pflag.ContinueOnError),
		klogFlags: goflag.NewFlagSet("klog", goflag.ContinueOnError),
		rootDir:   DefaultRootDir,
		// upstream's ImageGCPeriod
		imageGCPeriod: 5 * time.Minute,
		// upstream's evictionMonitoringPeriod
		evictionPeriod: 10 * time.Second,
		flagConfig:     flagsOnlyDefaults(),
	}
	l.fs.SetOutput(io.Discard)
	// As upstream (cliflag.WordSepNormalizeFunc): --pod_manifest_path works.
	l.fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
	})
	l.addFlags()
	return l
}

// FlagSet returns the flag set, e.g. for FlagUsages.
func (l *Loader) FlagSet() *pflag.FlagSet { return l.fs }

func (l *Loader) addFlags() {
	fs := l.fs
	fs.StringVar(&l.configFile, "config", l.configFile, "nodelet loads its initial configuration from this file. The path may be absolute or relative; relative paths start at the current working directory. Omit this flag to use the built-in default configuration values. Command-line flags override configuration from this file.")
	fs.StringVar(&l.configDir, "config-dir", l.configDir, "Path to a directory containing drop-in configuration files that override settings from defaults and the --config file. The path may be absolute or relative; relative paths start at the current working directory. Drop-in files must have a '.conf' suffix (e.g., '99-kubelet-address.conf') and are processed in lexical order. Only '.conf' files are loaded; all other files are ignored (and logged). All .conf files in the directory and its subdirectories are processed in lexical order. Unlike the kubelet, a field a drop-in does not know is an error.")
	fs.StringVar(&l.credProviderCfg, "image-credential-provider-config", l.credProviderCfg, "Path to a credential provider plugin config file (JSON/YAML/YML) or a directory of such files (merged in lexicographical order; non-recursive search).")
	fs.StringVar(&l.credProviderBin, "image-credential-provider-bin-dir", l.credProviderBin, "The path to the directory where credential provider plugin binaries are located.")
	fs.StringVar(&l.kubeconfig, "kubeconfig", l.kubeconfig, "Path to a kubeconfig file, specifying how to connect to the API server. Providing --kubeconfig enables API server mode, omitting --kubeconfig enables standalone mode.")
	fs.StringVar(&l.bootstrapKubecfg, "bootstrap-kubeconfig", l.bootstrapKubecfg, "Path to a kubeconfig file that will be used to get client certificate for nodelet. If the file specified by --kubeconfig does not exist, the bootstrap kubeconfig is used to request a client certificate from the API server. On success, a kubeconfig file referencing the generated client certificate and key is written to the path specified by --kubeconfig. The client certificate and key file will be stored in the directory pointed by --cert-dir.")
	fs.StringVar(&l.certDir, "cert-dir", l.certDir, "The directory where the TLS certs are located. If --tls-cert-file and --tls-private-key-file are provided, this flag will be ignored. (default <root-dir>/pki)")
	fs.StringVar(&l.rootDir, "root-dir", l.rootDir, "Directory path for managing nodelet files (volume mounts, etc).")
	fs.StringVar(&l.hostnameOverride, "hostname-override", l.hostnameOverride, "If non-empty, will use this string as identification instead of the actual hostname.")
	fs.StringVar(&l.nodeIP, "node-ip", l.nodeIP, "IP address (or comma-separated dual-stack IP addresses) of the node.")
	fs.DurationVar(&l.imageGCPeriod, "image-gc-period", l.imageGCPeriod, "nodelet only (the kubelet's is fixed at 5m): how often unused images are garbage collected.")
	fs.DurationVar(&l.evictionPeriod, "eviction-monitoring-period", l.evictionPeriod, "nodelet only (the kubelet's is fixed at 10s): how often the eviction manager observes the eviction signals.")
	l.containerGC.register(fs)
	fs.Var(cliflag.NewMapStringString(&l.nodeLabels), "node-labels", "Labels to add when registering the node in the cluster. Labels must be key=value pairs separated by ','.")

	for _, f := range configFlags {
		if err := f.register(fs, &l.flagConfig); err != nil {
			l.registerErr = errors.Join(l.registerErr, err) // Load returns it
		}
	}

	// klog's own -v/--v and --vmodule, via a private Go flag set (never
	// flag.CommandLine). Setting them changes klog's verbosity at once.
	klog.InitFlags(l.klogFlags)
	fs.AddGoFlag(l.klogFlags.Lookup("v"))
	fs.AddGoFlag(l.klogFlags.Lookup("vmodule"))
}

// configFlag is a flag that sets a KubeletConfiguration field.
type configFlag struct {
	name  string // flag name, as upstream
	path  string // JSON path of the field it sets
	usage string
	// field returns a pointer to the field in kc: *string, *int32,
	// *time.Duration, *map[string][]string or a pflag.Value.
	field func(kc *kubeletconfigv1beta1.KubeletConfiguration) any
}

type kcfg = kubeletconfigv1beta1.KubeletConfiguration

// configFlags are the KubeletConfiguration flags nodelet implements, with the
// upstream help texts (cmd/kubelet/app/options/options.go).
var configFlags = []configFlag{
	{"feature-gates", "featureGates", "A set of key=value pairs that describe feature gates for alpha/experimental features: those of the upstream kubelet v1.37 (an unknown gate is an error). The gates given here are merged over the config file's featureGates.",
		func(kc *kcfg) any { return (*gateMap)(&kc.FeatureGates) }},
	{"pod-manifest-path", "staticPodPath", "Path to the directory containing static pod files to run, or the path to a single static pod file. Files starting with dots will be ignored.",
		func(kc *kcfg) any { return &kc.StaticPodPath }},
	{"manifest-url", "staticPodURL", "URL for accessing additional Pod specifications to run",
		func(kc *kcfg) any { return &kc.StaticPodURL }},
	{"manifest-url-header", "staticPodURLHeader", "Comma-separated list of HTTP headers to use when accessing the url provided to --manifest-url. Multiple headers with the same name will be added in the same order provided. This flag can be repeatedly invoked. For example: --manifest-url-header 'a:hello,b:again,c:world' --manifest-url-header 'b:beautiful'",
		func(kc *kcfg) any { return &kc.StaticPodURLHeader }},
	{"file-check-frequency", "fileCheckFrequency", "Duration between checking config files for new data",
		func(kc *kcfg) any { return &kc.FileCheckFrequency.Duration }},
	{"http-check-frequency", "httpCheckFrequency", "Duration between checking http for new data",
		func(kc *kcfg) any { return &kc.HTTPCheckFrequency.Duration }},
	{"sync-frequency", "syncFrequency", "Max period between synchronizing running containers and config",
		func(kc *kcfg) any { return &kc.SyncFrequency.Duration }},
	{"max-pods", "maxPods", "Number of Pods that can run on this node.",
		func(kc *kcfg) any { return &kc.MaxPods }},
	{"container-runtime-endpoint", "containerRuntimeEndpoint", "The endpoint of container runtime service. Unix Domain Sockets are supported on Linux. Example: 'unix:///path/to/runtime.sock'",
		func(kc *kcfg) any { return &kc.ContainerRuntimeEndpoint }},
	{"address", "address", "The IP address for nodelet to serve on (set to '0.0.0.0' or '::' for listening on all interfaces and IP address families)",
		func(kc *kcfg) any { return (*ipValue)(&kc.Address) }},
	{"port", "port", "The port for nodelet to serve on.",
		func(kc *kcfg) any { return &kc.Port }},
	{"node-status-update-frequency", "nodeStatusUpdateFrequency", "Specifies how often nodelet posts node status to master. Note: be cautious when changing the constant, it must work with nodeMonitorGracePeriod in nodecontroller.",
		func(kc *kcfg) any { return &kc.NodeStatusUpdateFrequency.Duration }},
	{"client-ca-file", "authentication.x509.clientCAFile", "If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate.",
		func(kc *kcfg) any { return &kc.Authentication.X509.ClientCAFile }},
	{"tls-cert-file", "tlsCertFile", "File containing x509 Certificate used for serving HTTPS (with intermediate certs, if any, concatenated after server cert). If tlsCertFile and tlsPrivateKeyFile are not provided, a self-signed certificate and key are generated for the public address and saved to the directory passed to --cert-dir.",
		func(kc *kcfg) any { return &kc.TLSCertFile }},
	{"tls-private-key-file", "tlsPrivateKeyFile", "File containing x509 private key matching --tls-cert-file.",
		func(kc *kcfg) any { return &kc.TLSPrivateKeyFile }},
	{"authorization-mode", "authorization.mode", "Authorization mode for nodelet server. Valid options are AlwaysAllow or Webhook. Webhook mode uses the SubjectAccessReview API to determine authorization.",
		func(kc *kcfg) any { return (*string)(&kc.Authorization.Mode) }},
	{"container-log-max-size", "containerLogMaxSize", "Set the maximum size (e.g. 10Mi) of container log file before it is rotated.",
		func(kc *kcfg) any { return &kc.ContainerLogMaxSize }},
	{"container-log-max-files", "containerLogMaxFiles", "Set the maximum number of container log files that can be present for a container. The number must be >= 2.",
		func(kc *kcfg) any { return kc.ContainerLogMaxFiles }},
	{"rotate-certificates", "rotateCertificates", "Auto rotate nodelet's client certificates by requesting new certificates from the kube-apiserver when the certificate expiration approaches.",
		func(kc *kcfg) any { return &kc.RotateCertificates }},
	{"rotate-server-certificates", "serverTLSBootstrap", "Auto-request and rotate nodelet's serving certificates by requesting new certificates from the kube-apiserver when the certificate expiration approaches. Requires the RotateKubeletServerCertificate feature gate to be enabled, and approval of the submitted CertificateSigningRequest objects.",
		func(kc *kcfg) any { return &kc.ServerTLSBootstrap }},
	{"read-only-port", "readOnlyPort", "The read-only port for nodelet to serve on with no authentication/authorization (set to 0 to disable)",
		func(kc *kcfg) any { return &kc.ReadOnlyPort }},
	{"cgroup-root", "cgroupRoot", "Optional root cgroup to use for pods. This is handled by the container runtime on a best effort basis. Default: '', which means use the container runtime default.",
		func(kc *kcfg) any { return &kc.CgroupRoot }},
	{"cgroups-per-qos", "cgroupsPerQOS", "Enable creation of QoS cgroup hierarchy, if true top level QoS and pod cgroups are created.",
		func(kc *kcfg) any { return kc.CgroupsPerQOS }},
	{"cgroup-driver", "cgroupDriver", "Driver that the kubelet uses to manipulate cgroups on the host.  Possible values: 'cgroupfs', 'systemd'",
		func(kc *kcfg) any { return &kc.CgroupDriver }},
	{"fail-cgroupv1", "failCgroupV1", "Prevent nodelet from starting on the host using cgroup v1.",
		func(kc *kcfg) any { return kc.FailCgroupV1 }},
	{"enforce-node-allocatable", "enforceNodeAllocatable", "A comma separated list of levels of node allocatable enforcement to be enforced by nodelet. Acceptable options are 'none', 'pods', 'system-reserved', 'system-reserved-compressible', 'kube-reserved' and 'kube-reserved-compressible'.",
		func(kc *kcfg) any { return &kc.EnforceNodeAllocatable }},
	{"kube-reserved-cgroup", "kubeReservedCgroup", "Absolute name of the top level cgroup that is used to manage kubernetes components for which compute resources were reserved via '--kube-reserved' flag.",
		func(kc *kcfg) any { return &kc.KubeReservedCgroup }},
	{"system-reserved-cgroup", "systemReservedCgroup", "Absolute name of the top level cgroup that is used to manage non-kubernetes components for which compute resources were reserved via '--system-reserved' flag.",
		func(kc *kcfg) any { return &kc.SystemReservedCgroup }},
	{"pod-max-pids", "podPidsLimit", "Set the maximum number of processes per pod.  If -1, nodelet defaults to the node allocatable pid capacity.",
		func(kc *kcfg) any { return kc.PodPidsLimit }},
	{"seccomp-default", "seccompDefault", "Enable the use of `RuntimeDefault` as the default seccomp profile for all workloads.",
		func(kc *kcfg) any { return kc.SeccompDefault }},
	{"image-gc-high-threshold", "imageGCHighThresholdPercent", "The percent of disk usage after which image garbage collection is always run. Values must be within the range [0, 100], To disable image garbage collection, set to 100. ",
		func(kc *kcfg) any { return kc.ImageGCHighThresholdPercent }},
	{"image-gc-low-threshold", "imageGCLowThresholdPercent", "The percent of disk usage before which image garbage collection is never run. Lowest disk usage to garbage collect to. Values must be within the range [0, 100] and should not be larger than that of --image-gc-high-threshold.",
		func(kc *kcfg) any { return kc.ImageGCLowThresholdPercent }},
	{"minimum-image-ttl-duration", "imageMinimumGCAge", "Minimum age for an unused image before it is garbage collected.  Examples: '300ms', '10s' or '2h45m'.",
		func(kc *kcfg) any { return &kc.ImageMinimumGCAge.Duration }},
	{"eviction-hard", "evictionHard", "A set of eviction thresholds (e.g. memory.available<1Gi) that if met would trigger a pod eviction.",
		func(kc *kcfg) any { return (*langleMap)(&kc.EvictionHard) }},
	{"eviction-soft", "evictionSoft", "A set of eviction thresholds (e.g. memory.available<1.5Gi) that if met over a corresponding grace period would trigger a pod eviction.",
		func(kc *kcfg) any { return (*langleMap)(&kc.EvictionSoft) }},
	{"eviction-soft-grace-period", "evictionSoftGracePeriod", "A set of eviction grace periods (e.g. memory.available=1m30s) that correspond to how long a soft eviction threshold must hold before triggering a pod eviction.",
		func(kc *kcfg) any { return (*equalsMap)(&kc.EvictionSoftGracePeriod) }},
	{"eviction-minimum-reclaim", "evictionMinimumReclaim", "A set of minimum reclaims (e.g. imagefs.available=2Gi) that describes the minimum amount of resource the kubelet will reclaim when performing a pod eviction if that resource is under pressure.",
		func(kc *kcfg) any { return (*equalsMap)(&kc.EvictionMinimumReclaim) }},
	{"eviction-pressure-transition-period", "evictionPressureTransitionPeriod", "Duration for which the kubelet has to wait before transitioning out of an eviction pressure condition.",
		func(kc *kcfg) any { return &kc.EvictionPressureTransitionPeriod.Duration }},
	{"eviction-max-pod-grace-period", "evictionMaxPodGracePeriod", "Maximum allowed grace period (in seconds) to use when terminating pods in response to a soft eviction threshold being met. If negative, defer to pod specified value.",
		func(kc *kcfg) any { return &kc.EvictionMaxPodGracePeriod }},
	{"kernel-memcg-notification", "kernelMemcgNotification", "If enabled, the kubelet will integrate with the kernel memcg notification to determine if memory eviction thresholds are crossed rather than polling.",
		func(kc *kcfg) any { return &kc.KernelMemcgNotification }},
	{"volume-stats-agg-period", "volumeStatsAggPeriod", "Specifies interval for kubelet to calculate and cache the volume disk usage for all pods and volumes. To disable volume calculations, set to a negative number.",
		func(kc *kcfg) any { return &kc.VolumeStatsAggPeriod.Duration }},
	{"allowed-unsafe-sysctls", "allowedUnsafeSysctls", "Comma-separated allowlist of unsafe sysctls or unsafe sysctl patterns (ending in `*`). Use these at your own risk.",
		func(kc *kcfg) any { return &kc.AllowedUnsafeSysctls }},
}

func (f configFlag) register(fs *pflag.FlagSet, kc *kcfg) error {
	switch p := f.field(kc).(type) {
	case *string:
		fs.StringVar(p, f.name, *p, f.usage)
	case *int32:
		fs.Int32Var(p, f.name, *p, f.usage)
	case *int64:
		fs.Int64Var(p, f.name, *p, f.usage)
	case *bool:
		fs.BoolVar(p, f.name, *p, f.usage)
	case *[]string:
		fs.StringSliceVar(p, f.name, *p, f.usage)
	case *time.Duration:
		fs.DurationVar(p, f.name, *p, f.usage)
	case *map[string][]string:
		fs.Var(&headerValue{m: p}, f.name, f.usage)
	case pflag.Value:
		fs.Var(p, f.name, f.usage)
	default:
		return fmt.Errorf("kubeletconfig: flag --%s: unsupported field type %T (a bug in nodelet's flag table)", f.name, p)
	}
	return nil
}

// apply copies the field this flag sets from src to dst.
func (f configFlag) apply(dst, src *kcfg) {
	reflect.ValueOf(f.field(dst)).Elem().Set(reflect.ValueOf(f.field(src)).Elem())
}

// covers reports whether a validation error at path is about this flag's field.
func (f configFlag) covers(path string) bool {
	return path == f.path || strings.HasPrefix(path, f.path+".") || strings.HasPrefix(path, f.path+"[")
}

// ipValue is a string flag that must hold an IP address (upstream
// pkg/util/flag.IPVar).
type ipValue string

func (v *ipValue) String() string { return string(*v) }
func (v *ipValue) Type() string   { return "ip" }
func (v *ipValue) Set(s string) error {
	if net.ParseIP(s) == nil {
		return fmt.Errorf("%q is not a valid IP address", s)
	}
	*v = ipValue(s)
	return nil
}

// headerValue parses "key:value" pairs separated by commas into a
// map[string][]string, like upstream's ColonSeparatedMultimapStringString:
// the first Set replaces the existing map, later Sets (repeated flags) append,
// and repeated keys keep their values in order.
type headerValue struct {
	m           *map[string][]string
	initialized bool
}

func (v *headerValue) Type() string { return "colonSeparatedMultimapStringString" }

func (v *headerValue) Set(s string) error {
	if !v.initialized || *v.m == nil {
		*v.m = map[string][]string{}
		v.initialized = true
	}
	for _, pair := range strings.Split(s, ",") {
		if pair == "" {
			continue
		}
		k, val, ok := strings.Cut(pair, ":")
		if !ok {
			return fmt.Errorf("malformed pair %q, expect key:value", pair)
		}
		k = strings.TrimSpace(k)
		(*v.m)[k] = append((*v.m)[k], strings.TrimSpace(val))
	}
	return nil
}

func (v *headerValue) String() string {
	if v.m == nil {
		return ""
	}
	keys := make([]string, 0, len(*v.m))
	for k := range *v.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var pairs []string
	for _, k := range keys {
		for _, val := range (*v.m)[k] {
			pairs = append(pairs, k+":"+val)
		}
	}
	return strings.Join(pairs, ",")
}

// langleMap is upstream's LangleSeparatedMapStringString ("memory.available<100Mi,..."): the
// first Set replaces the map, repeated flags add to it.
type langleMap map[string]string

func (m *langleMap) String() string { return joinMap(*m, "<") }
func (m *langleMap) Type() string   { return "mapStringString" }
func (m *langleMap) Set(s string) error {
	return setMap((*map[string]string)(m), s, "<")
}

// equalsMap is upstream's MapStringString for the eviction maps ("memory.available=1m30s").
type equalsMap map[string]string

func (m *equalsMap) String() string { return joinMap(*m, "=") }
func (m *equalsMap) Type() string   { return "mapStringString" }
func (m *equalsMap) Set(s string) error {
	return setMap((*map[string]string)(m), s, "=")
}

func joinMap(m map[string]string, sep string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+sep+m[k])
	}
	return strings.Join(parts, ",")
}

// setMap parses "k<sep>v,k2<sep>v2" into a new map (a flag given twice: the last one wins, as
// each flag value is the whole set).
func setMap(m *map[string]string, s, sep string) error {
	out := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, sep)
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("malformed pair %q, expect key%svalue", pair, sep)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	*m = out
	return nil
}
