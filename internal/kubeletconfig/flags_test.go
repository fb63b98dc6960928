package kubeletconfig

import (
	"errors"
	goflag "flag"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// fullFile sets every field that has a flag, to values no flag test uses.
const fullFile = header + `staticPodPath: /file/pods
staticPodURL: http://file.example/pods
staticPodURLHeader:
  X-File: ["1"]
fileCheckFrequency: 11s
httpCheckFrequency: 12s
syncFrequency: 13s
maxPods: 14
containerRuntimeEndpoint: unix:///file.sock
address: 10.0.0.1
port: 1015
readOnlyPort: 1016
`

func TestFlagsOverrideFile(t *testing.T) {
	path := writeConfig(t, fullFile)
	fromFile := mustLoad(t, "--config", path).KubeletConfiguration

	tests := []struct {
		flag  string
		value string
		get   func(kc *kubeletconfigv1beta1.KubeletConfiguration) any
		want  any
	}{
		{"pod-manifest-path", "/flag/pods", func(kc *kcfg) any { return kc.StaticPodPath }, "/flag/pods"},
		{"manifest-url", "https://flag.example/pods", func(kc *kcfg) any { return kc.StaticPodURL }, "https://flag.example/pods"},
		{"manifest-url-header", "X-Flag:2", func(kc *kcfg) any { return kc.StaticPodURLHeader }, map[string][]string{"X-Flag": {"2"}}},
		{"file-check-frequency", "21s", func(kc *kcfg) any { return kc.FileCheckFrequency.Duration }, 21 * time.Second},
		{"http-check-frequency", "22s", func(kc *kcfg) any { return kc.HTTPCheckFrequency.Duration }, 22 * time.Second},
		{"sync-frequency", "23s", func(kc *kcfg) any { return kc.SyncFrequency.Duration }, 23 * time.Second},
		{"max-pods", "24", func(kc *kcfg) any { return kc.MaxPods }, int32(24)},
		{"max-pods", "0", func(kc *kcfg) any { return kc.MaxPods }, int32(0)},
		{"container-runtime-endpoint", "/run/flag.sock", func(kc *kcfg) any { return kc.ContainerRuntimeEndpoint }, "/run/flag.sock"},
		{"address", "::1", func(kc *kcfg) any { return kc.Address }, "::1"},
		{"port", "2025", func(kc *kcfg) any { return kc.Port }, int32(2025)},
		{"read-only-port", "0", func(kc *kcfg) any { return kc.ReadOnlyPort }, int32(0)},
		{"container-log-max-size", "1Mi", func(kc *kcfg) any { return kc.ContainerLogMaxSize }, "1Mi"},
		{"container-log-max-files", "3", func(kc *kcfg) any { return *kc.ContainerLogMaxFiles }, int32(3)},
		{"seccomp-default", "true", func(kc *kcfg) any { return *kc.SeccompDefault }, true},
		{"fail-cgroupv1", "false", func(kc *kcfg) any { return *kc.FailCgroupV1 }, false},
		{"pod-max-pids", "1024", func(kc *kcfg) any { return *kc.PodPidsLimit }, int64(1024)},
		{"allowed-unsafe-sysctls", "net.core.*,kernel.msgmax", func(kc *kcfg) any { return kc.AllowedUnsafeSysctls }, []string{"net.core.*", "kernel.msgmax"}},
		{"eviction-hard", "memory.available<1Gi,nodefs.available<5%", func(kc *kcfg) any { return kc.EvictionHard }, map[string]string{"memory.available": "1Gi", "nodefs.available": "5%"}},
		{"eviction-soft-grace-period", "memory.available=1m30s", func(kc *kcfg) any { return kc.EvictionSoftGracePeriod }, map[string]string{"memory.available": "1m30s"}},
		{"eviction-minimum-reclaim", "nodefs.available=1Gi", func(kc *kcfg) any { return kc.EvictionMinimumReclaim }, map[string]string{"nodefs.available": "1Gi"}},
		{"eviction-pressure-transition-period", "30s", func(kc *kcfg) any { return kc.EvictionPressureTransitionPeriod.Duration }, 30 * time.Second},
		{"eviction-max-pod-grace-period", "20", func(kc *kcfg) any { return kc.EvictionMaxPodGracePeriod }, int32(20)},
		{"kernel-memcg-notification", "true", func(kc *kcfg) any { return kc.KernelMemcgNotification }, true},
		{"volume-stats-agg-period", "5s", func(kc *kcfg) any { return kc.VolumeStatsAggPeriod.Duration }, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.flag+"="+tt.value, func(t *testing.T) {
			// Flag before and after --config: order does not matter.
			after := []string{"--config", path, "--" + tt.flag, tt.value}
			if _, isBool := tt.want.(bool); isBool { // a boolean flag takes its value after "=" only
				after = []string{"--config", path, "--" + tt.flag + "=" + tt.value}
			}
			for _, args := range [][]string{{"--" + tt.flag + "=" + tt.value, "--config", path}, after} {
				got := mustLoad(t, args...).KubeletConfiguration
				if v := tt.get(&got); !reflect.DeepEqual(v, tt.want) {
					t.Errorf("%q: got %#v, want %#v", args, v, tt.want)
				}
				// Every other field keeps the file's value. A deep copy: apply writes through
				// the pointer fields, which a plain copy would share with fromFile.
				want := *fromFile.DeepCopy()
				for _, f := range configFlags {
					if f.name == tt.flag {
						f.apply(&want, &got)
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%q: flag changed more than its own field", args)
				}
			}
		})
	}
}

func TestFlagsWithoutFile(t *testing.T) {
	cfg := mustLoad(t, "--pod-manifest-path=/etc/pods", "--read-only-port=0", "--kubeconfig=/etc/kc", "--node-ip=10.1.2.3,fd00::1")
	if cfg.ConfigFile != "" || cfg.Ignored != nil {
		t.Errorf("ConfigFile %q Ignored %q, want none", cfg.ConfigFile, cfg.Ignored)
	}
	if cfg.KubeletConfiguration.StaticPodPath != "/etc/pods" || cfg.KubeletConfiguration.ReadOnlyPort != 0 {
		t.Errorf("flags not applied: %q %d", cfg.KubeletConfiguration.StaticPodPath, cfg.KubeletConfiguration.ReadOnlyPort)
	}
	if cfg.Kubeconfig != "/etc/kc" || cfg.NodeIP != "10.1.2.3,fd00::1" || cfg.RootDir != DefaultRootDir {
		t.Errorf("Kubeconfig %q NodeIP %q RootDir %q", cfg.Kubeconfig, cfg.NodeIP, cfg.RootDir)
	}
	if got := mustLoad(t, "--pod_manifest_path=/underscore").KubeletConfiguration.StaticPodPath; got != "/underscore" {
		t.Errorf("--pod_manifest_path: staticPodPath = %q, want /underscore", got)
	}
	if got := mustLoad(t, "--root-dir=/srv/nodelet/").RootDir; got != "/srv/nodelet" {
		t.Errorf("RootDir = %q, want cleaned /srv/nodelet", got)
	}
}

func TestManifestURLHeaderFlag(t *testing.T) {
	fileWithHeader := writeConfig(t, header+"staticPodURLHeader:\n  X-File: [\"1\"]\n")
	tests := []struct {
		name string
		args []string
		want map[string][]string
	}{
		{"comma separated", []string{"--manifest-url-header=a:x,b:y"}, map[string][]string{"a": {"x"}, "b": {"y"}}},
		{"repeated flag appends in order", []string{"--manifest-url-header", "a:hello,b:again,c:world", "--manifest-url-header", "b:beautiful"},
			map[string][]string{"a": {"hello"}, "b": {"again", "beautiful"}, "c": {"world"}}},
		{"value keeps later colons, spaces trimmed", []string{"--manifest-url-header= Authorization : Bearer a:b "}, map[string][]string{"Authorization": {"Bearer a:b"}}},
		{"empty pairs skipped", []string{"--manifest-url-header=a:x,,"}, map[string][]string{"a": {"x"}}},
		{"file map kept without flag", []string{"--config", fileWithHeader}, map[string][]string{"X-File": {"1"}}},
		{"flag replaces file map", []string{"--config", fileWithHeader, "--manifest-url-header=a:x"}, map[string][]string{"a": {"x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustLoad(t, tt.args...).KubeletConfiguration.StaticPodURLHeader
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}

	l := NewFlagSet("test")
	if _, err := l.Load([]string{"--manifest-url-header=b:2,a:1,b:3"}, fixedHostname("n")); err != nil {
		t.Fatal(err)
	}
	if got := l.FlagSet().Lookup("manifest-url-header").Value.String(); got != "a:1,b:2,b:3" {
		t.Errorf("String() = %q", got)
	}
}

func TestNodeName(t *testing.T) {
	failing := func() (string, error) { return "", errors.New("no uts") }
	tests := []struct {
		name     string
		args     []string
		hostname HostnameFunc
		want     string
		wantErr  string
	}{
		{"hostname lower-cased and trimmed", nil, fixedHostname(" Node-1.Example.COM\n"), "node-1.example.com", ""},
		{"override wins", []string{"--hostname-override=Worker-7"}, fixedHostname("ignored"), "worker-7", ""},
		{"override wins even if hostname fails", []string{"--hostname-override=w"}, failing, "w", ""},
		{"hostname error", nil, failing, "", "couldn't determine hostname: no uts"},
		{"empty hostname", nil, fixedHostname("  "), "", "empty hostname is invalid"},
		{"blank override", []string{"--hostname-override=  "}, fixedHostname("h"), "", "--hostname-override: empty hostname is invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(tt.args, tt.hostname)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.NodeName != tt.want {
				t.Errorf("NodeName = %q, want %q", cfg.NodeName, tt.want)
			}
		})
	}
}

// restoreKlog puts klog's verbosity back after a test that changes it.
func restoreKlog(t *testing.T) {
	fs := goflag.NewFlagSet("restore", goflag.ContinueOnError)
	klog.InitFlags(fs)
	v, vmodule := fs.Lookup("v").Value.String(), fs.Lookup("vmodule").Value.String()
	t.Cleanup(func() {
		_ = fs.Set("v", v)
		_ = fs.Set("vmodule", vmodule)
	})
}

func TestVerbosityFlags(t *testing.T) {
	restoreKlog(t)
	fileV2 := writeConfig(t, header+"logging:\n  verbosity: 2\n  vmodule:\n  - filePattern: podconfig*\n    verbosity: 5\n")
	tests := []struct {
		name        string
		args        []string
		wantV       uint32
		wantVModule string
	}{
		{"-v=4", []string{"-v=4"}, 4, ""},
		{"--v 4", []string{"--v", "4"}, 4, ""},
		{"-v 3 --vmodule", []string{"-v", "3", "--vmodule=load*=6,flags=2"}, 3, "load*=6,flags=2"},
		{"file verbosity", []string{"--config", fileV2}, 2, "podconfig*=5"},
		{"flag beats file", []string{"--config", fileV2, "-v=4", "--vmodule=x=1"}, 4, "x=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewFlagSet("test")
			cfg, err := l.Load(tt.args, fixedHostname("n"))
			if err != nil {
				t.Fatal(err)
			}
			lc := cfg.KubeletConfiguration.Logging
			if uint32(lc.Verbosity) != tt.wantV {
				t.Errorf("logging.verbosity = %d, want %d", lc.Verbosity, tt.wantV)
			}
			var mods []string
			for _, m := range lc.VModule {
				mods = append(mods, fmt.Sprintf("%s=%d", m.FilePattern, m.Verbosity))
			}
			if got := strings.Join(mods, ","); got != tt.wantVModule {
				t.Errorf("logging.vmodule = %q, want %q", got, tt.wantVModule)
			}
			// The flag is klog's own: its value is klog's verbosity.
			if got := l.FlagSet().Lookup("v").Value.String(); got != fmt.Sprint(lc.Verbosity) {
				t.Errorf("flag v = %q, want %d", got, lc.Verbosity)
			}
			if !klog.V(klog.Level(tt.wantV)).Enabled() || klog.V(klog.Level(tt.wantV+1)).Enabled() {
				t.Errorf("klog verbosity is not %d", tt.wantV)
			}
		})
	}
}

func TestCommandLineErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"--cpu-manager-policy=static"}, "unknown flag: --cpu-manager-policy"},
		{"unknown shorthand", []string{"-x"}, "unknown shorthand flag: 'x'"},
		{"positional argument", []string{"run"}, `unexpected argument "run"`},
		{"bad address", []string{"--address=localhost"}, `invalid argument "localhost" for "--address" flag`},
		{"bad duration", []string{"--sync-frequency=often"}, `invalid argument "often" for "--sync-frequency" flag`},
		{"malformed header", []string{"--manifest-url-header=novalue"}, `invalid argument "novalue" for "--manifest-url-header" flag`},
		{"bad -v", []string{"-v=loud"}, `invalid argument "loud" for "-v, --v" flag`},
		{"bad vmodule", []string{"--vmodule=x"}, `"--vmodule" flag`},
		{"read-only-port out of range", []string{"--read-only-port=70000"}, "--read-only-port: readOnlyPort: Invalid value: 70000: must be between 0 and 65535"},
		{"one log file", []string{"--container-log-max-files=1"}, "--container-log-max-files: containerLogMaxFiles: Invalid value: 1: must be greater than 1"},
		{"bad log size", []string{"--container-log-max-size=ten"}, `--container-log-max-size: containerLogMaxSize: Invalid value: "ten": must be a quantity such as 10Mi (negative: no rotation)`},
		{"negative max-pods", []string{"--max-pods=-1"}, "--max-pods: maxPods: Invalid value: -1: must not be negative"},
		{"zero sync-frequency", []string{"--sync-frequency=0"}, `--sync-frequency: syncFrequency: Invalid value: "0s": must be greater than 0`},
		{"negative file-check-frequency", []string{"--file-check-frequency=-1s"}, `--file-check-frequency: fileCheckFrequency: Invalid value: "-1s"`},
		{"port zero", []string{"--port=0"}, "--port: port: Invalid value: 0: must be between 1 and 65535"},
		{"tcp runtime endpoint", []string{"--container-runtime-endpoint=tcp://localhost:3735"}, `--container-runtime-endpoint: containerRuntimeEndpoint: Invalid value: "tcp://localhost:3735": scheme "tcp" is not supported`},
		{"bad header name", []string{"--manifest-url-header=bad key:v"}, "--manifest-url-header: staticPodURLHeader[bad key]: Invalid value"},
		{"bad manifest url", []string{"--manifest-url=file:///etc/pods"}, "--manifest-url: staticPodURL: Invalid value"},
		{"bad node-ip", []string{"--node-ip=10.0.0.300"}, `--node-ip: "10.0.0.300": "10.0.0.300" is not a valid IP address`},
		{"two IPv4 node-ips", []string{"--node-ip=10.0.0.1,10.0.0.2"}, "--node-ip:"},
		{"empty root-dir", []string{"--root-dir="}, "--root-dir: must not be empty"},
		{"file error still named", []string{"--config", "testdata/invalid-values.yaml", "--sync-frequency=1s"}, "load testdata/invalid-values.yaml: readOnlyPort: Invalid value: 70000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.args, fixedHostname("n"))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestFileValueOverriddenByValidFlag(t *testing.T) {
	// Upstream validates after flags are applied, so a flag can repair a
	// bad file value.
	cfg := mustLoad(t, "--config", "testdata/invalid-values.yaml", "--read-only-port=0", "--sync-frequency=30s")
	if cfg.KubeletConfiguration.ReadOnlyPort != 0 || cfg.KubeletConfiguration.SyncFrequency.Duration != 30*time.Second {
		t.Errorf("got readOnlyPort %d syncFrequency %v", cfg.KubeletConfiguration.ReadOnlyPort, cfg.KubeletConfiguration.SyncFrequency)
	}
}

