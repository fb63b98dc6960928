package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodelet/nodelet/internal/testharness"
)

// bootstrapGroup is kubeadm's group for node bootstrap tokens, which hack/cluster.sh binds to
// system:node-bootstrapper and to the auto-approval of node client certificates.
const bootstrapGroup = "system:bootstrappers:kubeadm:default-node-token"

// bootstrapToken creates a bootstrap token secret in kube-system, as `kubeadm token create`
// does, valid until expires and putting its user in group, and returns the token.
func bootstrapToken(t *testing.T, c *controlPlane, expires time.Time, group string) string {
	t.Helper()
	id, secret := strings.ToLower(testharness.RandomHex(3)), strings.ToLower(testharness.RandomHex(8))
	s := &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: "kube-system"},
		Type:       "bootstrap.kubernetes.io/token",
		StringData: map[string]string{
			"token-id": id, "token-secret": secret, "expiration": expires.UTC().Format(time.RFC3339),
			"usage-bootstrap-authentication": "true", "auth-extra-groups": group,
		},
	}
	ctx := context.Background()
	if _, err := c.client.CoreV1().Secrets("kube-system").Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create bootstrap token: %v", err)
	}
	t.Cleanup(func() {
		_ = c.client.CoreV1().Secrets("kube-system").Delete(context.Background(), s.Name, metav1.DeleteOptions{})
	})
	return id + "." + secret
}

