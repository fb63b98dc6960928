package certificates

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// WithRotatingCertificate returns a copy of cfg whose TLS client certificate is current() at
// each handshake, dialling with dial, as upstream's UpdateTransport: the connections opened
// keep the certificate they were opened with, so when the certificate rotates the caller
// closes them (ManagerConfig.OnRotate) and watches resume on new connections from their
// resource versions.
func WithRotatingCertificate(cfg *rest.Config, current func() *tls.Certificate, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (*rest.Config, error) {
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("TLS for the API client: %w", err)
	}
	if tlsConfig == nil {
		tlsConfig = &tls.Config{}
	}
	tlsConfig.Certificates = nil
	tlsConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		if c := current(); c != nil {
			return c, nil
		}
		return &tls.Certificate{}, nil // no certificate: the API server answers 401
	}
	out := rest.CopyConfig(cfg)
	out.Transport = utilnet.SetTransportDefaults(&http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsConfig,
		MaxIdleConnsPerHost: 25,
		DialContext:         dial,
	})
	out.Dial = nil
	out.TLSClientConfig = rest.TLSClientConfig{}
	return out, nil
}
