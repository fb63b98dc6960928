package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// authRegistry is the password-protected test registry (testenv env): its address, user and
// password.
func authRegistry(t *testing.T) (reg, user, pass string) {
	t.Helper()
	out, err := runTestenv("env")
	if err != nil {
		t.Fatalf("testenv env: %v\n%s", err, out)
	}
	vars := parseExports(out)
	reg, user, pass = vars["AUTH_REGISTRY"], vars["AUTH_REGISTRY_USER"], vars["AUTH_REGISTRY_PASSWORD"]
	if reg == "" || user == "" || pass == "" {
		t.Fatalf("testenv env does not describe the auth registry:\n%s", out)
	}
	return reg, user, pass
}

// Acceptance 6: an image pulled with imagePullSecrets from a registry that requires auth; the
// same pod without the secret cannot pull.
func TestClusterImagePullSecrets(t *testing.T) {
	cn := startClusterNode(t)
	cn.waitNodeReady(60 * time.Second)
	reg, user, pass := authRegistry(t)
	image := reg + "/private/busybox:1.35"
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	cfg, _ := json.Marshal(map[string]any{"auths": map[string]any{reg: map[string]string{"auth": auth}}})
	name := "private-" + cn.name
	cn.cp.apply(t, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: %[1]s, namespace: default}
type: kubernetes.io/dockerconfigjson
data: {.dockerconfigjson: %[2]s}
---
apiVersion: v1
kind: Pod
metadata: {name: %[1]s, namespace: default}
spec:
  nodeName: %[3]s
  imagePullSecrets: [{name: %[1]s}]
  containers:
  - {name: main, image: %[4]s, imagePullPolicy: Always, command: ["sleep", "3600"]}
---
apiVersion: v1
kind: Pod
metadata: {name: anon-%[1]s, namespace: default}
spec:
  nodeName: %[3]s
  containers:
  - {name: main, image: %[4]s, imagePullPolicy: Always, command: ["sleep", "3600"]}
`, name, base64.StdEncoding.EncodeToString(cfg), cn.name, image))
	cn.waitAPIPod("default", name, 90*time.Second, "Running with the pulled private image", isRunningReady)
	p := cn.waitAPIPod("default", "anon-"+name, 60*time.Second, "ErrImagePull or ImagePullBackOff without credentials", func(p *v1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.State.Waiting != nil && (cs.State.Waiting.Reason == "ErrImagePull" || cs.State.Waiting.Reason == "ImagePullBackOff")
	})
	if msg := containerStatus(p, "main").State.Waiting.Message; msg == "" || !strings.Contains(msg, image) {
		t.Errorf("anonymous pull failure message %q does not name the image", msg)
	}
}

// Acceptance 7: kube-apiserver stops for 60 s. Pods keep running; when it returns, the node,
// its lease and pod statuses catch up, and nothing was restarted.
func TestClusterSurvivesAPIServerOutage(t *testing.T) {
	cn := startClusterNode(t)
	cn.waitNodeReady(60 * time.Second)
	steady, ends := "steady-"+cn.name, "ends-"+cn.name
	cn.cp.apply(t, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %[1]s, namespace: default}
spec:
  nodeName: %[3]s
  containers:
  - {name: main, image: docker.io/library/busybox:1.35, command: ["sleep", "3600"]}
---
apiVersion: v1
kind: Pod
metadata: {name: %[2]s, namespace: default}
spec:
  nodeName: %[3]s
  restartPolicy: Never
  containers:
  - {name: main, image: docker.io/library/busybox:1.35, command: ["sh", "-c", "sleep 25; exit 0"]}
`, steady, ends, cn.name))
	cn.write("static.yaml", `apiVersion: v1
kind: Pod
metadata: {name: static, namespace: default}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - {name: main, image: docker.io/library/busybox:1.35, command: ["sleep", "3600"]}
`)
	before := cn.waitAPIPod("default", steady, 90*time.Second, "Running", isRunningReady)
	cn.waitAPIPod("default", ends, 60*time.Second, "Running", isRunningReady)
	mirror := cn.waitAPIPod("default", cn.podName("static"), 90*time.Second, "a Running mirror pod", isRunningReady)

	if out, err := runCluster("stop-apiserver"); err != nil {
		t.Fatalf("stop-apiserver: %v\n%s", err, out)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			if out, err := runCluster("start-apiserver"); err != nil {
				t.Errorf("start-apiserver: %v\n%s", err, out)
			}
		}
	})
	stopped := time.Now()
	for time.Since(stopped) < 60*time.Second {
		time.Sleep(5 * time.Second)
		if exited := cn.cmd.ProcessState; exited != nil {
			t.Fatalf("nodelet exited during the outage: %v", exited)
		}
	}
	// During the outage nodelet kept the pods as they were.
	local := map[string]*v1.Pod{}
	pods, err := cn.pods()
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods {
		local[pods[i].Name] = &pods[i]
	}
	if p := local[steady]; p == nil || !isRunningReady(p) {
		t.Fatalf("steady pod not running during the outage: %+v", p)
	}
	if p := local[ends]; p == nil || p.Status.Phase != v1.PodSucceeded {
		t.Errorf("the pod that ended during the outage: %+v, want Succeeded locally", p)
	}
	if out, err := runCluster("start-apiserver"); err != nil {
		t.Fatalf("start-apiserver: %v\n%s", err, out)
	}
	restarted = true
	back := time.Now()

	// The lease catches up (renewed after the API server's return) and the node is Ready. As
	// upstream, an unchanged node status is re-posted only every nodeStatusReportFrequency, so
	// the lease is the heartbeat to watch.
	deadline := time.Now().Add(60 * time.Second)
	var leaseOK, readyOK bool
	for time.Now().Before(deadline) && !(leaseOK && readyOK) {
		if l, err := cn.cp.client.CoordinationV1().Leases("kube-node-lease").Get(context.Background(), cn.name, metav1.GetOptions{}); err == nil {
			leaseOK = l.Spec.RenewTime != nil && l.Spec.RenewTime.Time.After(back.Add(-time.Second))
		}
		if n, err := cn.cp.client.CoreV1().Nodes().Get(context.Background(), cn.name, metav1.GetOptions{}); err == nil {
			r := nodeCondition(n, v1.NodeReady)
			readyOK = r != nil && r.Status == v1.ConditionTrue
		}
		time.Sleep(time.Second)
	}
	if !leaseOK || !readyOK {
		t.Errorf("60 s after the API server's return: lease renewed %v, node Ready %v", leaseOK, readyOK)
	}
	t.Logf("lease renewed and node Ready %v after the API server returned", time.Since(back).Round(100*time.Millisecond))
	// The pod that ended during the outage is reported Succeeded; nothing restarted.
	cn.waitAPIPod("default", ends, 60*time.Second, "Succeeded after the outage", func(p *v1.Pod) bool {
		return p != nil && p.Status.Phase == v1.PodSucceeded
	})
	after := cn.waitAPIPod("default", steady, 30*time.Second, "Running", isRunningReady)
	if a, b := containerStatus(after, "main"), containerStatus(before, "main"); a.ContainerID != b.ContainerID || a.RestartCount != 0 {
		t.Errorf("steady pod's container changed across the outage: before %s, after %s (restarts %d)", b.ContainerID, a.ContainerID, a.RestartCount)
	}
	m := cn.waitAPIPod("default", cn.podName("static"), 30*time.Second, "Running", isRunningReady)
	if a, b := containerStatus(m, "main"), containerStatus(mirror, "main"); a.ContainerID != b.ContainerID || a.RestartCount != 0 {
		t.Errorf("static pod's container changed across the outage: before %s, after %s", b.ContainerID, a.ContainerID)
	}
}

