package kubeletconfig

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/eviction"
)

func mustLoad(t *testing.T, args ...string) *Config {
	t.Helper()
	cfg, err := Load(args, fixedHostname("node"))
	if err != nil {
		t.Fatalf("Load(%q): %v", args, err)
	}
	return cfg
}

// TestDefaultsMatchUpstream checks a representative set of upstream v1beta1
// defaults, for an empty config file and for the flags-only baseline.
func TestDefaultsMatchUpstream(t *testing.T) {
	file := mustLoad(t, "--config", "testdata/minimal.yaml").KubeletConfiguration
	flags := mustLoad(t).KubeletConfiguration

	common := []struct {
		name      string
		get       func(kc *kubeletconfigv1beta1.KubeletConfiguration) any
		want      any
		wantFlags any // flags-only value when it differs from the file default
	}{
		{"readOnlyPort", func(kc *kcfg) any { return kc.ReadOnlyPort }, int32(0), int32(10255)},
		{"authentication.anonymous.enabled", func(kc *kcfg) any { return *kc.Authentication.Anonymous.Enabled }, false, true},
		{"authentication.webhook.enabled", func(kc *kcfg) any { return *kc.Authentication.Webhook.Enabled }, true, false},
		{"authorization.mode", func(kc *kcfg) any { return kc.Authorization.Mode }, kubeletconfigv1beta1.KubeletAuthorizationModeWebhook, kubeletconfigv1beta1.KubeletAuthorizationModeAlwaysAllow},
		{"evictionHard", func(kc *kcfg) any { return kc.EvictionHard }, eviction.DefaultEvictionHard(), map[string]string(nil)},
		{"syncFrequency", func(kc *kcfg) any { return kc.SyncFrequency.Duration }, time.Minute, nil},
		{"fileCheckFrequency", func(kc *kcfg) any { return kc.FileCheckFrequency.Duration }, 20 * time.Second, nil},
		{"httpCheckFrequency", func(kc *kcfg) any { return kc.HTTPCheckFrequency.Duration }, 20 * time.Second, nil},
		{"maxPods", func(kc *kcfg) any { return kc.MaxPods }, int32(110), nil},
		{"port", func(kc *kcfg) any { return kc.Port }, int32(10250), nil},
		{"address", func(kc *kcfg) any { return kc.Address }, "0.0.0.0", nil},
		{"containerRuntimeEndpoint", func(kc *kcfg) any { return kc.ContainerRuntimeEndpoint }, "unix:///run/containerd/containerd.sock", nil},
		{"nodeStatusUpdateFrequency", func(kc *kcfg) any { return kc.NodeStatusUpdateFrequency.Duration }, 10 * time.Second, nil},
		{"nodeStatusReportFrequency", func(kc *kcfg) any { return kc.NodeStatusReportFrequency.Duration }, 5 * time.Minute, nil},
		{"nodeLeaseDurationSeconds", func(kc *kcfg) any { return kc.NodeLeaseDurationSeconds }, int32(40), nil},
		{"runtimeRequestTimeout", func(kc *kcfg) any { return kc.RuntimeRequestTimeout.Duration }, 2 * time.Minute, nil},
		{"enableServer", func(kc *kcfg) any { return *kc.EnableServer }, true, nil},
		{"healthzPort", func(kc *kcfg) any { return *kc.HealthzPort }, int32(10248), nil},
		{"healthzBindAddress", func(kc *kcfg) any { return kc.HealthzBindAddress }, "127.0.0.1", nil},
		{"oomScoreAdj", func(kc *kcfg) any { return *kc.OOMScoreAdj }, int32(-999), nil},
		{"cgroupDriver", func(kc *kcfg) any { return kc.CgroupDriver }, "cgroupfs", nil},
		{"hairpinMode", func(kc *kcfg) any { return kc.HairpinMode }, "promiscuous-bridge", nil},
		{"podPidsLimit", func(kc *kcfg) any { return *kc.PodPidsLimit }, int64(-1), nil},
		{"resolvConf", func(kc *kcfg) any { return *kc.ResolverConfig }, "/etc/resolv.conf", nil},
		{"cpuCFSQuotaPeriod", func(kc *kcfg) any { return kc.CPUCFSQuotaPeriod.Duration }, 100 * time.Millisecond, nil},
		{"serializeImagePulls", func(kc *kcfg) any { return *kc.SerializeImagePulls }, true, nil},
		{"imageGCHighThresholdPercent", func(kc *kcfg) any { return *kc.ImageGCHighThresholdPercent }, int32(85), nil},
		{"containerLogMaxSize", func(kc *kcfg) any { return kc.ContainerLogMaxSize }, "10Mi", nil},
		{"enforceNodeAllocatable", func(kc *kcfg) any { return kc.EnforceNodeAllocatable }, []string{"pods"}, nil},
		{"podLogsDir", func(kc *kcfg) any { return kc.PodLogsDir }, "/var/log/pods", nil},
		{"logging.format", func(kc *kcfg) any { return kc.Logging.Format }, "text", nil},
		{"logging.flushFrequency", func(kc *kcfg) any { return kc.Logging.FlushFrequency.Duration.Duration }, 5 * time.Second, nil},
		{"crashLoopBackOff.maxContainerRestartPeriod", func(kc *kcfg) any { return kc.CrashLoopBackOff.MaxContainerRestartPeriod.Duration }, 300 * time.Second, nil},
		{"imagePullCredentialsVerificationPolicy", func(kc *kcfg) any { return kc.ImagePullCredentialsVerificationPolicy }, kubeletconfigv1beta1.NeverVerifyPreloadedImages, nil},
	}
	for _, c := range common {
		if got := c.get(&file); !reflect.DeepEqual(got, c.want) {
			t.Errorf("file default %s = %#v, want %#v", c.name, got, c.want)
		}
		want := c.want
		if c.wantFlags != nil {
			want = c.wantFlags
		}
		if got := c.get(&flags); !reflect.DeepEqual(got, want) {
			t.Errorf("flags-only default %s = %#v, want %#v", c.name, got, want)
		}
	}
}