func TestHelpAndReuse(t *testing.T) {
	l := NewFlagSet("nodelet")
	if _, err := l.Load([]string{"--help"}, fixedHostname("n")); !errors.Is(err, pflag.ErrHelp) {
		t.Errorf("--help: err = %v, want pflag.ErrHelp", err)
	}
	if _, err := l.Load(nil, fixedHostname("n")); err == nil {
		t.Error("second Load succeeded, want error")
	}

	fs := NewFlagSet("nodelet").FlagSet()
	wantDefaults := map[string]string{
		"read-only-port":             "10255",
		"port":                       "10250",
		"address":                    "0.0.0.0",
		"max-pods":                   "110",
		"sync-frequency":             "1m0s",
		"file-check-frequency":       "20s",
		"http-check-frequency":       "20s",
		"container-runtime-endpoint": "unix:///run/containerd/containerd.sock",
		"root-dir":                   "/var/lib/nodelet",
		"config":                     "",
		"image-gc-high-threshold":    "85",
		"image-gc-low-threshold":     "80",
		"minimum-image-ttl-duration": "2m0s",
		"image-gc-period":            "5m0s",
		"fail-cgroupv1":              "true",
	}
	for name, want := range wantDefaults {
		f := fs.Lookup(name)
		if f == nil {
			t.Errorf("flag --%s not registered", name)
			continue
		}
		if f.DefValue != want {
			t.Errorf("--%s default = %q, want %q", name, f.DefValue, want)
		}
	}
	if f := fs.ShorthandLookup("v"); f == nil || f.Name != "v" {
		t.Error("-v shorthand not registered")
	}
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	want := []string{"address", "allowed-unsafe-sysctls", "authorization-mode", "bootstrap-kubeconfig", "cert-dir", "cgroup-driver", "cgroup-root", "cgroups-per-qos", "client-ca-file", "config", "config-dir", "container-gc-period", "container-log-max-files", "container-log-max-size", "container-runtime-endpoint", "enforce-node-allocatable", "eviction-hard", "eviction-max-pod-grace-period", "eviction-minimum-reclaim", "eviction-monitoring-period", "eviction-pressure-transition-period", "eviction-soft", "eviction-soft-grace-period", "fail-cgroupv1", "feature-gates", "file-check-frequency", "hostname-override",
		"http-check-frequency", "image-credential-provider-bin-dir", "image-credential-provider-config", "image-gc-high-threshold", "image-gc-low-threshold", "image-gc-period", "kernel-memcg-notification", "kube-reserved-cgroup", "kubeconfig", "manifest-url", "manifest-url-header", "max-pods", "maximum-dead-containers", "maximum-dead-containers-per-container", "minimum-container-ttl-duration", "minimum-image-ttl-duration", "node-ip",
		"node-labels", "node-status-update-frequency", "pod-manifest-path", "pod-max-pids", "port", "read-only-port", "root-dir", "rotate-certificates", "rotate-server-certificates", "seccomp-default", "sync-frequency", "system-reserved-cgroup", "tls-cert-file", "tls-private-key-file", "v", "vmodule", "volume-stats-agg-period"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("flags = %q\nwant    %q", names, want)
	}
}

