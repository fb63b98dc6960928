package kubeletconfig

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logsapi "k8s.io/component-base/logs/api/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/eviction"
)

// Upstream constants that live in k8s.io/kubernetes packages we do not import.
// Each names its upstream source.
const (
	// pkg/cluster/ports.KubeletPort
	defaultPort = 10250
	// pkg/cluster/ports.KubeletReadOnlyPort; only the flags-only baseline uses
	// it (applyLegacyDefaults), the file default is 0 (disabled).
	legacyReadOnlyPort = 10255
	// pkg/kubelet/qos.KubeletOOMScoreAdj
	defaultOOMScoreAdj = -999
	// pkg/kubelet/types.ResolvConfDefault
	defaultResolvConf = "/etc/resolv.conf"
	// pkg/kubelet/apis/config/v1beta1
	defaultIPTablesMasqueradeBit = 14
	defaultIPTablesDropBit       = 15
	defaultVolumePluginDir       = "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/"
	defaultPodLogsDir            = "/var/log/pods"
	maxContainerBackOff          = 300 * time.Second

	defaultContainerRuntimeEndpoint = "unix:///run/containerd/containerd.sock"

	// Feature gates consulted by upstream defaulting, with their v1.37 defaults
	// (pkg/features/kube_features.go: both beta, on by default since 1.35).
	featureKubeletCrashLoopBackOffMax      = "KubeletCrashLoopBackOffMax"
	featureKubeletEnsureSecretPulledImages = "KubeletEnsureSecretPulledImages"
)

var defaultFeatureGates = map[string]bool{
	featureKubeletCrashLoopBackOffMax:      true,
	featureKubeletEnsureSecretPulledImages: true,
}

func featureEnabled(gates map[string]bool, name string) bool {
	if v, ok := gates[name]; ok {
		return v
	}
	return defaultFeatureGates[name]
}

