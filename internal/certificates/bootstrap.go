package certificates

import (
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/atomicfile"
)

const (
	// ClientPair and ServingPair are the stores' file names in --cert-dir, upstream's.
	ClientPair  = "kubelet-client"
	ServingPair = "kubelet-server"
	// pendingKey keeps the key of a bootstrap request until its certificate is stored.
	pendingKey = "kubelet-client.key.tmp"
	// bootstrapWait bounds the wait for the bootstrap request's approval (upstream: 1 hour).
	bootstrapWait = time.Hour
)

// ClientUsages and ServingUsages are what the node asks for its ECDSA keys (upstream's
// DefaultKubeletClientGetUsages and DefaultKubeletServingGetUsages without RSA's key
// encipherment).
var (
	ClientUsages  = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	ServingUsages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
)

// NodeSubject is the node's identity: system:node:<name> in group system:nodes.
func NodeSubject(nodeName string) pkix.Name {
	return pkix.Name{CommonName: "system:node:" + nodeName, Organization: []string{"system:nodes"}}
}

// ServingTemplate is the serving certificate's request for the node's host names and IPs;
// nil without any (upstream asks for none until the node has addresses).
func ServingTemplate(nodeName string, hostnames []string, ips []net.IP) *x509.CertificateRequest {
	if len(hostnames) == 0 && len(ips) == 0 {
		return nil
	}
	return &x509.CertificateRequest{Subject: NodeSubject(nodeName), DNSNames: hostnames, IPAddresses: ips}
}

// BootstrapConfig is TLS bootstrap's input.
type BootstrapConfig struct {
	// Kubeconfig is --kubeconfig: read if it holds a valid certificate, else written.
	Kubeconfig string
	// BootstrapKubeconfig is --bootstrap-kubeconfig: the credentials (a bootstrap token) to
	// request the node's first client certificate with.
	BootstrapKubeconfig string
	// CertDir is --cert-dir.
	CertDir  string
	NodeName string
	Clock    clock.Clock
	// NewClient builds the CSR client from the bootstrap credentials.
	NewClient func(*rest.Config) (CSRClient, error)
}

// Bootstrap makes sure --kubeconfig holds a valid client certificate, as upstream's
// LoadClientCert: a kubeconfig whose certificate has not expired is kept; else the stored
// pair in CertDir, if valid, is used; else a certificate is requested with the bootstrap
// credentials (a kubernetes.io/kube-apiserver-client-kubelet request, approved in a standard
// cluster by the controller-manager) and waited for up to an hour. The kubeconfig written
// names CertDir/kubelet-client-current.pem, which rotation replaces.
func Bootstrap(ctx context.Context, cfg BootstrapConfig) error {
	logger := klog.FromContext(ctx)
	now := cfg.Clock.Now()
	ok, why := kubeconfigValid(cfg.Kubeconfig, now)
	if ok {
		logger.V(2).Info("The kubeconfig holds a valid certificate; no bootstrap", "path", cfg.Kubeconfig)
		return nil
	}
	logger.Info("Bootstrapping the node's client certificate", "kubeconfig", cfg.Kubeconfig, "reason", why, "bootstrapKubeconfig", cfg.BootstrapKubeconfig)
	boot, err := clientcmd.BuildConfigFromFlags("", cfg.BootstrapKubeconfig)
	if err != nil {
		return fmt.Errorf("--bootstrap-kubeconfig %s: %w", cfg.BootstrapKubeconfig, err)
	}
	store := NewStore(cfg.CertDir, ClientPair, cfg.Clock)
	if cur, err := store.Current(); err == nil && now.Before(cur.Leaf.NotAfter) {
		logger.Info("Using the stored client certificate", "path", store.CurrentPath(), "expiration", cur.Leaf.NotAfter)
		return writeKubeconfig(boot, cfg.Kubeconfig, store.CurrentPath())
	}
	if err := os.MkdirAll(cfg.CertDir, 0o700); err != nil {
		return fmt.Errorf("--cert-dir: %w", err)
	}
	keyPath := filepath.Join(cfg.CertDir, pendingKey)
	keyPEM, _, err := keyutil.LoadOrGenerateKeyFile(keyPath)
	if err != nil {
		return fmt.Errorf("the bootstrap key %s: %w", keyPath, err)
	}
	parsed, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return fmt.Errorf("the bootstrap key %s: %w (delete it to make a new one)", keyPath, err)
	}
	key, ok := parsed.(crypto.Signer)
	if !ok {
		return fmt.Errorf("the bootstrap key %s cannot sign; delete it to make a new one", keyPath)
	}
	subject := NodeSubject(cfg.NodeName)
	req, err := newRequest(&x509.CertificateRequest{Subject: subject}, key, certificatesv1.KubeAPIServerClientKubeletSignerName, ClientUsages)
	if err != nil {
		return err
	}
	if req.name, err = digestedName(key.Public(), subject, ClientUsages); err != nil {
		return err
	}
	client, err := cfg.NewClient(boot)
	if err != nil {
		return fmt.Errorf("API client from --bootstrap-kubeconfig %s: %w", cfg.BootstrapKubeconfig, err)
	}
	name, uid, err := create(ctx, client, req)
	if err != nil {
		return fmt.Errorf("TLS bootstrap with --bootstrap-kubeconfig %s: %w", cfg.BootstrapKubeconfig, err)
	}
	logger.Info("Waiting for the client certificate: the request must be approved (the controller-manager approves node client requests of bootstrap tokens bound to the auto-approve role; else kubectl certificate approve)", "csr", name)
	wctx, cancel := context.WithTimeout(ctx, bootstrapWait)
	defer cancel()
	certPEM, err := wait(wctx, client, cfg.Clock, name, uid)
	if err != nil {
		if errors.Is(err, ErrDenied) {
			return fmt.Errorf("TLS bootstrap: %w; the node cannot join until a new request is approved (restart nodelet to make one)", err)
		}
		return fmt.Errorf("TLS bootstrap: %w", err)
	}
	cert, err := store.Update(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("store the client certificate: %w", err)
	}
	if err := os.Remove(keyPath); err != nil && !os.IsNotExist(err) {
		logger.V(2).Info("Could not remove the bootstrap key", "path", keyPath, "err", err)
	}
	logger.Info("Got the node's client certificate", "csr", name, "path", store.CurrentPath(), "expiration", cert.Leaf.NotAfter)
	return writeKubeconfig(boot, cfg.Kubeconfig, store.CurrentPath())
}

