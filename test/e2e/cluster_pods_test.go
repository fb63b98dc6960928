package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func podCondition(p *v1.Pod, t v1.PodConditionType) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// Acceptance 2: a pod created with kubectl and placed by the real scheduler runs, its status in
// the API is upstream-shaped, and `kubectl delete pod` terminates it within its grace period.
func TestClusterScheduledPodRunsAndDeletes(t *testing.T) {
	cn := startClusterNode(t)
	cn.waitNodeReady(60 * time.Second)
	// The node lifecycle controller removes the node.kubernetes.io/not-ready taint a few
	// seconds after Ready; a pod created before that waits in the scheduler's back-off.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		n, err := cn.cp.client.CoreV1().Nodes().Get(context.Background(), cn.name, metav1.GetOptions{})
		if err == nil && len(n.Spec.Taints) == 0 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	name := "sched-" + cn.name
	// sh as PID 1 ignores SIGTERM, so the container stops only when the grace period ends.
	cn.cp.apply(t, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default, labels: {app: sched}}
spec:
  nodeSelector: {kubernetes.io/hostname: %s}
  terminationGracePeriodSeconds: 4
  containers:
  - name: main
    image: docker.io/library/busybox:1.35
    command: ["sh", "-c", "sleep 3600"]
    resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {cpu: 10m, memory: 16Mi}}
`, name, cn.name))
	p := cn.waitAPIPod("default", name, 90*time.Second, "Running and Ready", isRunningReady)

	if p.Spec.NodeName != cn.name {
		t.Errorf("scheduled to %q, want %q", p.Spec.NodeName, cn.name)
	}
	for _, ct := range []v1.PodConditionType{v1.PodReadyToStartContainers, v1.PodInitialized, v1.ContainersReady, v1.PodReady, v1.PodScheduled} {
		if c := podCondition(p, ct); c == nil || c.Status != v1.ConditionTrue {
			t.Errorf("condition %s = %+v, want True (PodScheduled is the scheduler's and must be kept)", ct, c)
		}
	}
	if p.Status.HostIP != "127.0.0.1" || len(p.Status.HostIPs) == 0 || !strings.HasPrefix(p.Status.PodIP, "10.88.") || p.Status.StartTime == nil {
		t.Errorf("hostIP %q hostIPs %v podIP %q startTime %v", p.Status.HostIP, p.Status.HostIPs, p.Status.PodIP, p.Status.StartTime)
	}
	if p.Status.QOSClass != v1.PodQOSGuaranteed {
		t.Errorf("qosClass %q, want Guaranteed", p.Status.QOSClass)
	}
	cs := containerStatus(p, "main")
	if cs == nil || cs.State.Running == nil || !cs.Ready || cs.Started == nil || !*cs.Started ||
		!strings.HasPrefix(cs.ContainerID, "containerd://") || cs.ImageID == "" || cs.RestartCount != 0 {
		t.Errorf("container status %+v", cs)
	}
	if got := cn.cp.kubectl(t, "get", "pod", name, "-o", "jsonpath={.status.phase}"); got != "Running" {
		t.Errorf("kubectl get pod: phase %q", got)
	}
	// The node's events reach the API server, next to the scheduler's.
	evStart := time.Now()
	deadline = time.Now().Add(30 * time.Second)
	var reasons map[string]string
	for time.Now().Before(deadline) {
		evs, err := cn.cp.client.CoreV1().Events("default").List(context.Background(),
			metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err == nil {
			reasons = map[string]string{}
			for _, e := range evs.Items {
				reasons[e.Reason] = e.Source.Component + "/" + e.Source.Host
			}
			if reasons["Started"] != "" && reasons["Scheduled"] != "" {
				break
			}
		}
		time.Sleep(time.Second)
	}
	t.Logf("events seen in the API after %v: %v", time.Since(evStart).Round(100*time.Millisecond), reasons)
	if reasons["Started"] != "kubelet/"+cn.name || reasons["Created"] != "kubelet/"+cn.name || reasons["Scheduled"] == "" {
		t.Errorf("events in the API by reason (source): %v; want Scheduled, and Created and Started from kubelet/%s", reasons, cn.name)
	}

	start := time.Now()
	cn.cp.kubectl(t, "delete", "pod", name, "--wait=true", "--timeout=60s")
	took := time.Since(start)
	if took < 3*time.Second || took > 25*time.Second {
		t.Errorf("kubectl delete took %v; want about the 4 s grace period (the container ignores SIGTERM)", took)
	}
	for _, s := range cn.sandboxesOf(name) {
		if s.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			t.Errorf("sandbox %s still ready after the pod left the API", s.Id)
		}
	}
}

// Acceptance 5: a pod requesting more memory than the node has is rejected with OutOfmemory.
func TestClusterAdmissionRejectsOutOfMemory(t *testing.T) {
	cn := startClusterNode(t)
	cn.waitNodeReady(60 * time.Second)
	name := "huge-" + cn.name
	cn.cp.apply(t, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default}
spec:
  nodeName: %s
  containers:
  - name: main
    image: docker.io/library/busybox:1.35
    command: ["sleep", "3600"]
    resources: {requests: {memory: 64Ti}}
`, name, cn.name))
	p := cn.waitAPIPod("default", name, 60*time.Second, "Failed", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodFailed })
	if p.Status.Reason != "OutOfmemory" || !strings.Contains(p.Status.Message, "memory") {
		t.Errorf("status reason %q message %q, want OutOfmemory naming memory", p.Status.Reason, p.Status.Message)
	}
	if sb := cn.sandboxesOf(name); len(sb) != 0 {
		t.Errorf("a rejected pod got %d sandboxes", len(sb))
	}
}

// Acceptance 3: a static pod shows up as a mirror pod; deleting the mirror pod recreates it,
// and the static pod's container keeps running.
func TestClusterMirrorPodRecreated(t *testing.T) {
	cn := startClusterNode(t)
	cn.waitNodeReady(60 * time.Second)
	cn.write("web.yaml", `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: docker.io/library/busybox:1.35
    command: ["sleep", "3600"]
`)
	name := cn.podName("web")
	start := time.Now()
	mirror := cn.waitAPIPod("default", name, 90*time.Second, "a Running mirror pod", func(p *v1.Pod) bool {
		return p != nil && p.Status.Phase == v1.PodRunning
	})
	if mirror.Annotations["kubernetes.io/config.mirror"] == "" || mirror.Spec.NodeName != cn.name {
		t.Fatalf("mirror annotations %v nodeName %q", mirror.Annotations, mirror.Spec.NodeName)
	}
	if len(mirror.OwnerReferences) != 1 || mirror.OwnerReferences[0].Kind != "Node" || mirror.OwnerReferences[0].Name != cn.name {
		t.Errorf("mirror ownerReferences %+v, want its Node", mirror.OwnerReferences)
	}
	t.Logf("mirror pod Running in the API %v after the manifest was written", time.Since(start).Round(100*time.Millisecond))
	before := containerStatus(mirror, "main")
	deleted := time.Now()
	if err := cn.cp.client.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again := cn.waitAPIPod("default", name, 60*time.Second, "a new mirror pod", func(p *v1.Pod) bool {
		return p != nil && p.UID != mirror.UID && p.DeletionTimestamp == nil && p.Status.Phase == v1.PodRunning
	})
	t.Logf("mirror pod recreated %v after it was deleted", time.Since(deleted).Round(100*time.Millisecond))
	after := containerStatus(again, "main")
	if before == nil || after == nil || after.ContainerID != before.ContainerID || after.RestartCount != 0 {
		t.Errorf("the static pod's container changed: before %+v after %+v", before, after)
	}
}
