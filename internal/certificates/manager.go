package certificates

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"net"
	"slices"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

const (
	// waitTimeout bounds the wait for a rotation's certificate (upstream: 15 minutes).
	waitTimeout = 15 * time.Minute
	// waitRetry is the pause before listing a request again after an error.
	waitRetry = 2 * time.Second
	// recheck is how often, while waiting for the deadline, the template is compared with the
	// certificate (a serving certificate is requested again when the node's addresses change).
	recheck = time.Minute
)

// backoff is upstream's after a failed rotation: 2 s doubling five times, then every 32 s.
func backoff(failures int) time.Duration {
	return 2 * time.Second << min(max(failures-1, 0), 4)
}

// ManagerConfig is one certificate's rotation.
type ManagerConfig struct {
	// Name says which certificate in logs: "client" or "serving".
	Name string
	// Signer is the CSRs' signerName.
	Signer string
	// Usages are the key usages requested (for the ECDSA keys nodelet makes).
	Usages []certificatesv1.KeyUsage
	// Template is what to request; nil while it cannot be known yet (a serving certificate
	// before the node has addresses).
	Template func() *x509.CertificateRequest
	Store    *Store
	Clock    clock.Clock
	// Jitter returns a number in [0, 1) that places each certificate's deadline between 70 and
	// 90 % of its life; nil: random.
	Jitter func() float64
	// OnRotate, if set, is called after a new certificate became current.
	OnRotate func()
	Metrics  *Metrics
}

// Manager keeps a current certificate and requests the next one when its deadline comes.
type Manager struct {
	cfg ManagerConfig

	mu       sync.Mutex
	cert     *tls.Certificate
	deadline float64 // the fraction of cert's life at which it is rotated
}

// NewManager returns the manager of the certificate in cfg.Store; initial, if the store has
// none, is the one to start with (the kubeconfig's own, before its first rotation).
func NewManager(cfg ManagerConfig, initial *tls.Certificate) (*Manager, error) {
	if cfg.Store == nil || cfg.Clock == nil || cfg.Template == nil || cfg.Signer == "" {
		return nil, errors.New("certificates: ManagerConfig needs Store, Clock, Template and Signer")
	}
	if cfg.Jitter == nil {
		cfg.Jitter = mathrand.Float64
	}
	m := &Manager{cfg: cfg}
	cert, err := cfg.Store.Current()
	switch {
	case err == nil:
	case errors.Is(err, ErrNoCertificate):
		cert = initial
	default:
		klog.ErrorS(err, "The stored certificate is unreadable; requesting a new one", "certificate", cfg.Name)
		cert = initial
	}
	m.set(cert)
	return m, nil
}

// Current is the certificate in use; nil when there is none or it has expired.
func (m *Manager) Current() *tls.Certificate {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cert == nil || m.cert.Leaf == nil || m.cfg.Clock.Now().After(m.cert.Leaf.NotAfter) {
		return nil
	}
	return m.cert
}

// GetCertificate serves the current certificate (tls.Config.GetCertificate).
func (m *Manager) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := m.Current(); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("no %s certificate yet: its certificate signing request waits for approval (kubectl certificate approve)", m.cfg.Name)
}

// TTL is the time left on the current certificate, ok false when there is none.
func (m *Manager) TTL() (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cert == nil || m.cert.Leaf == nil {
		return 0, false
	}
	return m.cert.Leaf.NotAfter.Sub(m.cfg.Clock.Now()), true
}

func (m *Manager) set(c *tls.Certificate) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cert = c
	m.deadline = 0.7 + 0.2*m.cfg.Jitter()
}

func (m *Manager) next() (*tls.Certificate, float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cert, m.deadline
}

