package certificates

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// testCA signs certificates for the fake API server.
type testCA struct {
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{key: key, cert: cert}
}

// sign issues a certificate for the PEM request, valid from notBefore for life.
func (ca *testCA) sign(reqPEM []byte, notBefore time.Time, life time.Duration) ([]byte, error) {
	block, _ := pem.Decode(reqPEM)
	if block == nil {
		return nil, fmt.Errorf("request is not PEM")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, err
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: req.Subject, DNSNames: req.DNSNames, IPAddresses: req.IPAddresses,
		NotBefore: notBefore, NotAfter: notBefore.Add(life)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, req.PublicKey, ca.key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// fakeCSRs is an API server's CSR endpoint whose approver decides each request when it is
// created: approve (and sign for life from the clock's now), deny, or leave it pending.
type fakeCSRs struct {
	mu        sync.Mutex
	ca        *testCA
	clock     clock.PassiveClock
	life      time.Duration
	decision  string // "approve", "deny", "pending"
	createErr error
	objs      map[string]*certificatesv1.CertificateSigningRequest
	created   []string
	n         int
}

var _ CSRClient = (*fakeCSRs)(nil)

var csrResource = schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}

func newFakeCSRs(ca *testCA, clk clock.PassiveClock, life time.Duration) *fakeCSRs {
	return &fakeCSRs{ca: ca, clock: clk, life: life, decision: "approve", objs: map[string]*certificatesv1.CertificateSigningRequest{}}
}

func (f *fakeCSRs) Create(_ context.Context, csr *certificatesv1.CertificateSigningRequest, _ metav1.CreateOptions) (*certificatesv1.CertificateSigningRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.createErr != nil {
		return nil, f.createErr
	}
	c := csr.DeepCopy()
	if c.Name == "" {
		f.n++
		c.Name = fmt.Sprintf("%s%d", c.GenerateName, f.n)
	}
	if _, ok := f.objs[c.Name]; ok {
		return nil, apierrors.NewAlreadyExists(schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, c.Name)
	}
	c.UID = types.UID("uid-" + c.Name)
	if err := f.decideLocked(c); err != nil {
		return nil, err
	}
	f.objs[c.Name] = c
	f.created = append(f.created, c.Name)
	return c.DeepCopy(), nil
}

// decideLocked applies the approver's decision to a request not decided yet.
func (f *fakeCSRs) decideLocked(c *certificatesv1.CertificateSigningRequest) error {
	if len(c.Status.Conditions) > 0 {
		return nil
	}
	switch f.decision {
	case "approve":
		cert, err := f.ca.sign(c.Spec.Request, f.clock.Now(), f.life)
		if err != nil {
			return err
		}
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: "True"}}
		c.Status.Certificate = cert
	case "deny":
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateDenied, Status: "True", Reason: "NotThisNode", Message: "no"}}
	}
	return nil
}

func (f *fakeCSRs) Get(_ context.Context, name string, _ metav1.GetOptions) (*certificatesv1.CertificateSigningRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.objs[name]; ok {
		return c.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "certificatesigningrequests"}, name)
}

func (f *fakeCSRs) List(_ context.Context, opts metav1.ListOptions) (*certificatesv1.CertificateSigningRequestList, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := &certificatesv1.CertificateSigningRequestList{}
	for name, c := range f.objs {
		if opts.FieldSelector == "metadata.name="+name {
			if err := f.decideLocked(c); err != nil {
				return nil, err
			}
			l.Items = append(l.Items, *c.DeepCopy())
		}
	}
	return l, nil
}

// Watch never delivers: the fake decides at creation, so List already has the answer, except
// for pending requests, which stay pending until the caller's context ends.
func (f *fakeCSRs) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}

func (f *fakeCSRs) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.created...)
}
