package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func isFailed(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodFailed }

// sysctlPod writes a pod that sets the sysctl and prints it from /proc/sys.
func sysctlPod(n *node, name, sysctl, value string) {
	n.write(name+".yaml", `apiVersion: v1
kind: Pod
metadata: {name: `+name+`}
spec:
  restartPolicy: Never
  securityContext: {sysctls: [{name: `+sysctl+`, value: "`+value+`"}]}
  containers:
  - name: c
    image: busybox:1.35
    command: ["cat", "/proc/sys/`+strings.ReplaceAll(sysctl, ".", "/")+`"]
`)
}

// Issue 14, acceptance 2: a safe sysctl is set in the pod; an unsafe one is refused at
// admission with upstream's SysctlForbidden unless allowedUnsafeSysctls allows it; an AppArmor
// profile on a host without AppArmor is refused with upstream's reason; the pods already
// running are undisturbed.
func TestSysctlsAndAppArmorAdmission(t *testing.T) {
	n := startNode(t, "--allowed-unsafe-sysctls=kernel.msg*")
	n.write("bystander.yaml", `apiVersion: v1
kind: Pod
metadata: {name: bystander}
spec:
  containers:
  - {name: c, image: busybox:1.35, command: ["sleep", "3600"]}
`)
	n.waitPod("bystander", 60*time.Second, "Running", isRunningReady)

	sysctlPod(n, "safe", "kernel.shm_rmid_forced", "1")
	p := n.waitPod("safe", 60*time.Second, "Succeeded", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodSucceeded })
	if out := readContainerLog(t, n, p, "c"); strings.TrimSpace(out) != "1" {
		t.Errorf("safe sysctl kernel.shm_rmid_forced=1 reads %q in the pod", out)
	}
	sysctlPod(n, "allowed", "kernel.msgmax", "12345")
	p = n.waitPod("allowed", 60*time.Second, "Succeeded", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodSucceeded })
	if out := readContainerLog(t, n, p, "c"); strings.TrimSpace(out) != "12345" {
		t.Errorf("allowlisted unsafe sysctl kernel.msgmax=12345 reads %q in the pod", out)
	}
	sysctlPod(n, "forbidden", "kernel.sem", "250 32000 32 128")
	p = n.waitPod("forbidden", 60*time.Second, "Failed", isFailed)
	if p.Status.Reason != "SysctlForbidden" || p.Status.Message != `Pod was rejected: forbidden sysctl: "kernel.sem" not allowlisted` {
		t.Errorf("unsafe sysctl: reason %q message %q", p.Status.Reason, p.Status.Message)
	}

	n.write("apparmor.yaml", `apiVersion: v1
kind: Pod
metadata: {name: apparmor}
spec:
  containers:
  - name: c
    image: busybox:1.35
    command: ["sleep", "3600"]
    securityContext: {appArmorProfile: {type: RuntimeDefault}}
`)
	if b, err := os.ReadFile("/sys/module/apparmor/parameters/enabled"); err == nil && strings.HasPrefix(string(b), "Y") {
		n.waitPod("apparmor", 60*time.Second, "Running with AppArmor present", isRunningReady)
	} else {
		p = n.waitPod("apparmor", 60*time.Second, "Failed", isFailed)
		if p.Status.Reason != "AppArmor" || p.Status.Message != "Pod was rejected: Cannot enforce AppArmor: AppArmor is not enabled on the host" {
			t.Errorf("AppArmor profile without AppArmor: reason %q message %q", p.Status.Reason, p.Status.Message)
		}
	}
	// supplementalGroupsPolicy: Strict runs where the runtime reports the feature (containerd
	// 2.4.2 does): the container's groups are the pod's.
	n.write("strict.yaml", `apiVersion: v1
kind: Pod
metadata: {name: strict}
spec:
  restartPolicy: Never
  securityContext: {supplementalGroups: [4321], supplementalGroupsPolicy: Strict}
  containers:
  - {name: c, image: busybox:1.35, command: ["grep", "^Groups:", "/proc/self/status"]}
`)
	p = n.waitPod("strict", 60*time.Second, "Succeeded", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodSucceeded })
	if out := readContainerLog(t, n, p, "c"); !strings.Contains(out, "4321") {
		t.Errorf("supplementalGroupsPolicy Strict: %q, want the pod's group 4321", out)
	}

	// hostUsers: false. containerd 2.4.2 with Debian's runc 1.1.5 reports no user-namespace
	// support for its handlers (CRI RuntimeStatus): the pod is refused, never run with host users.
	n.write("userns.yaml", `apiVersion: v1
kind: Pod
metadata: {name: userns}
spec:
  hostUsers: false
  containers:
  - {name: c, image: busybox:1.35, command: ["cat", "/proc/self/uid_map"]}
`)
	p = n.waitPod("userns", 60*time.Second, "refused or run", func(p *v1.Pod) bool {
		return p != nil && (p.Status.Phase == v1.PodFailed || p.Status.Phase == v1.PodSucceeded)
	})
	if p.Status.Phase == v1.PodSucceeded { // a runtime with user namespaces: never the identity mapping
		if out := readContainerLog(t, n, p, "c"); strings.Fields(out)[0] == "0" && strings.Fields(out)[1] == "0" {
			t.Errorf("hostUsers: false ran with the host's users: uid_map %q", out)
		}
	} else if p.Status.Reason != "UnsupportedPodSpec" || !strings.Contains(p.Status.Message, "spec.hostUsers: ") {
		t.Errorf("hostUsers: false refused with reason %q message %q", p.Status.Reason, p.Status.Message)
	} else {
		t.Logf("hostUsers: false refused: %s", p.Status.Message)
	}
	// A RuntimeClass standalone: no API server holds it, so the pod is refused rather than run
	// with the default handler (TestClusterRuntimeClass shows it honoured in cluster mode).
	n.write("runtimeclass.yaml", `apiVersion: v1
kind: Pod
metadata: {name: runtimeclass}
spec:
  runtimeClassName: gvisor
  containers:
  - {name: c, image: busybox:1.35, command: ["true"]}
`)
	p = n.waitPod("runtimeclass", 60*time.Second, "Failed", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodFailed })
	if p.Status.Reason != "UnsupportedPodSpec" || !strings.Contains(p.Status.Message, `spec.runtimeClassName: RuntimeClass "gvisor" is an API object`) {
		t.Errorf("runtimeClassName standalone: reason %q message %q", p.Status.Reason, p.Status.Message)
	}
	if !n.hasEvent("forbidden", "SysctlForbidden", "kernel.sem") {
		t.Errorf("no SysctlForbidden event: %v", n.events("forbidden"))
	}
	if b := n.pod("bystander"); b == nil || !isRunningReady(b) || containerStatus(b, "c").RestartCount != 0 {
		t.Errorf("the running pod was disturbed: %+v", b)
	}
}