// Issue 18, acceptance 4: with the API server stopped, nodelet restarts (SIGKILL, then a new
// process). The API pods keep running and are managed as last known from the checkpoint (a
// crash-looping container is still restarted, with its back-off); when the API server returns,
// its listing reconciles them: a pod deleted through the API is then stopped and removed.
func TestClusterRestartWhileAPIServerDown(t *testing.T) {
	cn := startClusterNode(t)
	cn.waitNodeReady(60 * time.Second)
	steady := cn.applyPod(t, "steady", `  containers:
  - {name: main, image: docker.io/library/busybox:1.35, command: ["sleep", "3600"]}
`)
	crasher := cn.applyPod(t, "crasher", `  containers:
  - {name: main, image: docker.io/library/busybox:1.35, command: ["sh", "-c", "sleep 2; exit 1"]}
`)
	before := cn.waitAPIPod("default", steady, 90*time.Second, "Running", isRunningReady)
	crashed := cn.waitAPIPod("default", crasher, 90*time.Second, "restarted once", func(p *v1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.RestartCount >= 1
	})
	restartsBefore := containerStatus(crashed, "main").RestartCount

	if out, err := runCluster("stop-apiserver"); err != nil {
		t.Fatalf("stop-apiserver: %v\n%s", err, out)
	}
	apiUp := false
	t.Cleanup(func() {
		if !apiUp {
			if out, err := runCluster("start-apiserver"); err != nil {
				t.Errorf("start-apiserver: %v\n%s", err, out)
			}
		}
	})
	cn.kill9()
	cn.start()
	cn.logs.waitCount(t, 30*time.Second, 1, "Restored the API server's pods for this node from the checkpoint", "pods=2")

	// Managed while the API server is down: listed by nodelet, the steady pod's container
	// untouched, the crash-looping one restarted again.
	deadline := time.Now().Add(90 * time.Second)
	var local map[string]*v1.Pod
	for {
		pods, err := cn.pods()
		local = map[string]*v1.Pod{}
		for i := range pods {
			local[pods[i].Name] = &pods[i]
		}
		if err == nil && local[crasher] != nil && containerStatus(local[crasher], "main") != nil &&
			containerStatus(local[crasher], "main").RestartCount > restartsBefore && local[steady] != nil && isRunningReady(local[steady]) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("90 s after a restart with the API server down: steady %+v, crasher %+v (restarts before %d)", local[steady], local[crasher], restartsBefore)
		}
		time.Sleep(time.Second)
	}
	if a, b := containerStatus(local[steady], "main"), containerStatus(before, "main"); a.ContainerID != b.ContainerID {
		t.Errorf("steady pod's container changed across the restart: %s, was %s", a.ContainerID, b.ContainerID)
	}

	if out, err := runCluster("start-apiserver"); err != nil {
		t.Fatalf("start-apiserver: %v\n%s", err, out)
	}
	apiUp = true
	cn.waitNodeReady(60 * time.Second)
	after := cn.waitAPIPod("default", steady, 60*time.Second, "Running", isRunningReady)
	if a, b := containerStatus(after, "main"), containerStatus(before, "main"); a.ContainerID != b.ContainerID || a.RestartCount != 0 {
		t.Errorf("steady pod after the API server returned: container %s (restarts %d), was %s", a.ContainerID, a.RestartCount, b.ContainerID)
	}
	// Reconciled: a deletion through the API reaches the restored pod.
	if err := cn.cp.client.CoreV1().Pods("default").Delete(context.Background(), steady, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cn.waitAPIPod("default", steady, 60*time.Second, "deleted by nodelet", func(p *v1.Pod) bool { return p == nil })
}
