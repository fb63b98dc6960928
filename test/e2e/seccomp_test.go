package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// seccompOutput runs a pod whose container prints its /proc/self/status Seccomp line (and what
// extra prints) and exits, and returns what it printed.
func seccompOutput(t *testing.T, n *node, name, podSC, ctrSC, extra string) string {
	t.Helper()
	n.write(name+".yaml", `apiVersion: v1
kind: Pod
metadata: {name: `+name+`}
spec:
  restartPolicy: Never
  securityContext: {`+podSC+`}
  containers:
  - name: c
    image: busybox:1.35
    securityContext: {`+ctrSC+`}
    command: ["sh", "-c", "grep '^Seccomp:' /proc/self/status; `+extra+`"]
`)
	p := n.waitPod(name, 60*time.Second, "Succeeded", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodSucceeded })
	return readContainerLog(t, n, p, "c")
}

// Issue 14, acceptance 1: seccomp profiles reach the runtime. /proc/self/status shows
// Seccomp: 2 (filter) with RuntimeDefault, from the pod or from seccompDefault, and 0 with
// Unconfined; a Localhost profile under <root-dir>/seccomp blocks what it denies; a missing
// Localhost profile fails the container with the runtime's error, never a silent fallback.
func TestSeccompProfiles(t *testing.T) {
	n := startNode(t)
	n.write("bystander.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: bystander}\nspec: {containers: [{name: c, image: busybox:1.35, command: [sleep, '3600']}]}\n")
	if out := seccompOutput(t, n, "scmp-pod", "seccompProfile: {type: RuntimeDefault}", "", ""); !strings.Contains(out, "Seccomp:\t2") {
		t.Errorf("pod-level RuntimeDefault: %q, want Seccomp: 2", out)
	}
	if out := seccompOutput(t, n, "scmp-unconfined", "seccompProfile: {type: RuntimeDefault}", "seccompProfile: {type: Unconfined}", ""); !strings.Contains(out, "Seccomp:\t0") {
		t.Errorf("container-level Unconfined over the pod's RuntimeDefault: %q, want Seccomp: 0", out)
	}
	if out := seccompOutput(t, n, "scmp-none", "", "", ""); !strings.Contains(out, "Seccomp:\t0") {
		t.Errorf("no profile, seccompDefault off: %q, want Seccomp: 0", out)
	}

	// A Localhost profile that denies mkdir.
	dir := filepath.Join(n.rootDir, "seccomp", "profiles")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	profile := `{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"}]}`
	if err := os.WriteFile(filepath.Join(dir, "no-mkdir.json"), []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	out := seccompOutput(t, n, "scmp-local", "", "seccompProfile: {type: Localhost, localhostProfile: profiles/no-mkdir.json}",
		"mkdir /tmp/made && echo mkdir-allowed || echo mkdir-blocked")
	if !strings.Contains(out, "Seccomp:\t2") || !strings.Contains(out, "mkdir-blocked") {
		t.Errorf("Localhost profile denying mkdir: %q, want Seccomp: 2 and mkdir-blocked", out)
	}

	// A Localhost profile that does not exist: the container cannot be created.
	n.write("scmp-missing.yaml", `apiVersion: v1
kind: Pod
metadata: {name: scmp-missing}
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: busybox:1.35
    securityContext: {seccompProfile: {type: Localhost, localhostProfile: profiles/absent.json}}
    command: ["true"]
`)
	p := n.waitPod("scmp-missing", 60*time.Second, "CreateContainerError", func(p *v1.Pod) bool {
		cs := containerStatus(p, "c")
		return cs != nil && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CreateContainerError"
	})
	if msg := containerStatus(p, "c").State.Waiting.Message; !strings.Contains(msg, "absent.json") {
		t.Errorf("the missing profile's error %q does not name it", msg)
	}

	// A malformed Localhost profile: the runtime's error, the other pods undisturbed.
	if err := os.WriteFile(filepath.Join(dir, "broken.json"), []byte(`{"defaultAction": `), 0o644); err != nil {
		t.Fatal(err)
	}
	n.write("scmp-broken.yaml", strings.ReplaceAll(strings.ReplaceAll(readFile(t, filepath.Join(n.manifests, "scmp-missing.yaml")),
		"scmp-missing", "scmp-broken"), "absent.json", "broken.json"))
	p = n.waitPod("scmp-broken", 60*time.Second, "CreateContainerError", func(p *v1.Pod) bool {
		cs := containerStatus(p, "c")
		return cs != nil && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CreateContainerError"
	})
	if msg := containerStatus(p, "c").State.Waiting.Message; !strings.Contains(msg, "seccomp") {
		t.Errorf("the malformed profile's error %q does not say seccomp", msg)
	}
	if b := n.pod("bystander"); b == nil || !isRunningReady(b) || containerStatus(b, "c").RestartCount != 0 {
		t.Errorf("the running pod was disturbed: %+v", b)
	}
}