// setDefaults mirrors SetDefaults_KubeletConfiguration from
// k8s.io/kubernetes pkg/kubelet/apis/config/v1beta1/defaults.go (v1.37),
// field for field and in the same order. Feature gates are read from
// obj.FeatureGates over the upstream defaults for the two gates it consults.
func setDefaults(obj *kubeletconfigv1beta1.KubeletConfiguration) {
	zero := metav1.Duration{}
	dur := func(d *metav1.Duration, v time.Duration) {
		if *d == zero {
			*d = metav1.Duration{Duration: v}
		}
	}

	if obj.EnableServer == nil {
		obj.EnableServer = ptr.To(true)
	}
	dur(&obj.SyncFrequency, 1*time.Minute)
	dur(&obj.FileCheckFrequency, 20*time.Second)
	dur(&obj.HTTPCheckFrequency, 20*time.Second)
	if obj.Address == "" {
		obj.Address = "0.0.0.0"
	}
	if obj.Port == 0 {
		obj.Port = defaultPort
	}
	if obj.Authentication.Anonymous.Enabled == nil {
		obj.Authentication.Anonymous.Enabled = ptr.To(false)
	}
	if obj.Authentication.Webhook.Enabled == nil {
		obj.Authentication.Webhook.Enabled = ptr.To(true)
	}
	dur(&obj.Authentication.Webhook.CacheTTL, 2*time.Minute)
	if obj.Authorization.Mode == "" {
		obj.Authorization.Mode = kubeletconfigv1beta1.KubeletAuthorizationModeWebhook
	}
	dur(&obj.Authorization.Webhook.CacheAuthorizedTTL, 5*time.Minute)
	dur(&obj.Authorization.Webhook.CacheUnauthorizedTTL, 30*time.Second)
	if obj.RegistryPullQPS == nil {
		obj.RegistryPullQPS = ptr.To[int32](5)
	}
	if obj.RegistryBurst == 0 {
		obj.RegistryBurst = 10
	}
	if obj.EventRecordQPS == nil {
		obj.EventRecordQPS = ptr.To[int32](50)
	}
	if obj.EventBurst == 0 {
		obj.EventBurst = 100
	}
	if obj.EnableDebuggingHandlers == nil {
		obj.EnableDebuggingHandlers = ptr.To(true)
	}
	if obj.HealthzPort == nil {
		obj.HealthzPort = ptr.To[int32](10248)
	}
	if obj.HealthzBindAddress == "" {
		obj.HealthzBindAddress = "127.0.0.1"
	}
	if obj.OOMScoreAdj == nil {
		obj.OOMScoreAdj = ptr.To[int32](defaultOOMScoreAdj)
	}
	dur(&obj.StreamingConnectionIdleTimeout, 4*time.Hour)
	if obj.NodeStatusReportFrequency == zero {
		// For backward compatibility the report frequency follows an
		// explicitly set update frequency.
		if obj.NodeStatusUpdateFrequency == zero {
			obj.NodeStatusReportFrequency = metav1.Duration{Duration: 5 * time.Minute}
		} else {
			obj.NodeStatusReportFrequency = obj.NodeStatusUpdateFrequency
		}
	}
	dur(&obj.NodeStatusUpdateFrequency, 10*time.Second)
	if obj.NodeLeaseDurationSeconds == 0 {
		obj.NodeLeaseDurationSeconds = 40
	}
	dur(&obj.ImageMinimumGCAge, 2*time.Minute)
	if obj.ImageGCHighThresholdPercent == nil {
		obj.ImageGCHighThresholdPercent = ptr.To[int32](85)
	}
	if obj.ImageGCLowThresholdPercent == nil {
		obj.ImageGCLowThresholdPercent = ptr.To[int32](80)
	}
	dur(&obj.VolumeStatsAggPeriod, time.Minute)
	if obj.CgroupsPerQOS == nil {
		obj.CgroupsPerQOS = ptr.To(true)
	}
	if obj.CgroupDriver == "" {
		obj.CgroupDriver = "cgroupfs"
	}
	if obj.CPUManagerPolicy == "" {
		obj.CPUManagerPolicy = "none"
	}
	dur(&obj.CPUManagerReconcilePeriod, 10*time.Second)
	if obj.MemoryManagerPolicy == "" {
		obj.MemoryManagerPolicy = kubeletconfigv1beta1.NoneMemoryManagerPolicy
	}
	if obj.TopologyManagerPolicy == "" {
		obj.TopologyManagerPolicy = kubeletconfigv1beta1.NoneTopologyManagerPolicy
	}
	if obj.TopologyManagerScope == "" {
		obj.TopologyManagerScope = kubeletconfigv1beta1.ContainerTopologyManagerScope
	}
	dur(&obj.RuntimeRequestTimeout, 2*time.Minute)
	if obj.HairpinMode == "" {
		obj.HairpinMode = kubeletconfigv1beta1.PromiscuousBridge
	}
	if obj.MaxPods == 0 {
		obj.MaxPods = 110
	}
	// nil or negative means "node allocatable pid limit".
	if obj.PodPidsLimit == nil || *obj.PodPidsLimit < 0 {
		obj.PodPidsLimit = ptr.To[int64](-1)
	}
	if obj.ResolverConfig == nil {
		obj.ResolverConfig = ptr.To(defaultResolvConf)
	}
	if obj.CPUCFSQuota == nil {
		obj.CPUCFSQuota = ptr.To(true)
	}
	if obj.CPUCFSQuotaPeriod == nil {
		obj.CPUCFSQuotaPeriod = &metav1.Duration{Duration: 100 * time.Millisecond}
	}
	if obj.NodeStatusMaxImages == nil {
		obj.NodeStatusMaxImages = ptr.To[int32](50)
	}
	if obj.MaxOpenFiles == 0 {
		obj.MaxOpenFiles = 1000000
	}
	if obj.ContentType == "" {
		obj.ContentType = "application/vnd.kubernetes.protobuf"
	}
	if obj.KubeAPIQPS == nil {
		obj.KubeAPIQPS = ptr.To[int32](50)
	}
	if obj.KubeAPIBurst == 0 {
		obj.KubeAPIBurst = 100
	}
	if obj.SerializeImagePulls == nil {
		// true unless maxParallelImagePulls asks for parallel pulls.
		obj.SerializeImagePulls = ptr.To(obj.MaxParallelImagePulls == nil || *obj.MaxParallelImagePulls < 2)
	}
	dur(&obj.EvictionPressureTransitionPeriod, 5*time.Minute)
	if obj.MergeDefaultEvictionSettings == nil {
		obj.MergeDefaultEvictionSettings = ptr.To(false)
	}
	if obj.EnableControllerAttachDetach == nil {
		obj.EnableControllerAttachDetach = ptr.To(true)
	}
	if obj.MakeIPTablesUtilChains == nil {
		obj.MakeIPTablesUtilChains = ptr.To(true)
	}
	if obj.IPTablesMasqueradeBit == nil {
		obj.IPTablesMasqueradeBit = ptr.To[int32](defaultIPTablesMasqueradeBit)
	}
	if obj.IPTablesDropBit == nil {
		obj.IPTablesDropBit = ptr.To[int32](defaultIPTablesDropBit)
	}
	if obj.FailSwapOn == nil {
		obj.FailSwapOn = ptr.To(true)
	}
	if obj.ContainerLogMaxSize == "" {
		obj.ContainerLogMaxSize = "10Mi"
	}
	if obj.ContainerLogMaxFiles == nil {
		obj.ContainerLogMaxFiles = ptr.To[int32](5)
	}
	if obj.ContainerLogMaxWorkers == nil {
		obj.ContainerLogMaxWorkers = ptr.To[int32](1)
	}
	if obj.ContainerLogMonitorInterval == nil {
		obj.ContainerLogMonitorInterval = &metav1.Duration{Duration: 10 * time.Second}
	}
	if obj.ConfigMapAndSecretChangeDetectionStrategy == "" {
		obj.ConfigMapAndSecretChangeDetectionStrategy = kubeletconfigv1beta1.WatchChangeDetectionStrategy
	}
	if obj.EnforceNodeAllocatable == nil {
		obj.EnforceNodeAllocatable = []string{"pods"}
	}
	if obj.VolumePluginDir == "" {
		obj.VolumePluginDir = defaultVolumePluginDir
	}
	logsapi.SetRecommendedLoggingConfiguration(&obj.Logging)
	if obj.EnableSystemLogHandler == nil {
		obj.EnableSystemLogHandler = ptr.To(true)
	}
	if obj.EnableProfilingHandler == nil {
		obj.EnableProfilingHandler = ptr.To(true)
	}
	if obj.EnableDebugFlagsHandler == nil {
		obj.EnableDebugFlagsHandler = ptr.To(true)
	}
	if obj.SeccompDefault == nil {
		obj.SeccompDefault = ptr.To(false)
	}
	if obj.FailCgroupV1 == nil {
		obj.FailCgroupV1 = ptr.To(true)
	}
	if obj.MemoryReservationPolicy == "" {
		obj.MemoryReservationPolicy = kubeletconfigv1beta1.NoneMemoryReservationPolicy
	}
	if obj.RegisterNode == nil {
		obj.RegisterNode = ptr.To(true)
	}
	if obj.LocalStorageCapacityIsolation == nil {
		obj.LocalStorageCapacityIsolation = ptr.To(true)
	}
	if obj.ContainerRuntimeEndpoint == "" {
		obj.ContainerRuntimeEndpoint = defaultContainerRuntimeEndpoint
	}
	if obj.PodLogsDir == "" {
		obj.PodLogsDir = defaultPodLogsDir
	}
	if featureEnabled(obj.FeatureGates, featureKubeletCrashLoopBackOffMax) &&
		obj.CrashLoopBackOff.MaxContainerRestartPeriod == nil {
		obj.CrashLoopBackOff.MaxContainerRestartPeriod = &metav1.Duration{Duration: maxContainerBackOff}
	}
	if featureEnabled(obj.FeatureGates, featureKubeletEnsureSecretPulledImages) &&
		obj.ImagePullCredentialsVerificationPolicy == "" {
		obj.ImagePullCredentialsVerificationPolicy = kubeletconfigv1beta1.NeverVerifyPreloadedImages
	}
}