// TestDefaultsDependencies covers the defaults that depend on other fields.
func TestDefaultsDependencies(t *testing.T) {
	tests := []struct {
		name  string
		in    kubeletconfigv1beta1.KubeletConfiguration
		check func(kc *kubeletconfigv1beta1.KubeletConfiguration) (got, want any)
	}{
		{"report frequency follows an explicit update frequency",
			kcfg{NodeStatusUpdateFrequency: metav1.Duration{Duration: 20 * time.Second}},
			func(kc *kcfg) (any, any) { return kc.NodeStatusReportFrequency.Duration, 20 * time.Second }},
		{"parallel image pulls turn off serialized pulls",
			kcfg{MaxParallelImagePulls: ptr.To[int32](3)},
			func(kc *kcfg) (any, any) { return *kc.SerializeImagePulls, false }},
		{"negative podPidsLimit means node allocatable",
			kcfg{PodPidsLimit: ptr.To[int64](-5)},
			func(kc *kcfg) (any, any) { return *kc.PodPidsLimit, int64(-1) }},
		{"explicit false pointers are kept",
			kcfg{EnableServer: ptr.To(false)},
			func(kc *kcfg) (any, any) { return *kc.EnableServer, false }},
		{"crash loop back-off default needs its feature gate",
			kcfg{FeatureGates: map[string]bool{featureKubeletCrashLoopBackOffMax: false}},
			func(kc *kcfg) (any, any) { return kc.CrashLoopBackOff.MaxContainerRestartPeriod == nil, true }},
		{"image pull verification default needs its feature gate",
			kcfg{FeatureGates: map[string]bool{featureKubeletEnsureSecretPulledImages: false}},
			func(kc *kcfg) (any, any) {
				return kc.ImagePullCredentialsVerificationPolicy, kubeletconfigv1beta1.ImagePullCredentialsVerificationPolicy("")
			}},
		{"evictionHard is replaced, not merged, by default",
			kcfg{EvictionHard: map[string]string{"memory.available": "1Gi"}},
			func(kc *kcfg) (any, any) { return kc.EvictionHard, map[string]string{"memory.available": "1Gi"} }},
		{"mergeDefaultEvictionSettings merges evictionHard",
			kcfg{EvictionHard: map[string]string{"memory.available": "1Gi"}, MergeDefaultEvictionSettings: ptr.To(true)},
			func(kc *kcfg) (any, any) {
				want := eviction.DefaultEvictionHard()
				want["memory.available"] = "1Gi"
				return kc.EvictionHard, want
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := tt.in
			setDefaults(&kc)
			setFileDefaults(&kc)
			if got, want := tt.check(&kc); !reflect.DeepEqual(got, want) {
				t.Errorf("got %#v, want %#v", got, want)
			}
		})
	}
}
