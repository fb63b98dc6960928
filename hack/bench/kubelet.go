package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// kubeletVersion is the upstream kubelet the bench compares nodelet with; hack/cluster.sh
// builds it from the Go module proxy (the wrapper module hack/controlplane/k8s).
const kubeletVersion = "v1.37.1"

// kubeletBinary returns the upstream kubelet built by `hack/cluster.sh build`, which builds it
// (several minutes, once) unless its cache has it, and prints the cache directory.
func kubeletBinary(ctx context.Context, root string) (string, error) {
	start := time.Now()
	cmd := exec.CommandContext(ctx, "bash", "hack/cluster.sh", "build")
	cmd.Dir = root
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("build the upstream kubelet %s with `bash hack/cluster.sh build`: %w\n%s", kubeletVersion, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	bin := filepath.Join(strings.TrimSpace(lines[len(lines)-1]), "kubelet")
	if st, err := os.Stat(bin); err != nil || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("`bash hack/cluster.sh build` left no kubelet binary at %s (%v): run it by hand to see why", bin, err)
	}
	logf("upstream kubelet %s ready in %v: %s", kubeletVersion, time.Since(start).Round(time.Millisecond), bin)
	return bin, nil
}

// binaryVersion is the first line of `bin --version`, or "unknown".
func binaryVersion(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// kubeletSettings are the per-run values of the kubelet's configuration.
type kubeletSettings struct {
	staticPodPath   string
	podLogsDir      string
	endpoint        string // CRI endpoint, unix://...
	readOnlyPort    int
	cgroupRoot      string // the bench creates it in every hierarchy: the kubelet requires it to exist
	volumePluginDir string
	fileCheck       time.Duration
}

// kubeletConfig renders the KubeletConfiguration of a standalone kubelet (no API server) that
// runs the static pods of one directory on the test environment's runtime, on this machine's
// cgroup v1, and leaves the host as it found it as far as a setting allows (hostChanges does
// the rest).
func kubeletConfig(s kubeletSettings) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# Static pods only; their status is read from the read-only port's /pods, as nodelet's.
staticPodPath: %s
fileCheckFrequency: %s
podLogsDir: %s
containerRuntimeEndpoint: %s
address: 127.0.0.1
readOnlyPort: %d
# No authenticated API (port 10250), no healthz port. Authentication and authorization are
# still built at start-up: webhooks need an API server, so neither is used.
enableServer: false
healthzPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
# cgroup v1 with cgroupfs, as the test environment's containerd. Pods get QoS cgroups under the
# bench's own cgroup root rather than /kubepods, which nodelet uses: the kubelet sets CPU shares
# and limits on its QoS cgroups.
cgroupDriver: cgroupfs
failCgroupV1: false
cgroupsPerQOS: true
cgroupRoot: %s
enforceNodeAllocatable: [pods]
failSwapOn: false
# Host changes the bench cannot undo well: no iptables chains, no plugin directory in /usr.
makeIPTablesUtilChains: false
volumePluginDir: %s
# Never evict on a well-filled shared disk, never remove the test images.
evictionHard:
  memory.available: 1Mi
  nodefs.available: 1%%
  nodefs.inodesFree: 1%%
  imagefs.available: 1%%
  imagefs.inodesFree: 1%%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
`, s.staticPodPath, s.fileCheck, s.podLogsDir, s.endpoint, s.readOnlyPort, s.cgroupRoot, s.volumePluginDir)
}

// startKubelet starts the upstream kubelet standalone on a fresh set of directories and its
// own cgroup root. On error nothing is left running; the caller removes k.base and undoes
// the host changes with cleanup in every case once k is returned.
func startKubelet(tmp, bin, endpoint string) (*agent, error) {
	k, err := newAgent(tmp, kindKubelet)
	if err != nil {
		return k, err
	}
	// The kubelet removes the sandboxes of deleted pods in its container GC, once a minute.
	k.keepsStoppedSandboxes = true
	s := kubeletSettings{staticPodPath: k.manifests, podLogsDir: k.logsDir, endpoint: endpoint,
		readOnlyPort: k.port, cgroupRoot: "/nodelet-" + k.name,
		volumePluginDir: filepath.Join(k.base, "volume-plugins"), fileCheck: fileCheckFrequency}
	removeStaleCgroupRoots() // the bench is alone: no other kubelet of a bench uses one
	if k.host, err = recordHost(s.cgroupRoot, k.logsDir); err != nil {
		return k, err
	}
	if err := k.host.createCgroupRoot(); err != nil {
		return k, err
	}
	cfg := filepath.Join(k.base, "config.yaml")
	if err := os.WriteFile(cfg, []byte(kubeletConfig(s)), 0o644); err != nil {
		return k, fmt.Errorf("write the KubeletConfiguration: %w", err)
	}
	// --root-dir, --cert-dir (its serving certificate, self-signed; the default is
	// /var/lib/kubelet/pki whatever the root directory) and --hostname-override are flags only.
	return k, k.launch(bin, "--config", cfg, "--root-dir", k.rootDir,
		"--cert-dir", filepath.Join(k.base, "pki"), "--hostname-override", k.name)
}
