package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Issue 6, acceptance 1 (in part): `kubectl logs` through the API server, which calls
// nodelet's kubelet API with its kubelet client certificate: --tail, --timestamps, --since,
// --previous and -f return what the container wrote.
func TestClusterKubectlLogs(t *testing.T) {
	cn := startClusterNode(t)
	cn.waitNodeReady(60 * time.Second)
	name := cn.applyPod(t, "logs", `  containers:
  - name: main
    image: docker.io/library/busybox:1.35
    command: ["sh", "-c", "echo one; echo two; echo three; if [ -e /state/again ]; then sleep 3600; fi; touch /state/again; exit 1"]
    volumeMounts: [{name: state, mountPath: /state}]
  volumes: [{name: state, emptyDir: {}}]
`)
	// The first instance prints three lines and exits; the second prints them and stays.
	cn.waitAPIPod("default", name, 90*time.Second, "running its second instance", func(p *v1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.RestartCount >= 1 && cs.State.Running != nil
	})
	var out string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if out, _ = cn.cp.kubectlErr("logs", name); out == "one\ntwo\nthree\n" {
			break
		}
		time.Sleep(time.Second)
	}
	if out != "one\ntwo\nthree\n" {
		t.Fatalf("kubectl logs: %q", out)
	}
	if got := cn.cp.kubectl(t, "logs", name, "--tail=1"); got != "three\n" {
		t.Errorf("--tail=1: %q", got)
	}
	if got := cn.cp.kubectl(t, "logs", name, "--previous"); got != "one\ntwo\nthree\n" {
		t.Errorf("--previous: %q", got)
	}
	lines := strings.Split(strings.TrimSpace(cn.cp.kubectl(t, "logs", name, "--timestamps")), "\n")
	if len(lines) != 3 {
		t.Fatalf("--timestamps: %q", lines)
	}
	for _, l := range lines {
		ts, _, _ := strings.Cut(l, " ")
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			t.Errorf("--timestamps line %q: %v", l, err)
		}
	}
	if got := cn.cp.kubectl(t, "logs", name, "--since=1h"); got != "one\ntwo\nthree\n" {
		t.Errorf("--since=1h: %q", got)
	}
	// -f streams until the request ends; the container keeps running, so bound it.
	if got, _ := cn.cp.kubectlErr("logs", name, "-f", "--request-timeout=3s"); !strings.HasPrefix(got, "one\ntwo\nthree\n") {
		t.Errorf("-f: %q", got)
	}
}

// Issue 6, acceptance 5: a request to the kubelet API without credentials gets 401, a token of
// a user without nodes/proxy gets 403, and the API server's kubelet client credentials get
// through (TestClusterKubectlLogs).
func TestClusterKubeletAPIAuth(t *testing.T) {
	cn := startClusterNode(t)
	cn.waitNodeReady(60 * time.Second)
	url := fmt.Sprintf("https://127.0.0.1:%d/pods", cn.kubeletPort)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the node's self-signed serving cert
	get := func(token string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, resp.Status)
		return resp.StatusCode, b.String()
	}
	if code, status := get(""); code != http.StatusUnauthorized {
		t.Errorf("without credentials: %s, want 401", status)
	}
	if code, status := get("not-a-token"); code != http.StatusUnauthorized {
		t.Errorf("with a bad token: %s, want 401", status)
	}
	// A service account has a valid token but no nodes/proxy permission.
	ctx := context.Background()
	sa := &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nobody-" + cn.name, Namespace: "default"}}
	if _, err := cn.cp.client.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cn.cp.client.CoreV1().ServiceAccounts("default").Delete(context.Background(), sa.Name, metav1.DeleteOptions{})
	})
	tr, err := cn.cp.client.CoreV1().ServiceAccounts("default").CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if code, status := get(tr.Status.Token); code != http.StatusForbidden {
		t.Errorf("a token without nodes/proxy: %s, want 403", status)
	}
}