// Run rotates the certificate through client until ctx ends.
func (m *Manager) Run(ctx context.Context, client CSRClient) {
	logger := klog.FromContext(ctx).WithValues("certificate", m.cfg.Name)
	failures := 0
	for ctx.Err() == nil {
		tmpl := m.cfg.Template()
		cert, fraction := m.next()
		var leaf *x509.Certificate
		if cert != nil {
			leaf = cert.Leaf
		}
		now := m.cfg.Clock.Now()
		if tmpl != nil {
			deadline := RotationDeadline(now, leaf, tmpl, fraction)
			if wait := deadline.Sub(now); wait > 0 {
				logger.V(2).Info("Waiting for the next certificate rotation", "deadline", deadline, "expiration", leaf.NotAfter)
				if sleep(ctx, m.cfg.Clock, min(wait, recheck)) != nil {
					return
				}
				continue
			}
		} else {
			logger.V(4).Info("Nothing to request yet (no node addresses)")
			if sleep(ctx, m.cfg.Clock, time.Second) != nil {
				return
			}
			continue
		}
		if err := m.rotate(ctx, client, tmpl); err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			m.cfg.Metrics.renewError(m.cfg.Name)
			d := backoff(failures)
			logger.Error(err, "Certificate rotation failed; retrying", "retryIn", d, "failures", failures)
			if sleep(ctx, m.cfg.Clock, d) != nil {
				return
			}
			continue
		}
		failures = 0
	}
}

// rotate requests a certificate for tmpl with a new key and makes it current.
func (m *Manager) rotate(ctx context.Context, client CSRClient, tmpl *x509.CertificateRequest) error {
	logger := klog.FromContext(ctx)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate a key: %w", err)
	}
	req, err := newRequest(tmpl, key, m.cfg.Signer, m.cfg.Usages)
	if err != nil {
		return err
	}
	name, uid, err := create(ctx, client, req)
	if err != nil {
		return err
	}
	logger.Info("Requested a new certificate; waiting for it to be approved and signed", "certificate", m.cfg.Name, "csr", name, "signer", m.cfg.Signer)
	wctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	certPEM, err := wait(wctx, client, m.cfg.Clock, name, uid)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("encode the key: %w", err)
	}
	cert, err := m.cfg.Store.Update(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		return fmt.Errorf("store the certificate of %s: %w", name, err)
	}
	old, _ := m.next()
	m.set(cert)
	if old != nil && old.Leaf != nil {
		m.cfg.Metrics.rotated(m.cfg.Name, m.cfg.Clock.Since(old.Leaf.NotBefore))
	}
	logger.Info("Rotated the certificate", "certificate", m.cfg.Name, "csr", name, "expiration", cert.Leaf.NotAfter, "path", m.cfg.Store.CurrentPath())
	if m.cfg.OnRotate != nil {
		m.cfg.OnRotate()
	}
	return nil
}

// RotationDeadline is when to request the next certificate (pure): now when there is none or
// it does not match tmpl; else at fraction (0.7–0.9) of its life, as upstream.
func RotationDeadline(now time.Time, cur *x509.Certificate, tmpl *x509.CertificateRequest, fraction float64) time.Time {
	if cur == nil || !Satisfies(cur, tmpl) {
		return now
	}
	life := cur.NotAfter.Sub(cur.NotBefore)
	return cur.NotBefore.Add(time.Duration(float64(life) * fraction))
}

// Satisfies reports whether cert has what tmpl asks: its subject's common name and
// organizations, DNS names and IP addresses.
func Satisfies(cert *x509.Certificate, tmpl *x509.CertificateRequest) bool {
	if tmpl == nil {
		return true
	}
	if cert.Subject.CommonName != tmpl.Subject.CommonName {
		return false
	}
	return sameSet(cert.Subject.Organization, tmpl.Subject.Organization) &&
		sameSet(cert.DNSNames, tmpl.DNSNames) &&
		sameSet(ipStrings(cert.IPAddresses), ipStrings(tmpl.IPAddresses))
}

func ipStrings(ips []net.IP) []string {
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// sleep waits d on clk, or until ctx ends (its error).
func sleep(ctx context.Context, clk clock.Clock, d time.Duration) error {
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}
