package kubeletconfig

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/eviction"
)

func fixedHostname(name string) HostnameFunc {
	return func() (string, error) { return name, nil }
}

// writeConfig writes content to a config file in a temp dir and returns its path.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const header = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

func TestLoadKubeadmConfig(t *testing.T) {
	path := filepath.Join("testdata", "kubeadm.yaml")
	cfg, err := Load([]string{"--config", path}, fixedHostname("node"))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	kc := cfg.KubeletConfiguration
	if kc.StaticPodPath != "/etc/kubernetes/manifests" {
		t.Errorf("staticPodPath = %q", kc.StaticPodPath)
	}
	if cfg.ConfigFile != path {
		t.Errorf("ConfigFile = %q, want %q", cfg.ConfigFile, path)
	}
	// Zero values written by kubeadm are defaulted as upstream.
	if kc.SyncFrequency.Duration != time.Minute || kc.FileCheckFrequency.Duration != 20*time.Second {
		t.Errorf("durations not defaulted: sync %v fileCheck %v", kc.SyncFrequency, kc.FileCheckFrequency)
	}
	if kc.ContainerRuntimeEndpoint != defaultContainerRuntimeEndpoint {
		t.Errorf("containerRuntimeEndpoint = %q", kc.ContainerRuntimeEndpoint)
	}
	if kc.ReadOnlyPort != 0 {
		t.Errorf("readOnlyPort = %d, want file default 0", kc.ReadOnlyPort)
	}
	if kc.CgroupDriver != "systemd" || kc.ClusterDomain != "cluster.local" || !kc.RotateCertificates {
		t.Errorf("ignored fields must still be decoded: %q %q %v", kc.CgroupDriver, kc.ClusterDomain, kc.RotateCertificates)
	}
	wantEviction := map[string]string{"memory.available": "200Mi", "nodefs.available": "10%"}
	if !reflect.DeepEqual(kc.EvictionHard, wantEviction) {
		t.Errorf("evictionHard = %v, want %v (no merge unless mergeDefaultEvictionSettings)", kc.EvictionHard, wantEviction)
	}
	wantIgnored := []string{
		"featureGates.NodeSwap", "memorySwap", "tlsCipherSuites",
	}
	if !reflect.DeepEqual(cfg.Ignored, wantIgnored) {
		t.Errorf("Ignored =\n  %q\nwant\n  %q", cfg.Ignored, wantIgnored)
	}
}

