package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

const testServer = "docker.io/nodelet/testserver:1.0"

// serverPod is a testserver pod with the given container-level YAML added (probes, hooks).
func serverPod(name, extraArgs, containerExtra string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  terminationGracePeriodSeconds: 5
  containers:
  - name: server
    image: %s
    args: [%s]
    ports: [{name: http, containerPort: 8080}, {name: grpc, containerPort: 9090}, {name: tcp, containerPort: 7070}]
%s`, name, testServer, extraArgs, containerExtra)
}

// tell asks the pod's testserver to change its state (/fail, /recover, /unready, /ready-on). A
// container is Running once its process started, which may be before the server listens: a
// refused connection is tried again for 10 s.
func tell(t *testing.T, p *v1.Pod, path string) {
	t.Helper()
	url := fmt.Sprintf("http://%s:8080%s", p.Status.PodIP, path)
	deadline := time.Now().Add(10 * time.Second)
	resp, err := http.Get(url)
	for err != nil && errors.Is(err, syscall.ECONNREFUSED) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		resp, err = http.Get(url)
	}
	if err != nil {
		t.Fatalf("GET %s on %s: %v", path, p.Name, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

func ready(p *v1.Pod) bool { return p != nil && hasCondition(p, v1.PodReady, v1.ConditionTrue) }
func notReady(p *v1.Pod) bool {
	return p != nil && p.Status.Phase == v1.PodRunning && hasCondition(p, v1.PodReady, v1.ConditionFalse)
}

// events reads the node's events for a pod.
func (n *node) events(pod string) []v1.Event {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/events?namespace=default&pod=%s", n.port, n.podName(pod)))
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var list v1.EventList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil
	}
	return list.Items
}

func (n *node) hasEvent(pod, reason, contains string) bool {
	for _, e := range n.events(pod) {
		if e.Reason == reason && strings.Contains(e.Message, contains) {
			return true
		}
	}
	return false
}

// TestProbeKinds: each probe kind succeeds on a healthy container and fails on an unhealthy one
// (readiness probes, so the pod's Ready condition shows the result).
func TestProbeKinds(t *testing.T) {
	n := startNode(t)
	kinds := map[string]string{
		"exec": `exec: {command: ["sh", "-c", "wget -q -O /dev/null http://127.0.0.1:8080/healthz"]}`,
		"http": `httpGet: {path: /healthz, port: http}`,
		"tcp":  `tcpSocket: {port: tcp}`,
		"grpc": `grpc: {port: 9090}`,
	}
	for kind, handler := range kinds {
		n.write(kind+".yaml", serverPod("probe-"+kind, "", "    readinessProbe: {"+handler+", periodSeconds: 1, failureThreshold: 1}\n"))
	}
	pods := map[string]*v1.Pod{}
	for kind := range kinds {
		pods[kind] = n.waitPod("probe-"+kind, 60*time.Second, "Ready through its "+kind+" probe", ready)
	}
	for kind := range kinds {
		tell(t, pods[kind], "/fail")
	}
	for kind := range kinds {
		p := n.waitPod("probe-"+kind, 30*time.Second, "not Ready once unhealthy ("+kind+")", notReady)
		if cs := containerStatus(p, "server"); cs.Ready || cs.RestartCount != 0 {
			t.Errorf("%s: ready %v restarts %d", kind, cs.Ready, cs.RestartCount)
		}
	}
}

// TestLivenessRestarts: a liveness probe that starts failing restarts the container after
// failureThreshold × periodSeconds (±1 period), with Unhealthy and Killing events.
func TestLivenessRestarts(t *testing.T) {
	n := startNode(t)
	n.write("live.yaml", serverPod("live", "", "    livenessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 2, failureThreshold: 3}\n"))
	p := n.waitPod("live", 60*time.Second, "Running", isRunningReady)
	first := containerStatus(p, "server").ContainerID
	// finishedAt comes through the API's JSON, cut to whole seconds: cut this end the same way,
	// or a kill at 4.3 s reads as 3.6 s.
	tell(t, p, "/fail")
	failed := time.Now().Truncate(time.Second)
	p = n.waitPod("live", 40*time.Second, "restarted", func(p *v1.Pod) bool {
		cs := containerStatus(p, "server")
		return cs != nil && cs.RestartCount == 1
	})
	restart := containerStatus(p, "server").LastTerminationState.Terminated
	if restart == nil {
		t.Fatalf("no lastState after the restart: %+v", containerStatus(p, "server"))
	}
	took := restart.FinishedAt.Sub(failed)
	t.Logf("killed %v after the server started failing (period 2 s × threshold 3)", took)
	if took < 4*time.Second || took > 9*time.Second {
		t.Errorf("killed after %v, want 6 s ± 2 s", took)
	}
	if containerStatus(p, "server").ContainerID == first {
		t.Error("same container ID after the restart")
	}
	if !n.hasEvent("live", "Unhealthy", "Liveness probe failed") {
		t.Errorf("no Unhealthy event: %+v", n.events("live"))
	}
	if !n.hasEvent("live", "Killing", "failed liveness probe, will be restarted") {
		t.Errorf("no Killing event: %+v", n.events("live"))
	}
}

// TestReadinessFlips: a readiness probe flips the Ready condition both ways, restarting nothing.
func TestReadinessFlips(t *testing.T) {
	n := startNode(t)
	n.write("rd.yaml", serverPod("rd", "", "    readinessProbe: {httpGet: {path: /ready, port: http}, periodSeconds: 1, failureThreshold: 1}\n"))
	p := n.waitPod("rd", 60*time.Second, "Ready", ready)
	id := containerStatus(p, "server").ContainerID
	tell(t, p, "/unready")
	n.waitPod("rd", 20*time.Second, "not Ready", notReady)
	tell(t, p, "/ready-on")
	p = n.waitPod("rd", 20*time.Second, "Ready again", ready)
	if cs := containerStatus(p, "server"); cs.ContainerID != id || cs.RestartCount != 0 {
		t.Errorf("readiness restarted the container: %s restarts %d", cs.ContainerID, cs.RestartCount)
	}
}

// TestStartupProbeGatesLiveness: a slow container (healthy only 15 s after start) lives past
// what its liveness probe alone allows (2 × 2 s), because the startup probe holds liveness off;
// then liveness takes over and restarts it when it fails.
func TestStartupProbeGatesLiveness(t *testing.T) {
	n := startNode(t)
	n.write("slow.yaml", serverPod("slow", `"--start-delay", "15s"`, `    startupProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 2, failureThreshold: 15}
    livenessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 2, failureThreshold: 2}
`))
	p := n.waitPod("slow", 60*time.Second, "Ready after its slow start", ready)
	cs := containerStatus(p, "server")
	if cs.RestartCount != 0 || cs.Started == nil || !*cs.Started {
		t.Fatalf("the startup probe did not protect the slow start: %+v", cs)
	}
	if up := time.Since(cs.State.Running.StartedAt.Time); up < 14*time.Second {
		t.Errorf("ready after %v, before the server's 15 s start delay", up)
	}
	tell(t, p, "/fail")
	n.waitPod("slow", 40*time.Second, "restarted by liveness", func(p *v1.Pod) bool {
		cs := containerStatus(p, "server")
		return cs != nil && cs.RestartCount >= 1
	})
}
