package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodelet/nodelet/internal/kubeletconfig"
	"github.com/nodelet/nodelet/internal/nodeshutdown"
)

// TestConfigFrom: what cmd/nodelet's flags and file become in the agent's Config, where the
// mapping decides something (addresses, defaults, errors naming the field).
func TestConfigFrom(t *testing.T) {
	dir := t.TempDir()
	file := func(extra string) string {
		p := filepath.Join(dir, "config-"+time.Now().Format("150405.000000000")+".yaml")
		conf := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n" + extra
		if err := os.WriteFile(p, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name    string
		args    []string
		file    string
		check   func(t *testing.T, c Config)
		wantErr string
	}{
		{name: "standalone: the read-only API on loopback, no kubelet API",
			args: []string{"--read-only-port", "10255"},
			check: func(t *testing.T, c Config) {
				if c.ReadOnlyAddress != "127.0.0.1:10255" || c.Cluster.Kubeconfig != "" {
					t.Errorf("read-only %q, kubeconfig %q", c.ReadOnlyAddress, c.Cluster.Kubeconfig)
				}
			}},
		{name: "cluster: the read-only port off unless set, the kubelet API on address:port",
			args: []string{"--kubeconfig", "/etc/kubernetes/kubelet.conf", "--address", "10.0.0.5", "--port", "10250"},
			check: func(t *testing.T, c Config) {
				if c.ReadOnlyAddress != "" || c.Cluster.KubeletAPI.Address != "10.0.0.5:10250" {
					t.Errorf("read-only %q, kubelet API %q", c.ReadOnlyAddress, c.Cluster.KubeletAPI.Address)
				}
			}},
		{name: "cluster: port 0 is refused, naming the field",
			args:    []string{"--kubeconfig", "/etc/kubernetes/kubelet.conf", "--port", "0"},
			wantErr: "port"},
		{name: "graceful shutdown: off by default; two bands from shutdownGracePeriod and the critical pods' part",
			file: "shutdownGracePeriod: 30s\nshutdownGracePeriodCriticalPods: 10s\n",
			check: func(t *testing.T, c Config) {
				want := []nodeshutdown.Period{{Priority: 0, GracePeriodSeconds: 20}, {Priority: nodeshutdown.SystemCriticalPriority, GracePeriodSeconds: 10}}
				if !slices.Equal(c.ShutdownPeriods, want) {
					t.Errorf("shutdown bands %v, want %v", c.ShutdownPeriods, want)
				}
			}},
		{name: "graceful shutdown by pod priority",
			file: "shutdownGracePeriodByPodPriority:\n- {priority: 1000, shutdownGracePeriodSeconds: 5}\n- {priority: 0, shutdownGracePeriodSeconds: 20}\n",
			check: func(t *testing.T, c Config) {
				if want := []nodeshutdown.Period{{Priority: 0, GracePeriodSeconds: 20}, {Priority: 1000, GracePeriodSeconds: 5}}; !slices.Equal(c.ShutdownPeriods, want) {
					t.Errorf("shutdown bands %v, want %v", c.ShutdownPeriods, want)
				}
			}},
		{name: "graceful shutdown's feature gate off: no bands",
			file: "featureGates: {GracefulNodeShutdown: false}\n",
			check: func(t *testing.T, c Config) {
				if len(c.ShutdownPeriods) != 0 {
					t.Errorf("shutdown bands %v with GracefulNodeShutdown off", c.ShutdownPeriods)
				}
			}},
		{name: "shutdownGracePeriod with its feature gate off is refused, naming both",
			file:    "shutdownGracePeriod: 30s\nfeatureGates: {GracefulNodeShutdown: false}\n",
			wantErr: "requires feature gate GracefulNodeShutdown"},
		{name: "upstream's defaults",
			check: func(t *testing.T, c Config) {
				if c.ResolvConf != "/etc/resolv.conf" || !c.SerializeImagePulls || c.ImageGC.HighThresholdPercent != 85 ||
					c.ImageGC.LowThresholdPercent != 80 || c.SyncFrequency != time.Minute || c.DisableEventedPLEG {
					t.Errorf("defaults: %+v", c)
				}
				if len(c.Eviction.Thresholds) == 0 {
					t.Error("no default hard eviction thresholds")
				}
			}},
		{name: "the pods' cgroup: /kubepods by default",
			check: func(t *testing.T, c Config) {
				if c.PodsCgroup != "/kubepods" || c.Eviction.PodsCgroup != "/kubepods" || c.CgroupDriver != "cgroupfs" || !c.FailCgroupV1 {
					t.Errorf("pods cgroup %q (eviction %q), driver %q, failCgroupV1 %v", c.PodsCgroup, c.Eviction.PodsCgroup, c.CgroupDriver, c.FailCgroupV1)
				}
			}},
		{name: "the pods' cgroup under cgroupRoot",
			file: "cgroupRoot: /nodelet\ncgroupDriver: systemd\n",
			check: func(t *testing.T, c Config) {
				if c.PodsCgroup != "/nodelet/kubepods" || c.Eviction.PodsCgroup != "/nodelet/kubepods" || c.CgroupDriver != "systemd" {
					t.Errorf("pods cgroup %q (eviction %q), driver %q", c.PodsCgroup, c.Eviction.PodsCgroup, c.CgroupDriver)
				}
			}},
		{name: "cgroupsPerQOS false is refused, naming the field",
			file:    "cgroupsPerQOS: false\n",
			wantErr: "cgroupsPerQOS"},
		{name: "a bad eviction threshold names the field",
			file:    "evictionHard:\n  memory.available: \"-1Gi\"\n",
			wantErr: "evictionHard[memory.available]"},
		{name: "a bad log size names the field",
			file:    "containerLogMaxSize: \"ten\"\n",
			wantErr: "containerLogMaxSize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--config", file(tc.file), "--root-dir", filepath.Join(dir, "root")}, tc.args...)
			kc, err := kubeletconfig.Load(args, nil)
			if err != nil {
				if tc.wantErr != "" && strings.Contains(err.Error(), tc.wantErr) {
					return // refused while loading, naming the field: as good
				}
				t.Fatalf("load: %v", err)
			}
			c, err := ConfigFrom(kc)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}
