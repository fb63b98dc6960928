package agent

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"path/filepath"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/certificates"
	"github.com/nodelet/nodelet/internal/kubeclient"
)

// CertConfig is how the node gets and renews its certificates (upstream's --bootstrap-kubeconfig,
// --cert-dir, rotateCertificates and serverTLSBootstrap).
type CertConfig struct {
	// BootstrapKubeconfig, when set, requests the node's client certificate with bootstrap
	// credentials when Kubeconfig is missing or its certificate expired.
	BootstrapKubeconfig string
	// Dir is --cert-dir.
	Dir string
	// RotateClient renews the client certificate at 70–90 % of its life.
	RotateClient bool
	// ServerTLSBootstrap requests the kubelet API's certificate through a
	// kubernetes.io/kubelet-serving request, and renews it.
	ServerTLSBootstrap bool
}

// certDir is --cert-dir, <root>/pki when unset.
func certDir(cfg Config) string {
	if cfg.Cluster.Certs.Dir != "" {
		return cfg.Cluster.Certs.Dir
	}
	return filepath.Join(cfg.RootDir, "pki")
}

// bootstrap runs TLS bootstrap when it is configured (before any client is built).
func bootstrap(ctx context.Context, cfg Config, clk clock.Clock) error {
	if cfg.Cluster.Certs.BootstrapKubeconfig == "" {
		return nil
	}
	return certificates.Bootstrap(ctx, certificates.BootstrapConfig{
		Kubeconfig: cfg.Cluster.Kubeconfig, BootstrapKubeconfig: cfg.Cluster.Certs.BootstrapKubeconfig,
		CertDir: certDir(cfg), NodeName: cfg.NodeName, Clock: clk,
		NewClient: func(rc *rest.Config) (certificates.CSRClient, error) {
			c, err := kubeclient.New(rc)
			if err != nil {
				return nil, err
			}
			return c.CSRs, nil
		},
	})
}

// clientCertManager is the rotation of the client certificate the kubeconfig holds: rc is
// given the manager's current certificate at each handshake, and every connection is closed
// when it rotates so that the next requests use the new one.
func clientCertManager(cfg Config, clk clock.Clock, metrics *certificates.Metrics, rc *rest.Config,
	dial func(ctx context.Context, network, addr string) (net.Conn, error), closeAll func()) (*certificates.Manager, *rest.Config, error) {
	initial, err := certificates.KubeconfigCert(rc)
	if err != nil {
		return nil, nil, fmt.Errorf("rotateCertificates: the client certificate of --kubeconfig %s: %w", cfg.Cluster.Kubeconfig, err)
	}
	subject := certificates.NodeSubject(cfg.NodeName)
	m, err := certificates.NewManager(certificates.ManagerConfig{
		Name: certificates.Client, Signer: certificatesv1.KubeAPIServerClientKubeletSignerName, Usages: certificates.ClientUsages,
		Template: func() *x509.CertificateRequest { return &x509.CertificateRequest{Subject: subject} },
		Store:    certificates.NewStore(certDir(cfg), certificates.ClientPair, clk),
		Clock:    clk, OnRotate: closeAll, Metrics: metrics,
	}, initial)
	if err != nil {
		return nil, nil, err
	}
	metrics.WatchTTL(certificates.Client, m)
	out, err := certificates.WithRotatingCertificate(rc, m.Current, dial)
	if err != nil {
		return nil, nil, err
	}
	return m, out, nil
}

// servingCertManager requests and renews the kubelet API's certificate for the node's name and
// addresses (a kubernetes.io/kubelet-serving request, which an operator or an approver
// controller approves: the controller-manager does not).
func servingCertManager(cfg Config, clk clock.Clock, metrics *certificates.Metrics, hostIPs []string) (*certificates.Manager, error) {
	var ips []net.IP
	for _, s := range hostIPs {
		if ip := net.ParseIP(s); ip != nil {
			ips = append(ips, ip)
		}
	}
	tmpl := certificates.ServingTemplate(cfg.NodeName, []string{cfg.NodeName}, ips)
	m, err := certificates.NewManager(certificates.ManagerConfig{
		Name: certificates.Serving, Signer: certificatesv1.KubeletServingSignerName, Usages: certificates.ServingUsages,
		Template: func() *x509.CertificateRequest { return tmpl },
		Store:    certificates.NewStore(certDir(cfg), certificates.ServingPair, clk),
		Clock:    clk, Metrics: metrics,
	}, nil)
	if err != nil {
		return nil, err
	}
	metrics.WatchTTL(certificates.Serving, m)
	return m, nil
}
