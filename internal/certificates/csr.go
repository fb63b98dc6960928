package certificates

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// CSRClient is what the node does with CertificateSigningRequests (kubeclient.CSRInterface).
type CSRClient interface {
	Create(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, opts metav1.CreateOptions) (*certificatesv1.CertificateSigningRequest, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*certificatesv1.CertificateSigningRequest, error)
	List(ctx context.Context, opts metav1.ListOptions) (*certificatesv1.CertificateSigningRequestList, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// ErrDenied is wrapped by the error of a request that was denied or failed: asking again with
// the same request cannot succeed.
var ErrDenied = errors.New("certificate signing request denied")

// request is one certificate signing request.
type request struct {
	// name is the CSR's name; empty: the API server generates one from "csr-".
	name   string
	signer string
	usages []certificatesv1.KeyUsage
	// der is the x509 certificate request.
	der []byte
	key crypto.Signer
}

// newRequest makes the certificate request of tmpl, signed with key.
func newRequest(tmpl *x509.CertificateRequest, key crypto.Signer, signer string, usages []certificatesv1.KeyUsage) (request, error) {
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		return request{}, fmt.Errorf("make the certificate request: %w", err)
	}
	return request{signer: signer, usages: usages, der: der, key: key}, nil
}

// create creates the CSR and returns its name and UID. A request with a fixed name that
// already exists is reused when it asks for the same thing with the same key (a node restarted
// while its bootstrap request waited), as upstream.
func create(ctx context.Context, c CSRClient, r request) (string, types.UID, error) {
	obj := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: r.name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: r.der}),
			Usages:     r.usages,
			SignerName: r.signer,
		},
	}
	if r.name == "" {
		obj.GenerateName = "csr-"
	}
	got, err := c.Create(ctx, obj, metav1.CreateOptions{})
	switch {
	case err == nil:
		return got.Name, got.UID, nil
	case apierrors.IsAlreadyExists(err) && r.name != "":
		got, err := c.Get(ctx, r.name, metav1.GetOptions{})
		if err != nil {
			return "", "", fmt.Errorf("get the existing certificate signing request %s: %w", r.name, err)
		}
		if err := sameRequest(got, r); err != nil {
			return "", "", fmt.Errorf("certificate signing request %s exists and differs from this node's: %w", r.name, err)
		}
		klog.FromContext(ctx).Info("Reusing this node's certificate signing request", "csr", r.name)
		return got.Name, got.UID, nil
	default:
		return "", "", createError(err)
	}
}

// createError says what an operator does when the API server refuses the request.
func createError(err error) error {
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("create a certificate signing request: the API server does not accept these credentials (401 Unauthorized): a bootstrap token that is expired, deleted or mistyped; make a new one (kubeadm token create) and put it in the bootstrap kubeconfig: %w", err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("create a certificate signing request: forbidden; bind the bootstrap identity to ClusterRole system:node-bootstrapper: %w", err)
	}
	return fmt.Errorf("create a certificate signing request: %w", err)
}

// sameRequest reports whether existing asks what r asks, with r's key.
func sameRequest(existing *certificatesv1.CertificateSigningRequest, r request) error {
	block, _ := pem.Decode(existing.Spec.Request)
	if block == nil {
		return errors.New("its request is not PEM")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return err
	}
	mine, err := x509.ParseCertificateRequest(r.der)
	if err != nil {
		return err
	}
	if !bytes.Equal(req.RawSubject, mine.RawSubject) {
		return fmt.Errorf("subject %q, not %q", req.Subject, mine.Subject)
	}
	if !publicKeysEqual(req.PublicKey, r.key.Public()) {
		return errors.New("another key")
	}
	if existing.Spec.SignerName != r.signer {
		return fmt.Errorf("signer %q, not %q", existing.Spec.SignerName, r.signer)
	}
	return nil
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	ae, err1 := x509.MarshalPKIXPublicKey(a)
	be, err2 := x509.MarshalPKIXPublicKey(b)
	return err1 == nil && err2 == nil && bytes.Equal(ae, be)
}

// Outcome is where a certificate signing request stands.
type Outcome int

