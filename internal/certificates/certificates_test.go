package certificates

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testclock "k8s.io/utils/clock/testing"
)

func TestRotationDeadline(t *testing.T) {
	nbf := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := nbf.Add(time.Hour)
	cert := &x509.Certificate{Subject: NodeSubject("n1"), NotBefore: nbf, NotAfter: nbf.Add(100 * time.Hour),
		DNSNames: []string{"n1"}, IPAddresses: []net.IP{net.ParseIP("10.0.0.1")}}
	tmpl := &x509.CertificateRequest{Subject: NodeSubject("n1"), DNSNames: []string{"n1"}, IPAddresses: []net.IP{net.ParseIP("10.0.0.1")}}
	other := func(f func(*x509.CertificateRequest)) *x509.CertificateRequest { c := *tmpl; f(&c); return &c }
	for _, tc := range []struct {
		name     string
		cert     *x509.Certificate
		tmpl     *x509.CertificateRequest
		fraction float64
		want     time.Time
	}{
		{"no certificate: now", nil, tmpl, 0.7, now},
		{"70 % of its life", cert, tmpl, 0.7, nbf.Add(70 * time.Hour)},
		{"90 % of its life", cert, tmpl, 0.9, nbf.Add(90 * time.Hour)},
		{"another common name: now", cert, other(func(c *x509.CertificateRequest) { c.Subject.CommonName = "system:node:n2" }), 0.8, now},
		{"another organization: now", cert, other(func(c *x509.CertificateRequest) { c.Subject.Organization = []string{"x"} }), 0.8, now},
		{"a new IP: now", cert, other(func(c *x509.CertificateRequest) { c.IPAddresses = append(c.IPAddresses, net.ParseIP("10.0.0.2")) }), 0.8, now},
		{"a DNS name less: now", cert, other(func(c *x509.CertificateRequest) { c.DNSNames = nil }), 0.8, now},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RotationDeadline(now, tc.cert, tc.tmpl, tc.fraction); got.Sub(tc.want).Abs() > time.Millisecond {
				t.Errorf("deadline = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	want := []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, 32 * time.Second, 32 * time.Second}
	for i, w := range want {
		if got := backoff(i + 1); got != w {
			t.Errorf("backoff(%d) = %s, want %s", i+1, got, w)
		}
	}
}

func TestResult(t *testing.T) {
	cond := func(t certificatesv1.RequestConditionType) certificatesv1.CertificateSigningRequestCondition {
		return certificatesv1.CertificateSigningRequestCondition{Type: t, Reason: "R", Message: "M"}
	}
	csr := func(cert string, conds ...certificatesv1.CertificateSigningRequestCondition) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr-1"},
			Status: certificatesv1.CertificateSigningRequestStatus{Conditions: conds, Certificate: []byte(cert)}}
	}
	for _, tc := range []struct {
		name    string
		csr     *certificatesv1.CertificateSigningRequest
		want    Outcome
		errLike string
	}{
		{"new", csr(""), Pending, ""},
		{"approved, not signed yet", csr("", cond(certificatesv1.CertificateApproved)), Pending, ""},
		{"signed without approval (not trusted)", csr("CERT"), Pending, ""},
		{"approved and signed", csr("CERT", cond(certificatesv1.CertificateApproved)), Issued, ""},
		{"denied", csr("", cond(certificatesv1.CertificateDenied)), Refused, `csr-1 was denied (reason "R", message "M")`},
		{"approved then failed", csr("", cond(certificatesv1.CertificateApproved), cond(certificatesv1.CertificateFailed)), Refused, "failed to be signed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cert, err := Result(tc.csr)
			if got != tc.want {
				t.Fatalf("outcome = %d, want %d", got, tc.want)
			}
			if tc.want == Issued && string(cert) != "CERT" {
				t.Errorf("certificate = %q", cert)
			}
			if tc.errLike == "" && err != nil || tc.errLike != "" && (err == nil || !strings.Contains(err.Error(), tc.errLike)) {
				t.Errorf("err = %v, want one containing %q", err, tc.errLike)
			}
		})
	}
}

func TestDigestedNameIsStable(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	a, _ := digestedName(key.Public(), NodeSubject("n1"), ClientUsages)
	b, _ := digestedName(key.Public(), NodeSubject("n1"), ClientUsages)
	c, _ := digestedName(other.Public(), NodeSubject("n1"), ClientUsages)
	d, _ := digestedName(key.Public(), NodeSubject("n2"), ClientUsages)
	if a != b || !strings.HasPrefix(a, "node-csr-") {
		t.Errorf("names %q and %q for the same request", a, b)
	}
	if a == c || a == d {
		t.Errorf("another key or node gives the same name %q", a)
	}
}

func TestStoreUpdateAndCurrent(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.NewFakeClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	s := NewStore(dir, ClientPair, clk)
	if _, err := s.Current(); err != ErrNoCertificate {
		t.Fatalf("empty store: err = %v, want ErrNoCertificate", err)
	}
	ca := newTestCA(t)
	certPEM, keyPEM := issue(t, ca, clk.Now(), time.Hour)
	if _, err := s.Update(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Second)
	certPEM2, keyPEM2 := issue(t, ca, clk.Now(), time.Hour)
	c2, err := s.Update(certPEM2, keyPEM2)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Current()
	if err != nil {
		t.Fatal(err)
	}
	if got.Leaf.SerialNumber.Cmp(c2.Leaf.SerialNumber) != 0 {
		t.Errorf("current is not the newest pair")
	}
	target, err := os.Readlink(s.CurrentPath())
	if err != nil || target != "kubelet-client-2026-05-01-10-00-01.pem" {
		t.Errorf("current.pem -> %q (%v)", target, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, target)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("pair file mode: %v %v", fi, err)
	}
	if _, err := s.Update([]byte("garbage"), keyPEM); err == nil {
		t.Error("Update accepted a garbage certificate")
	}
	if err := os.WriteFile(filepath.Join(dir, target), []byte("torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Current(); err == nil || err == ErrNoCertificate {
		t.Errorf("corrupt pair: err = %v, want a parse error", err)
	}
}

// issue makes a key and a certificate for node n1 signed by ca.
func issue(t *testing.T, ca *testCA, nbf time.Time, life time.Duration) (certPEM, keyPEM []byte) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	r, err := newRequest(&x509.CertificateRequest{Subject: NodeSubject("n1")}, key, "s", ClientUsages)
	if err != nil {
		t.Fatal(err)
	}
	req, err := ca.sign(pemRequest(r.der), nbf, life)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalECPrivateKey(key)
	return req, pemBlock("EC PRIVATE KEY", der)
}

func pemRequest(der []byte) []byte { return pemBlock("CERTIFICATE REQUEST", der) }
