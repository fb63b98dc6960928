package certificates

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
)

const bootstrapKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: ""
users:
- name: bootstrap
  user:
    token: abcdef.0123456789abcdef
contexts:
- name: c
  context: {cluster: c, user: bootstrap}
current-context: c
`

func bootstrapConfig(t *testing.T, csrs *fakeCSRs) BootstrapConfig {
	t.Helper()
	dir := t.TempDir()
	boot := filepath.Join(dir, "bootstrap.kubeconfig")
	if err := os.WriteFile(boot, []byte(bootstrapKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return BootstrapConfig{Kubeconfig: filepath.Join(dir, "kubelet.kubeconfig"), BootstrapKubeconfig: boot,
		CertDir: filepath.Join(dir, "pki"), NodeName: "n1", Clock: clock.RealClock{},
		NewClient: func(*rest.Config) (CSRClient, error) { return csrs, nil }}
}

// From a bootstrap token alone: one request named after its key, the pair stored, the
// kubeconfig written naming it; a second start keeps the kubeconfig and asks nothing.
func TestBootstrapWritesKubeconfig(t *testing.T) {
	csrs := newFakeCSRs(newTestCA(t), clock.RealClock{}, time.Hour)
	cfg := bootstrapConfig(t, csrs)
	if err := Bootstrap(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	reqs := csrs.requests()
	if len(reqs) != 1 || !strings.HasPrefix(reqs[0], "node-csr-") {
		t.Fatalf("requests %v, want one node-csr-*", reqs)
	}
	if csr := csrs.objs[reqs[0]]; csr.Spec.SignerName != "kubernetes.io/kube-apiserver-client-kubelet" {
		t.Errorf("signer %q", csr.Spec.SignerName)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	pemPath := filepath.Join(cfg.CertDir, "kubelet-client-current.pem")
	if rc.Host != "https://127.0.0.1:6443" || rc.CertFile != pemPath || rc.KeyFile != pemPath {
		t.Errorf("kubeconfig: host %q cert %q key %q, want the bootstrap server and %s", rc.Host, rc.CertFile, rc.KeyFile, pemPath)
	}
	if _, err := os.Stat(filepath.Join(cfg.CertDir, pendingKey)); !os.IsNotExist(err) {
		t.Errorf("the pending key is left behind: %v", err)
	}
	if ok, why := kubeconfigValid(cfg.Kubeconfig, time.Now()); !ok {
		t.Errorf("written kubeconfig not valid: %s", why)
	}
	if err := Bootstrap(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	if n := len(csrs.requests()); n != 1 {
		t.Errorf("%d requests after a second start with a valid kubeconfig, want 1", n)
	}
}

// A node restarted while its request waits asks again with the same key, finds its request
// and gets its certificate when it is approved.
func TestBootstrapRestartReusesPendingRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		csrs := newFakeCSRs(newTestCA(t), clock.RealClock{}, time.Hour)
		csrs.decision = "pending"
		cfg := bootstrapConfig(t, csrs)
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() { errc <- Bootstrap(ctx, cfg) }()
		synctest.Wait()
		cancel() // killed while waiting
		if err := <-errc; err == nil {
			t.Fatal("Bootstrap returned no error while its request was pending")
		}
		csrs.mu.Lock()
		csrs.decision = "approve"
		csrs.mu.Unlock()
		if err := Bootstrap(t.Context(), cfg); err != nil {
			t.Fatal(err)
		}
		if reqs := csrs.requests(); len(reqs) != 1 {
			t.Errorf("requests %v: the restart made a second request", reqs)
		}
	})
}

func TestBootstrapErrorsSayWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		name     string
		setup    func(*fakeCSRs)
		errLikes []string
	}{
		{"denied", func(f *fakeCSRs) { f.decision = "deny" }, []string{"denied", "NotThisNode", "restart nodelet"}},
		{"expired bootstrap token", func(f *fakeCSRs) { f.createErr = apierrors.NewUnauthorized("Unauthorized") }, []string{"401 Unauthorized", "bootstrap token", "kubeadm token create"}},
		{"no bootstrapper role", func(f *fakeCSRs) {
			f.createErr = apierrors.NewForbidden(csrResource, "", errors.New("no"))
		}, []string{"forbidden", "system:node-bootstrapper"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			csrs := newFakeCSRs(newTestCA(t), clock.RealClock{}, time.Hour)
			tc.setup(csrs)
			cfg := bootstrapConfig(t, csrs)
			err := Bootstrap(t.Context(), cfg)
			for _, like := range tc.errLikes {
				if err == nil || !strings.Contains(err.Error(), like) {
					t.Errorf("err = %v, want one containing %q", err, like)
				}
			}
			if _, err := os.Stat(cfg.Kubeconfig); !os.IsNotExist(err) {
				t.Errorf("a kubeconfig was written: %v", err)
			}
		})
	}
}

// An expired kubeconfig certificate is bootstrapped again.
func TestBootstrapReplacesExpiredKubeconfig(t *testing.T) {
	ca := newTestCA(t)
	csrs := newFakeCSRs(ca, clock.RealClock{}, time.Hour)
	cfg := bootstrapConfig(t, csrs)
	certPEM, keyPEM := issue(t, ca, time.Now().Add(-2*time.Hour), time.Hour)
	dir := filepath.Dir(cfg.Kubeconfig)
	if err := os.WriteFile(filepath.Join(dir, "old.crt"), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "old.key"), keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(bootstrapKubeconfig, "token: abcdef.0123456789abcdef", "client-certificate: old.crt\n    client-key: old.key", 1)
	if err := os.WriteFile(cfg.Kubeconfig, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, why := kubeconfigValid(cfg.Kubeconfig, time.Now()); ok || !strings.Contains(why, "expired") {
		t.Fatalf("expired kubeconfig: valid %v (%s)", ok, why)
	}
	if err := Bootstrap(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	if n := len(csrs.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	if ok, why := kubeconfigValid(cfg.Kubeconfig, time.Now()); !ok {
		t.Errorf("kubeconfig after bootstrap: %s", why)
	}
}