// kubeconfigValid reports whether path is a kubeconfig whose client certificate is valid at
// now, and if not why.
func kubeconfigValid(path string, now time.Time) (bool, string) {
	if _, err := os.Stat(path); err != nil {
		return false, "no kubeconfig"
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return false, fmt.Sprintf("unreadable kubeconfig: %v", err)
	}
	data, _, err := clientPEM(cfg)
	if err != nil {
		return false, fmt.Sprintf("its certificate: %v", err)
	}
	if len(data) == 0 {
		return false, "the kubeconfig has no client certificate"
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil {
		return false, fmt.Sprintf("its certificate: %v", err)
	}
	for _, c := range certs {
		if now.After(c.NotAfter) {
			return false, fmt.Sprintf("its certificate expired at %s", c.NotAfter.UTC().Format(time.RFC3339))
		}
	}
	return true, ""
}

// clientPEM is the client certificate and key rc holds, embedded or in files.
func clientPEM(rc *rest.Config) (certPEM, keyPEM []byte, err error) {
	certPEM, keyPEM = rc.CertData, rc.KeyData
	if len(certPEM) == 0 && rc.CertFile != "" {
		if certPEM, err = os.ReadFile(rc.CertFile); err != nil {
			return nil, nil, err
		}
	}
	if len(keyPEM) == 0 && rc.KeyFile != "" {
		if keyPEM, err = os.ReadFile(rc.KeyFile); err != nil {
			return nil, nil, err
		}
	}
	return certPEM, keyPEM, nil
}

// KubeconfigCert is the client certificate rc holds (embedded or in files), with Leaf set;
// nil if it holds none.
func KubeconfigCert(rc *rest.Config) (*tls.Certificate, error) {
	certPEM, keyPEM, err := clientPEM(rc)
	if err != nil || len(certPEM) == 0 {
		return nil, err
	}
	return parsePair(certPEM, keyPEM)
}

// writeKubeconfig writes the node's kubeconfig: the bootstrap kubeconfig's server and CA, and
// the client pair at pemPath (upstream's writeKubeconfigFromBootstrapping).
func writeKubeconfig(boot *rest.Config, path, pemPath string) error {
	caData := boot.CAData
	if boot.CAFile != "" {
		caData = nil
	}
	kc := clientcmdapi.Config{
		Clusters: map[string]*clientcmdapi.Cluster{"default-cluster": {
			Server: boot.Host, InsecureSkipTLSVerify: boot.Insecure,
			CertificateAuthority: boot.CAFile, CertificateAuthorityData: caData,
		}},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{"default-auth": {ClientCertificate: pemPath, ClientKey: pemPath}},
		Contexts: map[string]*clientcmdapi.Context{"default-context": {
			Cluster: "default-cluster", AuthInfo: "default-auth", Namespace: "default",
		}},
		CurrentContext: "default-context",
	}
	data, err := clientcmd.Write(kc)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, data, 0o600)
}