func TestNodeLabelsFlag(t *testing.T) {
	cfg, err := NewFlagSet("nodelet").Load([]string{"--node-labels", "zone=a,kubernetes.io/role=edge",
		"--node-status-update-frequency", "4s"}, func() (string, error) { return "h", nil })
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"zone": "a", "kubernetes.io/role": "edge"}
	if !reflect.DeepEqual(cfg.NodeLabels, want) {
		t.Errorf("NodeLabels = %v, want %v", cfg.NodeLabels, want)
	}
	if got := cfg.KubeletConfiguration.NodeStatusUpdateFrequency.Duration; got != 4*time.Second {
		t.Errorf("nodeStatusUpdateFrequency = %v, want 4s", got)
	}
}

// A cluster node keeps the unauthenticated read-only port off unless a flag asks for it;
// standalone keeps upstream's flags-only 10255 (the CLI talks to it).
func TestReadOnlyPortInClusterMode(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int32
	}{
		{[]string{"--pod-manifest-path=/etc/pods"}, 10255},
		{[]string{"--kubeconfig=/etc/kc"}, 0},
		{[]string{"--kubeconfig=/etc/kc", "--read-only-port=10255"}, 10255},
		{[]string{"--kubeconfig=/etc/kc", "--read-only-port=11255"}, 11255},
	} {
		if got := mustLoad(t, tc.args...).KubeletConfiguration.ReadOnlyPort; got != tc.want {
			t.Errorf("%q: readOnlyPort = %d, want %d", tc.args, got, tc.want)
		}
	}
}