func TestLoadJSONConfig(t *testing.T) {
	path := filepath.Join("testdata", "static-pods.json")
	cfg, err := Load([]string{"--config=" + path}, fixedHostname("node"))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	kc := cfg.KubeletConfiguration
	absDir, _ := filepath.Abs("testdata")
	checks := []struct {
		name      string
		got, want any
	}{
		{"staticPodPath (relative to the file)", kc.StaticPodPath, filepath.Join(absDir, "manifests")},
		{"staticPodURL", kc.StaticPodURL, "https://config.example.com/pods"},
		{"staticPodURLHeader", kc.StaticPodURLHeader, map[string][]string{"Authorization": {"Bearer abc"}, "X-Node": {"a", "b"}}},
		{"fileCheckFrequency", kc.FileCheckFrequency.Duration, 5 * time.Second},
		{"httpCheckFrequency", kc.HTTPCheckFrequency.Duration, 30 * time.Second},
		{"syncFrequency", kc.SyncFrequency.Duration, 2 * time.Minute},
		{"maxPods", kc.MaxPods, int32(50)},
		{"address", kc.Address, "127.0.0.1"},
		{"port", kc.Port, int32(11250)},
		{"readOnlyPort", kc.ReadOnlyPort, int32(11255)},
		{"containerRuntimeEndpoint", kc.ContainerRuntimeEndpoint, "unix:///run/crio/crio.sock"},
		{"evictionHard (file default)", kc.EvictionHard, eviction.DefaultEvictionHard()},
		// healthzPort and enableServer are set to their defaults: not ignored.
		{"Ignored", cfg.Ignored, []string{"logging.format"}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestLoadFileErrors(t *testing.T) {
	tests := []struct {
		name    string
		file    string // testdata file, or
		content string // inline content
		want    []string
	}{
		{name: "unknown field", file: "unknown-field.yaml", want: []string{`load testdata/unknown-field.yaml: unknown field "staticPodPathh"`}},
		{name: "nested unknown field", file: "nested-unknown-field.yaml", want: []string{"nested-unknown-field.yaml", `unknown field "authentication.x509.clientCAFilee"`}},
		{name: "duplicate field", file: "duplicate-field.yaml", want: []string{"duplicate-field.yaml", `"staticPodPath" already set`}},
		{name: "wrong kind", file: "wrong-kind.yaml", want: []string{"wrong-kind.yaml", `kind: Unsupported value: "KubeProxyConfiguration": supported values: "KubeletConfiguration"`}},
		{name: "invalid values", file: "invalid-values.yaml", want: []string{"invalid-values.yaml", "readOnlyPort: Invalid value: 70000: must be between 0 and 65535", `syncFrequency: Invalid value: "-1s": must be greater than 0`}},
		{name: "missing kind", content: "apiVersion: kubelet.config.k8s.io/v1beta1\n", want: []string{"kind: Required value"}},
		{name: "wrong apiVersion", content: "apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n", want: []string{`apiVersion: Unsupported value: "kubelet.config.k8s.io/v1"`}},
		{name: "field name case matters", content: header + "StaticPodPath: /x\n", want: []string{`unknown field "StaticPodPath"`}},
		{name: "duplicate JSON field", content: `{"kind":"KubeletConfiguration","apiVersion":"kubelet.config.k8s.io/v1beta1","port":1,"port":2}`, want: []string{`"port" already set`}},
		{name: "wrong type", content: header + "maxPods: many\n", want: []string{"maxPods"}},
		{name: "empty file", content: "\n", want: []string{"file is empty"}},
		{name: "not an object", content: "- a\n", want: []string{"not a YAML or JSON object"}},
		{name: "bad YAML", content: header + "port: [\n", want: []string{"decode:"}},
		{name: "missing file", file: "does-not-exist.yaml", want: []string{"load testdata/does-not-exist.yaml:", "no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := "testdata/" + tt.file
			if tt.file == "" {
				path = writeConfig(t, tt.content)
			}
			_, err := Load([]string{"--config", path}, fixedHostname("node"))
			if err == nil {
				t.Fatal("Load succeeded, want error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file %q", err, path)
			}
		})
	}
}

func TestResolveRelativePaths(t *testing.T) {
	path := writeConfig(t, header+`staticPodPath: pods
tlsCertFile: pki/kubelet.crt
authentication:
  x509:
    clientCAFile: /abs/ca.crt
resolvConf: ""
`)
	cfg, err := Load([]string{"--config", path}, fixedHostname("node"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	kc := cfg.KubeletConfiguration
	if kc.StaticPodPath != filepath.Join(dir, "pods") || kc.TLSCertFile != filepath.Join(dir, "pki/kubelet.crt") {
		t.Errorf("relative paths not resolved: %q %q", kc.StaticPodPath, kc.TLSCertFile)
	}
	if kc.Authentication.X509.ClientCAFile != "/abs/ca.crt" {
		t.Errorf("absolute path changed: %q", kc.Authentication.X509.ClientCAFile)
	}
	if ptr.Deref(kc.ResolverConfig, "x") != "" {
		t.Errorf("empty resolvConf changed: %q", *kc.ResolverConfig)
	}
}

// featureGates.EventedPLEG is read (on unless the file turns it off); other gates stay
// reported as ignored.
func TestEventedPLEGFeatureGate(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		gates   string
		want    bool
		ignored []string
	}{
		{"", true, nil},
		{"featureGates: {EventedPLEG: false}\n", false, nil},
		{"featureGates: {EventedPLEG: true, MemoryQoS: true}\n", true, []string{"featureGates.MemoryQoS"}},
	} {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+tc.gates), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := mustLoad(t, "--config", path)
		if got := FeatureEnabled(cfg.KubeletConfiguration, "EventedPLEG"); got != tc.want {
			t.Errorf("%q: EventedPLEG = %v, want %v", tc.gates, got, tc.want)
		}
		if !slices.Equal(cfg.Ignored, tc.ignored) {
			t.Errorf("%q: ignored %q, want %q", tc.gates, cfg.Ignored, tc.ignored)
		}
	}
}
