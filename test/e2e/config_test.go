package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// writeFiles writes name → content under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const configHeader = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

// TestConfigDirDropIns runs nodelet with --config-dir: the drop-ins are merged over the
// --config file in lexical order (a later one overrides an earlier one, a subdirectory's after
// the files before it), and what they set reaches the pods: the cluster DNS server and domain
// in a ClusterFirst pod's resolv.conf. A file not ending in .conf is skipped and logged.
func TestConfigDirDropIns(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"10-dns.conf":        configHeader + "clusterDNS: [10.96.0.10]\nclusterDomain: first.local\nfeatureGates: {EventedPLEG: true}\n",
		"20-domain.conf":     configHeader + "clusterDomain: second.local\n",
		"30-later/dns.conf":  configHeader + "clusterDNS: [10.96.0.53]\n",
		"99-not-read.yaml":   configHeader + "clusterDomain: never.local\n",
		"15-gates.conf.save": configHeader + "featureGates: {Bogus: true}\n",
	})
	n := startNode(t, "--config-dir", dir)
	n.logs.waitCount(t, 30*time.Second, 1, "Merged the drop-in configuration files", "20-domain.conf", "30-later/dns.conf")
	// The files not ending in .conf are logged as skipped (right after, and read by the log
	// watcher a moment later).
	n.logs.waitCount(t, 30*time.Second, 1, "Skipped a file in the drop-in directory", "99-not-read.yaml")
	n.logs.waitCount(t, 30*time.Second, 1, "Skipped a file in the drop-in directory", "15-gates.conf.save")

	n.write("dns.yaml", `apiVersion: v1
kind: Pod
metadata: {name: dns}
spec:
  containers:
  - name: main
    image: busybox:1.35
    command: ["sh", "-c", "cat /etc/resolv.conf; sleep 3600"]
`)
	p := n.waitPod("dns", 2*time.Minute, "Running", isRunningReady)
	var conf string
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(conf, "nameserver") && time.Now().Before(deadline) {
		conf = readContainerLog(t, n, p, "main")
		time.Sleep(200 * time.Millisecond)
	}
	for _, want := range []string{"nameserver 10.96.0.53", "search default.svc.second.local svc.second.local second.local"} {
		if !strings.Contains(conf, want) {
			t.Errorf("the pod's resolv.conf lacks %q (the drop-ins' clusterDNS and clusterDomain):\n%s", want, conf)
		}
	}
	if strings.Contains(conf, "never.local") || strings.Contains(conf, "first.local") {
		t.Errorf("the pod's resolv.conf has a domain a skipped or overridden drop-in set:\n%s", conf)
	}
}

// TestConfigRefusals runs nodelet with configurations it must refuse before it starts anything:
// an unknown feature gate (in the file, in a drop-in, in --feature-gates) and a drop-in with an
// unknown field. Each exits non-zero with an error naming the gate or field and where it is.
func TestConfigRefusals(t *testing.T) {
	bin := nodeletBin(t)
	base := t.TempDir()
	file := filepath.Join(base, "config.yaml")
	writeFiles(t, base, map[string]string{
		"config.yaml":         configHeader + "failCgroupV1: false\nfeatureGates: {EventedPLEG: true}\n",
		"bad-gate.yaml":       configHeader + "failCgroupV1: false\nfeatureGates: {NoSuchGate: true}\n",
		"gate-dir/10.conf":    configHeader + "featureGates: {AlsoNoGate: false}\n",
		"field-dir/10-a.conf": configHeader + "maxPods: 20\n",
		"field-dir/20-b.conf": configHeader + "maxPodz: 30\n",
	})
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown gate in the file", []string{"--config", filepath.Join(base, "bad-gate.yaml")},
			[]string{"bad-gate.yaml", "featureGates[NoSuchGate]", "unrecognized feature gate: NoSuchGate"}},
		{"unknown gate in a drop-in", []string{"--config", file, "--config-dir", filepath.Join(base, "gate-dir")},
			[]string{"gate-dir/10.conf", "featureGates[AlsoNoGate]", "unrecognized feature gate: AlsoNoGate"}},
		{"unknown gate in the flag", []string{"--config", file, "--feature-gates", "EventedPLEG=false,FlagGate=true"},
			[]string{"--feature-gates", "unrecognized feature gate: FlagGate"}},
		{"unknown field in a drop-in", []string{"--config", file, "--config-dir", filepath.Join(base, "field-dir")},
			[]string{"field-dir/20-b.conf", `unknown field "maxPodz"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			args := append(tt.args, "--root-dir", root, "--read-only-port", "0", "--hostname-override", "refused",
				"--container-runtime-endpoint", testenv(t).endpoint)
			out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Fatalf("nodelet %v: %v, want a non-zero exit\n%s", tt.args, err, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("the refusal does not say %q:\n%s", w, out)
				}
			}
			if _, err := os.Stat(root); !os.IsNotExist(err) {
				t.Errorf("the refused start created its root directory %s (%v)", root, err)
			}
		})
	}
}

// TestManifestEditedWithSedInPlace edits a running static pod's manifest with `sed -i` again
// and again: sed writes a temporary sedXXXXXX file beside it and renames it over the manifest.
// nodelet never reads the temporary file (no manifest error, no duplicate pod), and the edit
// itself reaches the pod.
func TestManifestEditedWithSedInPlace(t *testing.T) {
	n := startNode(t)
	n.write("web.yaml", `apiVersion: v1
kind: Pod
metadata: {name: web, annotations: {edit: "0"}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: busybox:1.35
    command: ["sleep", "3600"]
`)
	n.waitPod("web", 2*time.Minute, "Running", isRunningReady)
	manifest := filepath.Join(n.manifests, "web.yaml")
	for i := 1; i <= 30; i++ {
		// The annotation's value alone changes: the pod stays, its annotation follows.
		out, err := exec.Command("sed", "-i", "s/edit: \"[0-9]*\"/edit: \""+strconv.Itoa(i)+"\"/", manifest).CombinedOutput()
		if err != nil {
			t.Fatalf("sed -i: %v\n%s", err, out)
		}
	}
	n.waitPod("web", time.Minute, `annotation edit "30"`, func(p *v1.Pod) bool {
		return p.Annotations["edit"] == "30" && isRunningReady(p)
	})
	for _, bad := range []string{"Pod manifest rejected", "Duplicate value"} {
		if lines := n.logs.matching(bad); len(lines) > 0 {
			t.Errorf("nodelet logged %q while sed edited a manifest:\n%s", bad, strings.Join(lines, "\n"))
		}
	}
	if len(n.logs.matching("Not reading a file of the manifest directory", "sed -i's temporary file")) == 0 {
		t.Errorf("no sed temporary file was seen (and skipped) in 30 edits:\n%s", n.logs.dump())
	}
	// The earlier versions of the pod end; one pod is left.
	var pods []v1.Pod
	deadline := time.Now().Add(time.Minute)
	for {
		var err error
		if pods, err = n.pods(); err != nil {
			t.Fatal(err)
		}
		if len(pods) == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(pods) != 1 {
		t.Errorf("%d pods a minute after the edits, want 1", len(pods))
	}
}
