package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// webManifest is a busybox httpd serving a known body on a host port.
func webManifest(name string, hostPort int) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: httpd
    image: busybox:1.35
    command: ["sh", "-c", "mkdir -p /www && echo hello-from-$(POD_NAME) > /www/index.html && exec httpd -f -p 8080 -h /www"]
    env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
    ports: [{containerPort: 8080, hostPort: %d}]
`, name, hostPort)
}

// TestStaticPodRuns: a manifest dropped in the directory runs; its status shows Running and
// Ready with container IDs and the pod IP; the web server answers on its hostPort.
func TestStaticPodRuns(t *testing.T) {
	n := startNode(t)
	hostPort := freePort(t)
	n.write("web.yaml", webManifest("web", hostPort))
	p := n.waitPod("web", 60*time.Second, "Running and Ready", isRunningReady)
	cs := containerStatus(p, "httpd")
	if cs == nil || !strings.HasPrefix(cs.ContainerID, "containerd://") || cs.State.Running == nil || !cs.Ready || cs.ImageID == "" {
		t.Fatalf("container status: %+v", cs)
	}
	if !strings.HasPrefix(p.Status.PodIP, "10.88.") || len(p.Status.PodIPs) == 0 || p.Status.HostIP == "" || p.Status.StartTime == nil {
		t.Fatalf("pod IPs: podIP %q podIPs %v hostIP %q", p.Status.PodIP, p.Status.PodIPs, p.Status.HostIP)
	}
	if p.Status.QOSClass != v1.PodQOSBestEffort {
		t.Errorf("qosClass %q", p.Status.QOSClass)
	}
	for _, ct := range []v1.PodConditionType{v1.PodReadyToStartContainers, v1.PodInitialized, v1.ContainersReady, v1.PodReady} {
		if !hasCondition(p, ct, v1.ConditionTrue) {
			t.Errorf("condition %s not True: %+v", ct, p.Status.Conditions)
		}
	}
	var body string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", hostPort))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if body = string(b); strings.Contains(body, "hello-from-") {
				break
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if want := "hello-from-" + n.podName("web"); !strings.Contains(body, want) {
		t.Fatalf("hostPort %d answered %q, want %q", hostPort, body, want)
	}
	if sb := n.sandboxesOf("web"); len(sb) != 1 {
		t.Errorf("%d sandboxes, want 1", len(sb))
	}
	server := fmt.Sprintf("--server=http://127.0.0.1:%d", n.port)
	out, err := exec.Command(nodeletBin(t), "get", "pods", server).CombinedOutput()
	if err != nil {
		t.Fatalf("nodelet get pods: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[1], n.podName("web")) ||
		!strings.Contains(lines[1], "1/1") || !strings.Contains(lines[1], "Running") || strings.Contains(lines[1], "<unknown>") {
		t.Fatalf("nodelet get pods printed:\n%s", out)
	}
	t.Logf("nodelet get pods:\n%s", out)
	out, err = exec.Command(nodeletBin(t), "logs", n.podName("web"), server).CombinedOutput()
	if err != nil {
		t.Fatalf("nodelet logs: %v\n%s", err, out)
	}
}

func hasCondition(p *v1.Pod, t v1.PodConditionType, s v1.ConditionStatus) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status == s
		}
	}
	return false
}

// TestBadManifestsDoNotDisturbGoodPods: bad manifests written beside running pods are
// reported and never restart or stop the good pods.
func TestBadManifestsDoNotDisturbGoodPods(t *testing.T) {
	n := startNode(t)
	n.write("good.yaml", sleeper("good", "Always"))
	before := n.waitPod("good", 60*time.Second, "Running", isRunningReady)
	id := containerStatus(before, "main").ContainerID
	n.write("bad-yaml.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: x\n")
	n.write("bad-field.yaml", strings.Replace(sleeper("bad", "Always"), "image:", "imagee:", 1))
	n.write("dup.yaml", sleeper("good", "Never"))
	n.write("garbage.json", "\x00\x01{{{")
	n.logs.waitCount(t, 20*time.Second, 1, "Pod manifest rejected", "bad-field.yaml", `unknown field \"spec.containers[0].imagee\"`)
	n.logs.waitCount(t, 20*time.Second, 1, "Pod manifest rejected", "dup.yaml")
	time.Sleep(5 * time.Second) // let periodic re-reads pass over the bad files
	after := n.waitPod("good", 10*time.Second, "still Running", isRunningReady)
	cs := containerStatus(after, "main")
	if cs.ContainerID != id || cs.RestartCount != 0 {
		t.Fatalf("the good pod was disturbed: container %s restarts %d (was %s)", cs.ContainerID, cs.RestartCount, id)
	}
	if pods, _ := n.pods(); len(pods) != 1 {
		t.Fatalf("%d pods, want only the good one", len(pods))
	}
}

// sleeper is a pod whose main container sleeps, trapping SIGTERM so it stops at once.
func sleeper(name, restartPolicy string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  restartPolicy: %s
  terminationGracePeriodSeconds: 5
  containers:
  - name: main
    image: busybox:1.35
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`, name, restartPolicy)
}