const (
	// Pending: neither issued nor refused yet.
	Pending Outcome = iota
	// Issued: approved, and the certificate is there.
	Issued
	// Refused: denied, or failed to be signed.
	Refused
)

// Result decides where csr stands (pure): its certificate when Issued; when Refused, why.
func Result(csr *certificatesv1.CertificateSigningRequest) (Outcome, []byte, error) {
	approved := false
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateDenied:
			return Refused, nil, fmt.Errorf("%w: %s was denied (reason %q, message %q)", ErrDenied, csr.Name, c.Reason, c.Message)
		case certificatesv1.CertificateFailed:
			return Refused, nil, fmt.Errorf("%w: %s failed to be signed (reason %q, message %q)", ErrDenied, csr.Name, c.Reason, c.Message)
		case certificatesv1.CertificateApproved:
			approved = true
		}
	}
	if approved && len(csr.Status.Certificate) > 0 {
		return Issued, csr.Status.Certificate, nil
	}
	return Pending, nil, nil
}

// wait returns the certificate issued for the CSR name (of UID uid), watching it until it is
// issued, refused, or ctx ends. A watch that closes is started again from a fresh list.
func wait(ctx context.Context, c CSRClient, clk clock.Clock, name string, uid types.UID) ([]byte, error) {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	for {
		list, err := c.List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("waiting for certificate signing request %s: %w", name, ctx.Err())
			}
			klog.FromContext(ctx).V(2).Info("Listing the certificate signing request failed; retrying", "csr", name, "err", err)
			if err := sleep(ctx, clk, waitRetry); err != nil {
				return nil, fmt.Errorf("waiting for certificate signing request %s: %w", name, err)
			}
			continue
		}
		if len(list.Items) == 0 {
			return nil, fmt.Errorf("certificate signing request %s was deleted before it was issued", name)
		}
		if cert, done, err := decide(&list.Items[0], uid); done {
			return cert, err
		}
		w, err := c.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: list.ResourceVersion})
		if err != nil {
			continue
		}
		cert, done, err := watchUntil(ctx, w, uid)
		w.Stop()
		if done {
			return cert, err
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("waiting for certificate signing request %s to be approved and signed: %w", name, ctx.Err())
		}
	}
}

// watchUntil follows w until the request is decided (done) or the watch ends (not done).
func watchUntil(ctx context.Context, w watch.Interface, uid types.UID) (cert []byte, done bool, err error) {
	for {
		select {
		case <-ctx.Done():
			return nil, false, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, false, nil
			}
			switch ev.Type {
			case watch.Deleted:
				return nil, true, errors.New("the certificate signing request was deleted before it was issued")
			case watch.Added, watch.Modified:
				if csr, ok := ev.Object.(*certificatesv1.CertificateSigningRequest); ok {
					if cert, done, err := decide(csr, uid); done {
						return cert, true, err
					}
				}
			}
		}
	}
}

func decide(csr *certificatesv1.CertificateSigningRequest, uid types.UID) ([]byte, bool, error) {
	if csr.UID != uid {
		return nil, true, fmt.Errorf("certificate signing request %s was replaced by another (UID changed)", csr.Name)
	}
	switch outcome, cert, err := Result(csr); outcome {
	case Issued:
		return cert, true, nil
	case Refused:
		return nil, true, err
	}
	return nil, false, nil
}

// digestedName is upstream's name of a bootstrap request: the same key, subject and usages
// give the same name, so a restarted node finds its pending request instead of making another.
func digestedName(pub crypto.PublicKey, subject pkix.Name, usages []certificatesv1.KeyUsage) (string, error) {
	h := sha512.New512_256()
	enc := base64.RawURLEncoding.EncodeToString
	write := func(b []byte) {
		h.Write([]byte(enc(b)))
		h.Write([]byte{'|'})
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	write(der)
	write([]byte(subject.CommonName))
	for _, o := range subject.Organization {
		write([]byte(o))
	}
	for _, u := range usages {
		write([]byte(u))
	}
	return "node-csr-" + enc(h.Sum(nil)), nil
}
