package agent

import (
	"fmt"
	"net"
	"net/http"
	"path"
	"path/filepath"
	"strconv"
	"time"

	kubeletconfigv1 "k8s.io/kubelet/config/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/containergc"
	"github.com/nodelet/nodelet/internal/credentialplugin"
	"github.com/nodelet/nodelet/internal/eviction"
	"github.com/nodelet/nodelet/internal/imagegc"
	"github.com/nodelet/nodelet/internal/kubeletconfig"
	"github.com/nodelet/nodelet/internal/logrotation"
	"github.com/nodelet/nodelet/internal/nodeshutdown"
	"github.com/nodelet/nodelet/internal/nodestatus"
)

// ConfigFrom is the agent's Config from the loaded flags and configuration file (upstream's
// names, resolved and validated by kubeletconfig). An error names the field.
func ConfigFrom(cfg *kubeletconfig.Config) (Config, error) {
	kc := cfg.KubeletConfiguration
	readOnly := ""
	if kc.ReadOnlyPort > 0 {
		// Standalone: the unauthenticated read-only API listens on loopback only. On a cluster
		// node it is off unless configured, and then listens on address, as upstream.
		host := "127.0.0.1"
		if cfg.Kubeconfig != "" {
			host = kc.Address
		}
		readOnly = net.JoinHostPort(host, strconv.Itoa(int(kc.ReadOnlyPort)))
	}
	kubeReserved, err := kubeletconfig.ResourceList("kubeReserved", kc.KubeReserved)
	if err != nil {
		return Config{}, err
	}
	systemReserved, err := kubeletconfig.ResourceList("systemReserved", kc.SystemReserved)
	if err != nil {
		return Config{}, err
	}
	thresholds, err := eviction.Parse(kubeletconfig.EvictionSettings(&kc))
	if err != nil {
		return Config{}, err
	}
	logMaxSize, err := logrotation.ParseMaxSize(kc.ContainerLogMaxSize)
	if err != nil {
		return Config{}, err
	}
	var credProviders []kubeletconfigv1.CredentialProvider
	if cfg.ImageCredentialProviderConfig != "" {
		if credProviders, err = credentialplugin.ReadConfig(cfg.ImageCredentialProviderConfig); err != nil {
			return Config{}, fmt.Errorf("--image-credential-provider-config: %w", err)
		}
	}
	// Pods go under <cgroupRoot>/kubepods, as upstream's cgroupfs layout with cgroupsPerQOS
	// (cgroupRoot defaults to /).
	podsCgroup := path.Join("/", kc.CgroupRoot, "kubepods")
	return Config{
		PodsCgroup:          podsCgroup,
		CgroupDriver:        kc.CgroupDriver,
		NodeName:            cfg.NodeName,
		NodeIP:              cfg.NodeIP,
		RootDir:             cfg.RootDir,
		PodLogsDir:          kc.PodLogsDir,
		RuntimeEndpoint:     kc.ContainerRuntimeEndpoint,
		ReadOnlyAddress:     readOnly,
		LocalSocket:         filepath.Join(cfg.RootDir, LocalSocketName),
		Profiling:           ptr.Deref(kc.EnableProfilingHandler, true),
		StaticPodPath:       kc.StaticPodPath,
		FileCheckFrequency:  kc.FileCheckFrequency.Duration,
		StaticPodURL:        kc.StaticPodURL,
		StaticPodURLHeader:  http.Header(kc.StaticPodURLHeader),
		HTTPCheckFrequency:  kc.HTTPCheckFrequency.Duration,
		SyncFrequency:       kc.SyncFrequency.Duration,
		ClusterDNS:          kc.ClusterDNS,
		ClusterDomain:       kc.ClusterDomain,
		ResolvConf:          ptr.Deref(kc.ResolverConfig, "/etc/resolv.conf"),
		CredentialProviders: credProviders, CredentialProviderBinDir: cfg.ImageCredentialProviderBinDir,
		SerializeImagePulls:    kc.SerializeImagePulls == nil || *kc.SerializeImagePulls,
		SeccompDefault:         ptr.Deref(kc.SeccompDefault, false),
		FailCgroupV1:           ptr.Deref(kc.FailCgroupV1, true),
		SingleProcessOOMKill:   kc.SingleProcessOOMKill,
		PodPidsLimit:           ptr.Deref(kc.PodPidsLimit, -1),
		ShutdownPeriods:        shutdownPeriods(kc),
		EnforceNodeAllocatable: kc.EnforceNodeAllocatable, KubeReservedCgroup: kc.KubeReservedCgroup, SystemReservedCgroup: kc.SystemReservedCgroup,
		ImageGC: imagegc.Policy{HighThresholdPercent: int(ptr.Deref(kc.ImageGCHighThresholdPercent, 85)),
			LowThresholdPercent: int(ptr.Deref(kc.ImageGCLowThresholdPercent, 80)),
			MinAge:              kc.ImageMinimumGCAge.Duration, MaxAge: kc.ImageMaximumGCAge.Duration, Period: cfg.ImageGCPeriod},
		ContainerGC: &containergc.Policy{MinAge: cfg.ContainerGC.MinAge, MaxPerPodContainer: int(cfg.ContainerGC.MaxPerPodContainer),
			MaxContainers: int(cfg.ContainerGC.MaxContainers)},
		ContainerGCPeriod:    cfg.ContainerGC.Period,
		VolumeStatsAggPeriod: kc.VolumeStatsAggPeriod.Duration,
		Eviction: eviction.Config{Thresholds: thresholds, PressureTransitionPeriod: kc.EvictionPressureTransitionPeriod.Duration,
			MaxPodGracePeriodSeconds: int64(kc.EvictionMaxPodGracePeriod), MonitoringPeriod: cfg.EvictionPeriod,
			KernelMemcgNotification: kc.KernelMemcgNotification, PodsCgroup: podsCgroup},
		AllowedUnsafeSysctls: kc.AllowedUnsafeSysctls,
		DisableEventedPLEG:   !kubeletconfig.FeatureEnabled(kc, "EventedPLEG"),
		LogRotation: logrotation.Config{MaxSize: logMaxSize, MaxFiles: int(ptr.Deref(kc.ContainerLogMaxFiles, 0)),
			MonitorInterval: kc.ContainerLogMonitorInterval.Duration, MaxWorkers: int(ptr.Deref(kc.ContainerLogMaxWorkers, 0))},
		Cluster: ClusterConfig{
			Kubeconfig: cfg.Kubeconfig, NodeLabels: cfg.NodeLabels, Taints: kc.RegisterWithTaints, MaxPods: kc.MaxPods,
			MaxImages:    ptr.Deref(kc.NodeStatusMaxImages, nodestatus.DefaultMaxImages),
			KubeReserved: kubeReserved, SystemReserved: systemReserved,
			UpdateFrequency: kc.NodeStatusUpdateFrequency.Duration, ReportFrequency: kc.NodeStatusReportFrequency.Duration,
			LeaseDuration: time.Duration(kc.NodeLeaseDurationSeconds) * time.Second, KubeletPort: kc.Port,
			KubeletAPI: KubeletAPIConfig{Address: kubeletAddress(kc.Address, kc.Port),
				TLSCertFile: kc.TLSCertFile, TLSKeyFile: kc.TLSPrivateKeyFile,
				Authentication: kc.Authentication, Authorization: kc.Authorization},
			Certs: CertConfig{BootstrapKubeconfig: cfg.BootstrapKubeconfig, Dir: cfg.CertDir,
				RotateClient:       kc.RotateCertificates,
				ServerTLSBootstrap: kc.ServerTLSBootstrap && kubeletconfig.FeatureEnabled(kc, "RotateKubeletServerCertificate")},
		},
	}, nil
}