// bootstrapKubeconfig writes a kubeconfig with the token, as kubeadm join's bootstrap-kubelet.conf.
func bootstrapKubeconfig(t *testing.T, c *controlPlane, token string) string {
	t.Helper()
	ca, err := os.ReadFile(c.caFile)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bootstrap-kubelet.conf")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kubernetes
  cluster: {server: %q, certificate-authority-data: %s}
users:
- name: tls-bootstrap-token-user
  user: {token: %s}
contexts:
- name: tls-bootstrap-token-user@kubernetes
  context: {cluster: kubernetes, user: tls-bootstrap-token-user}
current-context: tls-bootstrap-token-user@kubernetes
`, c.server, base64.StdEncoding.EncodeToString(ca), token)
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// csrsOf lists the CSRs whose requester is user.
func csrsOf(t *testing.T, c *controlPlane, user string) []certificatesv1.CertificateSigningRequest {
	t.Helper()
	l, err := c.client.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list CSRs: %v", err)
	}
	var out []certificatesv1.CertificateSigningRequest
	for _, r := range l.Items {
		if r.Spec.Username == user {
			out = append(out, r)
		}
	}
	return out
}

func approved(r *certificatesv1.CertificateSigningRequest) bool {
	for _, c := range r.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved {
			return true
		}
	}
	return false
}

// decideCSRs approves (or denies) each pending CSR of user and signer until ctx ends, as a
// serving-certificate approver (or an operator running kubectl certificate approve) does.
func decideCSRs(ctx context.Context, t *testing.T, c *controlPlane, user, signer string, approve bool) {
	for ctx.Err() == nil {
		l, err := c.client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
		if err == nil {
			for i := range l.Items {
				r := &l.Items[i]
				if r.Spec.Username != user || r.Spec.SignerName != signer || len(r.Status.Conditions) > 0 {
					continue
				}
				cond := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: v1.ConditionTrue,
					Reason: "E2EApprove", Message: "approved by the e2e test"}
				if !approve {
					cond.Type, cond.Reason, cond.Message = certificatesv1.CertificateDenied, "E2EDeny", "this node may not join"
				}
				r.Status.Conditions = append(r.Status.Conditions, cond)
				if _, err := c.client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, r.Name, r, metav1.UpdateOptions{}); err != nil && ctx.Err() == nil {
					t.Logf("decide CSR %s: %v", r.Name, err)
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// leafOf reads the first certificate of a PEM file (a pair file holds the certificate, then the key).
func leafOf(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s holds no PEM", path)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

// servingLeaf is the certificate the kubelet API presents at ip, verified against the cluster
// CA for that IP (what kube-apiserver --kubelet-certificate-authority checks).
func servingLeaf(c *controlPlane, ip string, port int) (*x509.Certificate, error) {
	ca, err := os.ReadFile(c.caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	conn, err := tls.Dial("tcp", net.JoinHostPort(ip, fmt.Sprint(port)), &tls.Config{RootCAs: pool, ServerName: ip})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// Issue 18, acceptance 1: a node joins from a bootstrap token alone (CSR created and
// auto-approved, certificate and kubeconfig written, Node Ready); with the controller-manager
// signing for 2 minutes, its client certificate rotates while a pod keeps running and the
// node's lease and pod statuses keep flowing; the serving certificate comes from a
// kubelet-serving CSR and kubectl logs works over it.
func TestClusterTLSBootstrapAndRotation(t *testing.T) {
	c := cluster(t)
	name := "e2e-" + strings.ToLower(testharness.RandomHex(4))
	dir := t.TempDir()
	kubeconfig, certDir := filepath.Join(dir, "kubelet.conf"), filepath.Join(dir, "pki")
	boot := bootstrapKubeconfig(t, c, bootstrapToken(t, c, time.Now().Add(time.Hour), bootstrapGroup))

	ctx, cancel := context.WithCancel(context.Background())
	approverDone := make(chan struct{})
	go func() {
		defer close(approverDone)
		decideCSRs(ctx, t, c, "system:node:"+name, certificatesv1.KubeletServingSignerName, true)
	}()
	t.Cleanup(func() { cancel(); <-approverDone })

	start := time.Now()
	ip := hostIP(t) // not loopback: the API server's node proxy (for /metrics) refuses it
	cn := startClusterNodeAs(t, name, "--kubeconfig", kubeconfig, "--bootstrap-kubeconfig", boot, "--cert-dir", certDir,
		"--rotate-certificates", "--rotate-server-certificates", "--node-ip", ip)
	cn.waitNodeReady(90 * time.Second)
	t.Logf("node Ready %v after start, from a bootstrap token alone", time.Since(start).Round(time.Millisecond))

	// The bootstrap request: made with the token, for the node, approved by the controller-manager.
	var boots []certificatesv1.CertificateSigningRequest
	l, err := c.client.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range l.Items {
		if strings.HasPrefix(r.Spec.Username, "system:bootstrap:") && strings.HasPrefix(r.Name, "node-csr-") {
			if leafReq := parseCSR(t, r.Spec.Request); leafReq.Subject.CommonName == "system:node:"+name {
				boots = append(boots, r)
			}
		}
	}
	if len(boots) != 1 || !approved(&boots[0]) || boots[0].Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		t.Fatalf("bootstrap CSRs for %s: %+v, want one approved %s request", name, boots, certificatesv1.KubeAPIServerClientKubeletSignerName)
	}
	pemPath := filepath.Join(certDir, "kubelet-client-current.pem")
	first := leafOf(t, pemPath)
	if first.Subject.CommonName != "system:node:"+name || len(first.Subject.Organization) != 1 || first.Subject.Organization[0] != "system:nodes" {
		t.Errorf("client certificate subject %v", first.Subject)
	}
	if kc, err := os.ReadFile(kubeconfig); err != nil || !strings.Contains(string(kc), pemPath) {
		t.Errorf("kubeconfig %s does not name %s: %v\n%s", kubeconfig, pemPath, err, kc)
	}

	// The serving certificate: requested by the node itself, approved above, served.
	var serving *x509.Certificate
	waitUntil(t, 60*time.Second, "the kubelet API to serve a certificate of the cluster CA", func() bool {
		serving, err = servingLeaf(c, ip, cn.kubeletPort)
		return err == nil
	})
	if serving.Subject.CommonName != "system:node:"+name || len(serving.IPAddresses) == 0 || serving.IPAddresses[0].String() != ip {
		t.Errorf("serving certificate: subject %v, IPs %v", serving.Subject, serving.IPAddresses)
	}

	pod := cn.applyPod(t, "ticker", `  containers:
  - name: c
    image: docker.io/library/busybox:1.35
    command: ["sh", "-c", "i=0; while true; do i=$((i+1)); echo tick $i; sleep 1; done"]
`)
	running := cn.waitAPIPod("default", pod, 60*time.Second, "Running", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodRunning })
	cid := running.Status.ContainerStatuses[0].ContainerID
	if out := cn.cp.kubectl(t, "logs", pod, "--tail", "2"); !strings.Contains(out, "tick") {
		t.Errorf("kubectl logs over the CSR-issued serving certificate: %q", out)
	}

	// Rotation: a new client certificate from a CSR the node makes with its own identity
	// (approved by the controller-manager's selfnodeclient rule).
	var rotated *x509.Certificate
	waitUntil(t, 3*time.Minute, "the client certificate to rotate", func() bool {
		rotated = leafOf(t, pemPath)
		return rotated.SerialNumber.Cmp(first.SerialNumber) != 0
	})
	t.Logf("client certificate rotated %v after the first was issued (it lives %v)", time.Since(first.NotBefore.Add(5*time.Minute)).Round(time.Second), first.NotAfter.Sub(first.NotBefore))
	renewals := 0
	for _, r := range csrsOf(t, c, "system:node:"+name) {
		if r.Spec.SignerName == certificatesv1.KubeAPIServerClientKubeletSignerName && approved(&r) {
			renewals++
		}
	}
	if renewals == 0 {
		t.Errorf("no approved kube-apiserver-client-kubelet CSR made by system:node:%s", name)
	}
	rotatedAt := time.Now()
	cn.logs.waitCount(t, 10*time.Second, 1, "The client certificate rotated; closing the connections")

	// After the rotation: the lease is renewed, a new pod's status reaches the API server, the
	// first pod still runs the same container, and kubectl logs still works.
	waitUntil(t, 30*time.Second, "the node's lease to be renewed after the rotation", func() bool {
		lease, err := c.client.CoordinationV1().Leases("kube-node-lease").Get(context.Background(), name, metav1.GetOptions{})
		return err == nil && lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(rotatedAt)
	})
	second := cn.applyPod(t, "after-rotation", `  containers:
  - name: c
    image: docker.io/library/busybox:1.35
    command: ["sleep", "3600"]
`)
	cn.waitAPIPod("default", second, 60*time.Second, "Running after the rotation", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodRunning })
	p, err := c.client.CoreV1().Pods("default").Get(context.Background(), pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cs := p.Status.ContainerStatuses[0]; cs.ContainerID != cid || cs.RestartCount != 0 || cs.State.Running == nil {
		t.Errorf("the pod's container changed across the rotation: %+v (was %s)", cs, cid)
	}
	if out := cn.cp.kubectl(t, "logs", pod, "--tail", "1"); !strings.Contains(out, "tick") {
		t.Errorf("kubectl logs after the rotation: %q", out)
	}

	// Expiry metrics, as upstream's.
	metrics := parseMetrics(t, "/metrics", cn.nodeProxy(t, "/metrics"))
	for _, m := range []string{"kubelet_certificate_manager_client_ttl_seconds", "kubelet_certificate_manager_server_ttl_seconds"} {
		f := metrics[m]
		if f == nil || len(f.GetMetric()) != 1 {
			t.Errorf("/metrics has no %s", m)
			continue
		}
		if v := f.GetMetric()[0].GetGauge().GetValue(); v <= 0 || v > 7*60 {
			t.Errorf("%s = %v, want the seconds left on a 2-minute certificate", m, v)
		}
	}
	if metrics["kubelet_certificate_manager_client_expiration_renew_errors"] == nil || metrics["kubelet_server_expiration_renew_errors"] == nil {
		t.Errorf("/metrics lacks the renewal error counters")
	}
}

// parseCSR parses a PEM certificate request.
func parseCSR(t *testing.T, data []byte) *x509.CertificateRequest {
	t.Helper()
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("CSR request is not PEM")
	}
	r, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Issue 18, acceptance 5: an expired bootstrap token and a denied CSR each stop nodelet with
// an error that says what happened and what to do; no kubeconfig is written.
func TestClusterTLSBootstrapRefused(t *testing.T) {
	c := cluster(t)
	ctx := context.Background()

	t.Run("expired bootstrap token", func(t *testing.T) {
		name := "e2e-" + strings.ToLower(testharness.RandomHex(4))
		dir := t.TempDir()
		boot := bootstrapKubeconfig(t, c, bootstrapToken(t, c, time.Now().Add(-time.Minute), bootstrapGroup))
		n := startNamedNode(t, name, "--kubeconfig", filepath.Join(dir, "kubelet.conf"), "--bootstrap-kubeconfig", boot, "--cert-dir", filepath.Join(dir, "pki"))
		waitExit(t, n, 60*time.Second)
		n.logs.waitCount(t, 5*time.Second, 1, "nodelet failed", "401 Unauthorized", "bootstrap token", "kubeadm token create")
		if _, err := os.Stat(filepath.Join(dir, "kubelet.conf")); !os.IsNotExist(err) {
			t.Errorf("a kubeconfig was written: %v", err)
		}
	})

	t.Run("denied CSR", func(t *testing.T) {
		// A token whose group may request certificates but is not auto-approved: an operator
		// (here the test) decides, and denies.
		group := "system:bootstrappers:e2e-manual-" + strings.ToLower(testharness.RandomHex(3))
		crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "e2e:" + group},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:node-bootstrapper"},
			Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "Group", Name: group}}}
		if _, err := c.client.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = c.client.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
		})
		token := bootstrapToken(t, c, time.Now().Add(time.Hour), group)
		boot := bootstrapKubeconfig(t, c, token)
		dctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			decideCSRs(dctx, t, c, "system:bootstrap:"+strings.SplitN(token, ".", 2)[0], certificatesv1.KubeAPIServerClientKubeletSignerName, false)
		}()
		defer func() { cancel(); <-done }()
		name := "e2e-" + strings.ToLower(testharness.RandomHex(4))
		dir := t.TempDir()
		n := startNamedNode(t, name, "--kubeconfig", filepath.Join(dir, "kubelet.conf"), "--bootstrap-kubeconfig", boot, "--cert-dir", filepath.Join(dir, "pki"))
		waitExit(t, n, 60*time.Second)
		n.logs.waitCount(t, 5*time.Second, 1, "nodelet failed", "was denied", "E2EDeny", "this node may not join")
		if _, err := os.Stat(filepath.Join(dir, "kubelet.conf")); !os.IsNotExist(err) {
			t.Errorf("a kubeconfig was written: %v", err)
		}
	})
}

// waitExit waits for nodelet to exit on its own, with a non-zero status.
func waitExit(t *testing.T, n *node, timeout time.Duration) {
	t.Helper()
	select {
	case err := <-n.exited:
		n.exited <- err // for cleanup's stop
		if err == nil {
			t.Errorf("nodelet exited with status 0")
		}
	case <-time.After(timeout):
		t.Fatalf("nodelet still runs %v after start; log:\n%s", timeout, n.logs.dump())
	}
}

// waitUntil polls cond every half second until it holds, failing the test after timeout.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", timeout, what)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