// setFileDefaults applies what the upstream kubelet adds after decoding a
// config file (cmd/kubelet/app/server.go loadConfigFile): the OS default
// evictionHard when the file has none, merged in when
// mergeDefaultEvictionSettings is true.
func setFileDefaults(obj *kubeletconfigv1beta1.KubeletConfiguration) {
	if obj.EvictionHard == nil {
		obj.EvictionHard = eviction.DefaultEvictionHard()
		return
	}
	if ptr.Deref(obj.MergeDefaultEvictionSettings, false) {
		for k, v := range eviction.DefaultEvictionHard() {
			if _, ok := obj.EvictionHard[k]; !ok {
				obj.EvictionHard[k] = v
			}
		}
	}
}

// applyLegacyDefaults mirrors cmd/kubelet/app/options.applyLegacyDefaults: the
// command-line baseline used when no --config file is given.
func applyLegacyDefaults(obj *kubeletconfigv1beta1.KubeletConfiguration) {
	obj.Authentication.Anonymous.Enabled = ptr.To(true)
	obj.Authentication.Webhook.Enabled = ptr.To(false)
	obj.Authorization.Mode = kubeletconfigv1beta1.KubeletAuthorizationModeAlwaysAllow
	obj.ReadOnlyPort = legacyReadOnlyPort
}

// flagsOnlyDefaults is the configuration the upstream kubelet starts from
// before any flag is parsed and when no --config is given.
func flagsOnlyDefaults() kubeletconfigv1beta1.KubeletConfiguration {
	var kc kubeletconfigv1beta1.KubeletConfiguration
	setDefaults(&kc)
	applyLegacyDefaults(&kc)
	return kc
}

// fileDefaults is what an empty config file (only kind and apiVersion)
// resolves to.
func fileDefaults() kubeletconfigv1beta1.KubeletConfiguration {
	var kc kubeletconfigv1beta1.KubeletConfiguration
	setDefaults(&kc)
	setFileDefaults(&kc)
	return kc
}