// kubeletAddress is address:port for the kubelet API; port 0 disables it.
func kubeletAddress(address string, port int32) string {
	if port <= 0 {
		return ""
	}
	return net.JoinHostPort(address, strconv.Itoa(int(port)))
}

// shutdownPeriods are graceful node shutdown's bands from the configuration, as upstream's
// newPodManager: by priority when set and GracefulNodeShutdownBasedOnPodPriority is on, else
// from shutdownGracePeriod and shutdownGracePeriodCriticalPods; none when GracefulNodeShutdown
// is off.
func shutdownPeriods(kc kubeletconfigv1beta1.KubeletConfiguration) []nodeshutdown.Period {
	if !kubeletconfig.FeatureEnabled(kc, "GracefulNodeShutdown") {
		return nil
	}
	var byPriority []nodeshutdown.Period
	if kubeletconfig.FeatureEnabled(kc, "GracefulNodeShutdownBasedOnPodPriority") {
		for _, p := range kc.ShutdownGracePeriodByPodPriority {
			byPriority = append(byPriority, nodeshutdown.Period{Priority: p.Priority, GracePeriodSeconds: p.ShutdownGracePeriodSeconds})
		}
	}
	return nodeshutdown.Periods(kc.ShutdownGracePeriod.Duration, kc.ShutdownGracePeriodCriticalPods.Duration, byPriority)
}
