package certificates

import (
	"context"
	"crypto/x509"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/utils/clock"
)

func newTestManager(t *testing.T, csrs *fakeCSRs, onRotate func(), reg *prometheus.Registry) *Manager {
	t.Helper()
	m, err := NewManager(ManagerConfig{
		Name: Client, Signer: certificatesv1.KubeAPIServerClientKubeletSignerName, Usages: ClientUsages,
		Template: func() *x509.CertificateRequest { return &x509.CertificateRequest{Subject: NodeSubject("n1")} },
		Store:    NewStore(t.TempDir(), ClientPair, clock.RealClock{}),
		Clock:    clock.RealClock{}, Jitter: func() float64 { return 0.5 }, // 80 % of the life
		OnRotate: onRotate, Metrics: NewMetrics(reg),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The manager requests a certificate at once when it has none, then again at 80 % of each
// certificate's life (the jitter fixed at the middle), and calls OnRotate each time.
func TestManagerRotatesAtItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		csrs := newFakeCSRs(newTestCA(t), clock.RealClock{}, 10*time.Minute)
		var rotations atomic.Int32
		reg := prometheus.NewRegistry()
		m := newTestManager(t, csrs, func() { rotations.Add(1) }, reg)
		m.cfg.Metrics.WatchTTL(Client, m)
		if m.Current() != nil {
			t.Fatal("a certificate before the first request")
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { m.Run(ctx, csrs); close(done) }()
		synctest.Wait()
		first := m.Current()
		if first == nil || rotations.Load() != 1 || len(csrs.requests()) != 1 {
			t.Fatalf("after start: certificate %v, %d rotations, requests %v", first != nil, rotations.Load(), csrs.requests())
		}
		if first.Leaf.Subject.CommonName != "system:node:n1" {
			t.Errorf("subject %q", first.Leaf.Subject.CommonName)
		}
		if got := metricValue(t, reg, "kubelet_certificate_manager_client_ttl_seconds"); got != 600 {
			t.Errorf("ttl gauge = %v, want 600", got)
		}
		time.Sleep(8*time.Minute - time.Second)
		synctest.Wait()
		if rotations.Load() != 1 {
			t.Fatalf("rotated before 80 %% of the life: %d rotations", rotations.Load())
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if rotations.Load() != 2 || m.Current() == first {
			t.Fatalf("not rotated at 80 %% of the life: %d rotations", rotations.Load())
		}
		cancel()
		<-done
	})
}

// A denied request is an error counted in the renewal error metric, retried with upstream's
// back-off (2 s, 4 s, ...), and the certificate in use stays until one is issued.
func TestManagerDeniedRetriesWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		csrs := newFakeCSRs(newTestCA(t), clock.RealClock{}, 10*time.Minute)
		csrs.decision = "deny"
		reg := prometheus.NewRegistry()
		m := newTestManager(t, csrs, nil, reg)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { m.Run(ctx, csrs); close(done) }()
		synctest.Wait()
		time.Sleep(2*time.Second + 4*time.Second + time.Millisecond)
		synctest.Wait()
		if n := len(csrs.requests()); n != 3 {
			t.Errorf("%d requests after 6 s, want 3 (at 0, 2 s, 6 s)", n)
		}
		if got := metricValue(t, reg, "kubelet_certificate_manager_client_expiration_renew_errors"); got != 3 {
			t.Errorf("renew errors = %v, want 3", got)
		}
		if m.Current() != nil {
			t.Error("a certificate from a denied request")
		}
		csrs.mu.Lock()
		csrs.decision = "approve"
		csrs.mu.Unlock()
		time.Sleep(8 * time.Second)
		synctest.Wait()
		if m.Current() == nil {
			t.Error("no certificate after the approver came back")
		}
		cancel()
		<-done
	})
}

// A stored certificate is the current one after a restart; an expired one is not served.
func TestManagerLoadsStoreAndHidesExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ca := newTestCA(t)
		dir := t.TempDir()
		store := NewStore(dir, ClientPair, clock.RealClock{})
		certPEM, keyPEM := issue(t, ca, time.Now(), time.Minute)
		if _, err := store.Update(certPEM, keyPEM); err != nil {
			t.Fatal(err)
		}
		m, err := NewManager(ManagerConfig{Name: Client, Signer: "s", Store: store, Clock: clock.RealClock{},
			Template: func() *x509.CertificateRequest { return &x509.CertificateRequest{Subject: NodeSubject("n1")} }}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if m.Current() == nil {
			t.Fatal("the stored certificate is not current")
		}
		time.Sleep(time.Minute + time.Second)
		if m.Current() != nil {
			t.Error("an expired certificate is served")
		}
		if _, err := m.GetCertificate(nil); err == nil || !strings.Contains(err.Error(), "kubectl certificate approve") {
			t.Errorf("GetCertificate without a certificate: %v", err)
		}
	})
}

// metricValue is the value of the one gauge or counter named name in reg.
func metricValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			m := mf.GetMetric()[0]
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
