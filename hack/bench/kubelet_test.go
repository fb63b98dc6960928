package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

// TestKubeletConfig decodes the rendered configuration strictly into the kubelet's own type: a
// misspelt field fails here rather than being ignored by the kubelet.
func TestKubeletConfig(t *testing.T) {
	s := kubeletSettings{staticPodPath: "/tmp/b/manifests", podLogsDir: "/tmp/b/pods",
		endpoint: "unix:///var/lib/nodelet-testenv/containerd.sock", readOnlyPort: 31255,
		cgroupRoot: "/nodelet-bench-0a1b2c3d", volumePluginDir: "/tmp/b/volume-plugins", fileCheck: 20 * time.Second}
	var c kubeletconfigv1beta1.KubeletConfiguration
	if err := yaml.UnmarshalStrict([]byte(kubeletConfig(s)), &c); err != nil {
		t.Fatalf("the rendered KubeletConfiguration does not decode strictly: %v\n%s", err, kubeletConfig(s))
	}
	if c.Kind != "KubeletConfiguration" || c.APIVersion != "kubelet.config.k8s.io/v1beta1" {
		t.Errorf("kind %q, apiVersion %q", c.Kind, c.APIVersion)
	}
	for what, ok := range map[string]bool{
		"staticPodPath":            c.StaticPodPath == s.staticPodPath,
		"fileCheckFrequency":       c.FileCheckFrequency.Duration == 20*time.Second,
		"podLogsDir":               c.PodLogsDir == s.podLogsDir,
		"containerRuntimeEndpoint": c.ContainerRuntimeEndpoint == s.endpoint,
		"readOnlyPort":             c.ReadOnlyPort == 31255,
		"address":                  c.Address == "127.0.0.1",
		"enableServer":             c.EnableServer != nil && !*c.EnableServer,
		"healthzPort":              c.HealthzPort != nil && *c.HealthzPort == 0,
		"authentication":           c.Authentication.Webhook.Enabled != nil && !*c.Authentication.Webhook.Enabled,
		"authorization":            c.Authorization.Mode == kubeletconfigv1beta1.KubeletAuthorizationModeAlwaysAllow,
		"cgroupDriver":             c.CgroupDriver == "cgroupfs",
		"failCgroupV1":             c.FailCgroupV1 != nil && !*c.FailCgroupV1,
		"cgroupsPerQOS":            c.CgroupsPerQOS != nil && *c.CgroupsPerQOS,
		"cgroupRoot":               c.CgroupRoot == s.cgroupRoot,
		"failSwapOn":               c.FailSwapOn != nil && !*c.FailSwapOn,
		"makeIPTablesUtilChains":   c.MakeIPTablesUtilChains != nil && !*c.MakeIPTablesUtilChains,
		"volumePluginDir":          c.VolumePluginDir == s.volumePluginDir,
		"evictionHard":             c.EvictionHard["nodefs.available"] == "1%" && c.EvictionHard["imagefs.available"] == "1%" && len(c.EvictionHard) == 5,
		"imageGC":                  c.ImageGCHighThresholdPercent != nil && *c.ImageGCHighThresholdPercent == 100,
	} {
		if !ok {
			t.Errorf("%s is not as set in:\n%s", what, kubeletConfig(s))
		}
	}
}

func TestRemoveCgroupTreeAndLinks(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "nodelet-bench-1")
	if err := os.MkdirAll(filepath.Join(root, "kubepods", "besteffort", "pod1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := removeCgroupTree(root); err != nil {
		t.Fatalf("removeCgroupTree: %v", err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("%s remains (%v)", root, err)
	}
	if err := removeCgroupTree(root); err != nil {
		t.Errorf("removeCgroupTree of a missing tree: %v", err)
	}

	links, logs := filepath.Join(dir, "containers"), filepath.Join(dir, "pods")
	if err := os.MkdirAll(links, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, to := range map[string]string{"ours.log": logs + "/ns_p_uid/main/0.log", "other.log": "/var/log/pods/x/0.log"} {
		if err := os.Symlink(to, filepath.Join(links, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := removeLinksInto(links, logs); err != nil {
		t.Fatalf("removeLinksInto: %v", err)
	}
	ents, _ := os.ReadDir(links)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if strings.Join(left, ",") != "other.log" {
		t.Errorf("links left: %v, want only other.log", left)
	}
}
