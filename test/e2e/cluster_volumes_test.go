package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// waitLog waits until the container's log (read through nodelet's pod view) contains want.
func (cn *clusterNode) waitLog(ns, name, container, want string, timeout time.Duration) string {
	cn.t.Helper()
	deadline := time.Now().Add(timeout)
	var log string
	for time.Now().Before(deadline) {
		pods, err := cn.pods()
		if err == nil {
			for i := range pods {
				p := &pods[i]
				if p.Namespace == ns && p.Name == name && containerStatus(p, container) != nil && containerStatus(p, container).ContainerID != "" {
					log = readContainerLog(cn.t, cn.node, p, container)
				}
			}
		}
		if strings.Contains(log, want) {
			return log
		}
		time.Sleep(time.Second)
	}
	cn.t.Fatalf("pod %s/%s container %s: %q not in its log within %v; log:\n%s", ns, name, container, want, timeout, log)
	return ""
}

// Acceptance 4: configMap, secret, projected service-account token and downward API volumes
// hold the right content; a configMap update reaches the file within a minute; env from a
// secret works.
func TestClusterConfigMapSecretTokenDownwardVolumes(t *testing.T) {
	cn := startClusterNode(t)
	cn.waitNodeReady(60 * time.Second)
	name := "vols-" + cn.name
	cn.cp.apply(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: %[1]s, namespace: default}
data: {greeting: hello-1, other: x}
---
apiVersion: v1
kind: Secret
metadata: {name: %[1]s, namespace: default}
stringData: {password: s3cret}
---
apiVersion: v1
kind: Pod
metadata: {name: %[1]s, namespace: default, labels: {app: vols}}
spec:
  nodeName: %[2]s
  containers:
  - name: main
    image: docker.io/library/busybox:1.35
    env:
    - name: PASSWORD
      valueFrom: {secretKeyRef: {name: %[1]s, key: password}}
    command: ["sh", "-c"]
    args:
    - |
      echo "ENV=$PASSWORD"
      echo "SECRETFILE=$(cat /etc/sec/password)"
      echo "LABELS=$(cat /etc/podinfo/labels)"
      echo "PODNAME=$(cat /etc/podinfo/name)"
      echo "TOKENLEN=$(wc -c < /var/run/secrets/tokens/token)"
      echo "NS=$(cat /var/run/secrets/kubernetes.io/serviceaccount/namespace)"
      while true; do echo "CM=$(cat /etc/cm/greeting)"; sleep 1; done
    volumeMounts:
    - {name: cm, mountPath: /etc/cm}
    - {name: sec, mountPath: /etc/sec}
    - {name: podinfo, mountPath: /etc/podinfo}
    - {name: tok, mountPath: /var/run/secrets/tokens}
  volumes:
  - name: cm
    configMap: {name: %[1]s, items: [{key: greeting, path: greeting}]}
  - name: sec
    secret: {secretName: %[1]s, defaultMode: 0400}
  - name: podinfo
    downwardAPI:
      items:
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
      - {path: name, fieldRef: {fieldPath: metadata.name}}
  - name: tok
    projected:
      sources:
      - serviceAccountToken: {path: token, audience: nodelet-e2e, expirationSeconds: 3600}
`, name, cn.name))
	p := cn.waitAPIPod("default", name, 90*time.Second, "Running", isRunningReady)
	log := cn.waitLog("default", name, "main", "CM=hello-1", 30*time.Second)
	for _, want := range []string{"ENV=s3cret", "SECRETFILE=s3cret", `LABELS=app="vols"`, "PODNAME=" + name, "NS=default"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "TOKENLEN=0") || !strings.Contains(log, "TOKENLEN=") {
		t.Errorf("projected token empty:\n%s", log)
	}

	// The token is a real one for the pod's service account, bound to the pod, for the audience.
	tokenFile := fmt.Sprintf("%s/pods/%s/volumes/kubernetes.io~projected/tok/token", cn.rootDir, p.UID)
	claims := jwtClaims(t, readFile(t, tokenFile))
	if aud, _ := json.Marshal(claims["aud"]); !strings.Contains(string(aud), "nodelet-e2e") {
		t.Errorf("token audience %s, want nodelet-e2e", aud)
	}
	if claims["sub"] != "system:serviceaccount:default:default" {
		t.Errorf("token subject %v", claims["sub"])
	}
	if k8s, _ := json.Marshal(claims["kubernetes.io"]); !strings.Contains(string(k8s), string(p.UID)) {
		t.Errorf("token not bound to the pod %s: %s", p.UID, k8s)
	}

	// An update of the configMap reaches the file within a minute.
	start := time.Now()
	cm, err := cn.cp.client.CoreV1().ConfigMaps("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["greeting"] = "hello-2"
	if _, err := cn.cp.client.CoreV1().ConfigMaps("default").Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cn.waitLog("default", name, "main", "CM=hello-2", 60*time.Second)
	t.Logf("configMap update reached the container's file in %v", time.Since(start).Round(100*time.Millisecond))
}

// Acceptance 4: a missing secret gives CreateContainerConfigError, and the pod starts once the
// secret is created.
func TestClusterMissingSecretThenCreated(t *testing.T) {
	cn := startClusterNode(t)
	cn.waitNodeReady(60 * time.Second)
	name := "late-" + cn.name
	cn.cp.apply(t, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %[1]s, namespace: default}
spec:
  nodeName: %[2]s
  containers:
  - name: main
    image: docker.io/library/busybox:1.35
    command: ["sh", "-c", "echo TOKEN=$TOKEN; sleep 3600"]
    env:
    - name: TOKEN
      valueFrom: {secretKeyRef: {name: %[1]s, key: token}}
`, name, cn.name))
	p := cn.waitAPIPod("default", name, 60*time.Second, "CreateContainerConfigError", func(p *v1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CreateContainerConfigError"
	})
	if msg := containerStatus(p, "main").State.Waiting.Message; !strings.Contains(msg, name) {
		t.Errorf("waiting message %q does not name the secret", msg)
	}
	cn.cp.apply(t, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: %s, namespace: default}
stringData: {token: abc123}
`, name))
	cn.waitAPIPod("default", name, 90*time.Second, "Running once the secret exists", isRunningReady)
	cn.waitLog("default", name, "main", "TOKEN=abc123", 30*time.Second)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// jwtClaims decodes a JWT's payload (no verification: the API server issued it).
func jwtClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(strings.TrimSpace(token), ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(b, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}
