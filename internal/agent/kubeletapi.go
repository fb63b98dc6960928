package agent

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/klog/v2"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/nodelet/nodelet/internal/certificates"
	"github.com/nodelet/nodelet/internal/kubeletauth"
	"github.com/nodelet/nodelet/internal/server"
)

// KubeletAPIConfig is the kubelet API (port 10250): where it listens, its certificate, and who
// may use it.
type KubeletAPIConfig struct {
	// Address is host:port; empty disables the kubelet API.
	Address string
	// TLSCertFile and TLSKeyFile serve HTTPS; empty: a self-signed pair in <root>/pki, as upstream.
	TLSCertFile, TLSKeyFile string
	Authentication          kubeletconfigv1beta1.KubeletAuthentication
	Authorization           kubeletconfigv1beta1.KubeletAuthorization
}

// buildKubeletAPI builds the kubelet API with authentication and authorization, in cluster
// mode (the webhooks need the API server): the server and the client CA reload.
func (c *cluster) buildKubeletAPI(cfg Config, deps Deps, sd server.Deps, hostIPs []string) ([]runnable, error) {
	api := cfg.Cluster.KubeletAPI
	auth, err := kubeletauth.BuildAuth(kubeletauth.Deps{TokenReviews: c.client.TokenReviews,
		SubjectAccessReviews: c.client.SubjectAccessReviews, Clock: deps.Clock}, api.Authentication, api.Authorization)
	if err != nil {
		return nil, fmt.Errorf("kubelet API: %w", err)
	}
	secure := &server.Secure{CertFile: api.TLSCertFile, KeyFile: api.TLSKeyFile,
		Filter: func(h http.Handler) http.Handler {
			return kubeletauth.Filter(cfg.NodeName, auth.Authenticator, auth.Authorizer, h)
		},
	}
	var serving *certificates.Manager
	switch {
	case secure.CertFile != "" && secure.KeyFile != "":
	case cfg.Cluster.Certs.ServerTLSBootstrap:
		// As upstream: serverTLSBootstrap wins over a self-signed pair (tlsCertFile unset).
		if serving, err = servingCertManager(cfg, deps.Clock, c.certMetrics, hostIPs); err != nil {
			return nil, err
		}
		secure.GetCertificate = serving.GetCertificate
	default:
		if secure.CertFile, secure.KeyFile, err = selfSignedCert(certDir(cfg), cfg.NodeName, hostIPs); err != nil {
			return nil, err
		}
	}
	srv, err := server.New(server.Config{Address: api.Address, Clock: deps.Clock, Profiling: cfg.Profiling, Secure: secure}, sd)
	if err != nil {
		return nil, err
	}
	runs := []runnable{{"kubelet API", srv.Run}, {"client CA reload", func(ctx context.Context) error { auth.Run(ctx); return nil }}}
	if serving != nil {
		runs = append(runs, runnable{"serving certificate rotation", func(ctx context.Context) error { serving.Run(ctx, c.client.CSRs); return nil }})
	}
	return runs, nil
}

// selfSignedCert returns <dir>/nodelet.crt and .key, made once for the node's name and
// addresses (upstream writes kubelet.crt to --cert-dir the same way).
func selfSignedCert(dir, nodeName string, hostIPs []string) (certFile, keyFile string, err error) {
	certFile, keyFile = filepath.Join(dir, "nodelet.crt"), filepath.Join(dir, "nodelet.key")
	if ok, _ := certutil.CanReadCertAndKey(certFile, keyFile); ok {
		return certFile, keyFile, nil
	}
	var ips []net.IP
	for _, s := range hostIPs {
		if ip := net.ParseIP(s); ip != nil {
			ips = append(ips, ip)
		}
	}
	crt, key, err := certutil.GenerateSelfSignedCertKey(nodeName, ips, nil)
	if err != nil {
		return "", "", fmt.Errorf("generate the kubelet API's self-signed certificate: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	if err := certutil.WriteCert(certFile, crt); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		return "", "", err
	}
	klog.InfoS("Generated a self-signed certificate for the kubelet API; set tlsCertFile and tlsPrivateKeyFile to use your own", "cert", certFile)
	return certFile, keyFile, nil
}
