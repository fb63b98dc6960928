package kubeletauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	certutil "k8s.io/client-go/util/cert"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// reviews is a fake API server answering TokenReviews (token "good" is alice) and
// SubjectAccessReviews (alice may get nodes/proxy), counting the calls.
type reviews struct {
	client               *fake.Clientset
	tokenCalls, sarCalls atomic.Int32
	failTokens, failSARs atomic.Int32 // calls to answer with an internal error first
}

func newReviews() *reviews {
	r := &reviews{client: fake.NewClientset()}
	r.client.PrependReactor("create", "tokenreviews", func(a clienttesting.Action) (bool, runtime.Object, error) {
		r.tokenCalls.Add(1)
		if r.failTokens.Add(-1) >= 0 {
			return true, nil, apierrors.NewInternalError(context.DeadlineExceeded)
		}
		tr := a.(clienttesting.CreateAction).GetObject().(*authenticationv1.TokenReview).DeepCopy()
		switch tr.Spec.Token {
		case "good":
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{
				Username: "alice", UID: "u1", Groups: []string{"devs"}, Extra: map[string]authenticationv1.ExtraValue{"k": {"v"}}}}
		case "expired":
			tr.Status = authenticationv1.TokenReviewStatus{Error: "token expired"}
		}
		return true, tr, nil
	})
	r.client.PrependReactor("create", "subjectaccessreviews", func(a clienttesting.Action) (bool, runtime.Object, error) {
		r.sarCalls.Add(1)
		if r.failSARs.Add(-1) >= 0 {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "subjectaccessreviews"}, "", context.Canceled)
		}
		sar := a.(clienttesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview).DeepCopy()
		ra := sar.Spec.ResourceAttributes
		switch {
		case sar.Spec.User == "alice" && ra != nil && ra.Resource == "nodes" && ra.Subresource == "proxy":
			sar.Status.Allowed = true
		case sar.Spec.User == "mallory":
			sar.Status.Denied, sar.Status.Reason = true, "banned"
		}
		return true, sar, nil
	})
	return r
}

func (r *reviews) deps(clk clock.WithTicker) Deps {
	return Deps{TokenReviews: r.client.AuthenticationV1().TokenReviews(), SubjectAccessReviews: r.client.AuthorizationV1().SubjectAccessReviews(), Clock: clk}
}

func webhookConfig(anonymous bool) (kubeletconfigv1beta1.KubeletAuthentication, kubeletconfigv1beta1.KubeletAuthorization) {
	return kubeletconfigv1beta1.KubeletAuthentication{
			Anonymous: kubeletconfigv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(anonymous)},
			Webhook: kubeletconfigv1beta1.KubeletWebhookAuthentication{Enabled: ptr.To(true),
				CacheTTL: metav1.Duration{Duration: 2 * time.Minute}},
		}, kubeletconfigv1beta1.KubeletAuthorization{Mode: kubeletconfigv1beta1.KubeletAuthorizationModeWebhook,
			Webhook: kubeletconfigv1beta1.KubeletWebhookAuthorization{CacheAuthorizedTTL: metav1.Duration{Duration: 5 * time.Minute},
				CacheUnauthorizedTTL: metav1.Duration{Duration: 30 * time.Second}}}
}

func bearer(token string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "https://node:10250/pods", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

func TestBearerTokensAreReviewedAndCached(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rv := newReviews()
		authn, authz := webhookConfig(false)
		auth, err := BuildAuth(rv.deps(clock.RealClock{}), authn, authz)
		if err != nil {
			t.Fatal(err)
		}
		resp, ok, err := auth.Authenticator.AuthenticateRequest(bearer("good"))
		if err != nil || !ok {
			t.Fatalf("good token: ok=%v err=%v", ok, err)
		}
		u := resp.User
		if u.GetName() != "alice" || u.GetUID() != "u1" || len(u.GetExtra()["k"]) != 1 {
			t.Errorf("user = %+v", u)
		}
		if groups := u.GetGroups(); len(groups) != 2 || groups[0] != "devs" || groups[1] != user.AllAuthenticated {
			t.Errorf("groups = %v, want devs and system:authenticated", groups)
		}
		if _, ok, _ := auth.Authenticator.AuthenticateRequest(bearer("good")); !ok || rv.tokenCalls.Load() != 1 {
			t.Errorf("second request: ok=%v, %d TokenReviews, want 1 (cached)", ok, rv.tokenCalls.Load())
		}
		time.Sleep(2*time.Minute + time.Second)
		auth.Authenticator.AuthenticateRequest(bearer("good"))
		if rv.tokenCalls.Load() != 2 {
			t.Errorf("after the cache TTL: %d TokenReviews, want 2", rv.tokenCalls.Load())
		}
		if _, ok, err := auth.Authenticator.AuthenticateRequest(bearer("expired")); ok || err == nil || err.Error() != "token expired" {
			t.Errorf("expired token: ok=%v err=%v, want the review's error", ok, err)
		}
		if _, ok, err := auth.Authenticator.AuthenticateRequest(bearer("")); ok || err != nil {
			t.Errorf("no credentials, anonymous disabled: ok=%v err=%v, want refused", ok, err)
		}
	})
}

func TestTokenReviewRetriesInternalErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rv := newReviews()
		rv.failTokens.Store(2)
		authn, authz := webhookConfig(false)
		auth, err := BuildAuth(rv.deps(clock.RealClock{}), authn, authz)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := auth.Authenticator.AuthenticateRequest(bearer("good")); !ok || err != nil {
			t.Fatalf("ok=%v err=%v, want authenticated after retries", ok, err)
		}
		if n := rv.tokenCalls.Load(); n != 3 {
			t.Errorf("%d TokenReviews, want 3 (two internal errors retried)", n)
		}
	})
}

func TestAnonymousRequests(t *testing.T) {
	rv := newReviews()
	authn, authz := webhookConfig(true)
	auth, err := BuildAuth(rv.deps(clock.RealClock{}), authn, authz)
	if err != nil {
		t.Fatal(err)
	}
	resp, ok, err := auth.Authenticator.AuthenticateRequest(bearer(""))
	if !ok || err != nil || resp.User.GetName() != user.Anonymous {
		t.Fatalf("ok=%v err=%v resp=%+v, want system:anonymous", ok, err, resp)
	}
}

func TestSubjectAccessReviews(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rv := newReviews()
		authn, authz := webhookConfig(false)
		auth, err := BuildAuth(rv.deps(clock.RealClock{}), authn, authz)
		if err != nil {
			t.Fatal(err)
		}
		attrs := func(name, sub string) authorizer.AttributesRecord {
			return authorizer.AttributesRecord{User: &user.DefaultInfo{Name: name}, Verb: "get", Resource: "nodes",
				Subresource: sub, Name: "node-a", ResourceRequest: true}
		}
		ctx := context.Background()
		for _, tc := range []struct {
			name, user, sub string
			want            authorizer.Decision
			reason          string
		}{
			{"allowed", "alice", "proxy", authorizer.DecisionAllow, ""},
			{"no opinion", "alice", "stats", authorizer.DecisionNoOpinion, ""},
			{"denied", "mallory", "proxy", authorizer.DecisionDeny, "banned"},
		} {
			got, reason, err := auth.Authorizer.Authorize(ctx, attrs(tc.user, tc.sub))
			if err != nil || got != tc.want || reason != tc.reason {
				t.Errorf("%s: decision %v %q err %v, want %v %q", tc.name, got, reason, err, tc.want, tc.reason)
			}
		}
		calls := rv.sarCalls.Load()
		auth.Authorizer.Authorize(ctx, attrs("alice", "proxy"))
		auth.Authorizer.Authorize(ctx, attrs("alice", "stats"))
		if n := rv.sarCalls.Load(); n != calls {
			t.Errorf("decisions asked again within their TTLs: %d reviews, want %d", n, calls)
		}
		time.Sleep(31 * time.Second) // past the unauthorized TTL, within the authorized one
		auth.Authorizer.Authorize(ctx, attrs("alice", "proxy"))
		auth.Authorizer.Authorize(ctx, attrs("alice", "stats"))
		if n := rv.sarCalls.Load(); n != calls+1 {
			t.Errorf("after 31s: %d reviews, want %d (only the unauthorized decision expired)", n, calls+1)
		}
		rv.failSARs.Store(1)
		if got, _, err := auth.Authorizer.Authorize(ctx, attrs("bob", "proxy")); got != authorizer.DecisionNoOpinion || err == nil {
			t.Errorf("review failing: %v %v, want no opinion with the error", got, err)
		}
	})
}

func TestBuildAuthRefusesBadConfiguration(t *testing.T) {
	rv := newReviews()
	authn, authz := webhookConfig(false)
	standalone := Deps{Clock: clock.RealClock{}}
	if _, err := BuildAuth(standalone, authn, authz); err == nil {
		t.Error("webhook authentication without the API server: no error")
	}
	authz.Mode = "Sometimes"
	if _, err := BuildAuth(rv.deps(clock.RealClock{}), authn, authz); err == nil {
		t.Error("unknown authorization mode: no error")
	}
	none := kubeletconfigv1beta1.KubeletAuthentication{Anonymous: kubeletconfigv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(false)}}
	if _, err := BuildAuth(standalone, none, kubeletconfigv1beta1.KubeletAuthorization{Mode: kubeletconfigv1beta1.KubeletAuthorizationModeAlwaysAllow}); err == nil {
		t.Error("no authentication method: no error")
	}
	missing := kubeletconfigv1beta1.KubeletAuthentication{X509: kubeletconfigv1beta1.KubeletX509Authentication{ClientCAFile: "/nonexistent/ca.crt"}}
	if _, err := BuildAuth(standalone, missing, kubeletconfigv1beta1.KubeletAuthorization{Mode: kubeletconfigv1beta1.KubeletAuthorizationModeAlwaysAllow}); err == nil {
		t.Error("missing client CA file: no error")
	}
}

// newCA returns a self-signed CA and a client certificate it signed for commonName.
func newCA(t *testing.T, commonName string) (caPEM []byte, client *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "test-ca"}, key)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: commonName, Organization: []string{"ops"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if client, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), client
}

func withClientCert(c *x509.Certificate) *http.Request {
	r := bearer("")
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{c}}
	return r
}

func TestClientCertificatesAndCAReload(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ca.crt")
	synctest.Test(t, func(t *testing.T) {
		// Made in the bubble: its clock is the certificates' validity.
		caA, certA := newCA(t, "admin")
		caB, certB := newCA(t, "monitor")
		if err := os.WriteFile(file, caA, 0o600); err != nil {
			t.Fatal(err)
		}
		authn := kubeletconfigv1beta1.KubeletAuthentication{X509: kubeletconfigv1beta1.KubeletX509Authentication{ClientCAFile: file}}
		auth, err := BuildAuth(Deps{Clock: clock.RealClock{}}, authn, kubeletconfigv1beta1.KubeletAuthorization{Mode: kubeletconfigv1beta1.KubeletAuthorizationModeAlwaysAllow})
		if err != nil {
			t.Fatal(err)
		}
		resp, ok, err := auth.Authenticator.AuthenticateRequest(withClientCert(certA))
		if !ok || err != nil || resp.User.GetName() != "admin" || resp.User.GetGroups()[0] != "ops" {
			t.Fatalf("certificate of the CA: ok=%v err=%v resp=%+v, want admin in ops", ok, err, resp)
		}
		if _, ok, _ := auth.Authenticator.AuthenticateRequest(withClientCert(certB)); ok {
			t.Fatal("certificate of another CA accepted")
		}

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go auth.Run(ctx)
		if err := os.WriteFile(file, []byte("not a certificate"), 0o600); err != nil {
			t.Fatal(err)
		}
		time.Sleep(clientCAReloadPeriod)
		synctest.Wait()
		if _, ok, _ := auth.Authenticator.AuthenticateRequest(withClientCert(certA)); !ok {
			t.Error("an invalid bundle replaced the previous one")
		}
		if err := os.WriteFile(file, caB, 0o600); err != nil {
			t.Fatal(err)
		}
		time.Sleep(clientCAReloadPeriod)
		synctest.Wait()
		if _, ok, _ := auth.Authenticator.AuthenticateRequest(withClientCert(certB)); !ok {
			t.Error("the new bundle was not loaded within a reload period")
		}
		if _, ok, _ := auth.Authenticator.AuthenticateRequest(withClientCert(certA)); ok {
			t.Error("the old bundle still accepted after the reload")
		}
	})
}

func TestCredentialsThatFailAreNotAnonymous(t *testing.T) {
	rv := newReviews()
	authn, authz := webhookConfig(true)
	auth, err := BuildAuth(rv.deps(clock.RealClock{}), authn, authz)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := auth.Authenticator.AuthenticateRequest(bearer("unknown")); ok || err == nil {
		t.Errorf("invalid token with anonymous enabled: ok=%v err=%v, want refused with an error", ok, err)
	}
	r := bearer("good")
	if _, ok, _ := auth.Authenticator.AuthenticateRequest(r); !ok || r.Header.Get("Authorization") != "" {
		t.Errorf("accepted token: ok=%v, Authorization header %q, want removed", ok, r.Header.Get("Authorization"))
	}
}

func TestWebSocketSubprotocolToken(t *testing.T) {
	rv := newReviews()
	authn, authz := webhookConfig(false)
	auth, err := BuildAuth(rv.deps(clock.RealClock{}), authn, authz)
	if err != nil {
		t.Fatal(err)
	}
	ws := func(protocols string) *http.Request {
		r := bearer("")
		r.Header.Set("Connection", "Upgrade")
		r.Header.Set("Upgrade", "websocket")
		r.Header.Set("Sec-WebSocket-Protocol", protocols)
		return r
	}
	token := "base64url.bearer.authorization.k8s.io." + base64.RawURLEncoding.EncodeToString([]byte("good"))
	r := ws(token + ", v5.channel.k8s.io")
	resp, ok, err := auth.Authenticator.AuthenticateRequest(r)
	if !ok || err != nil || resp.User.GetName() != "alice" {
		t.Fatalf("token subprotocol: ok=%v err=%v", ok, err)
	}
	if got := r.Header.Get("Sec-WebSocket-Protocol"); got != "v5.channel.k8s.io" {
		t.Errorf("protocols passed on = %q, want the token removed", got)
	}
	if _, ok, err := auth.Authenticator.AuthenticateRequest(ws(token)); ok || err == nil {
		t.Errorf("token without another subprotocol: ok=%v err=%v, want refused", ok, err)
	}
}

func TestCertificateUser(t *testing.T) {
	withUID := func(uids ...string) *x509.Certificate {
		c := &x509.Certificate{Raw: []byte("der"), Subject: pkix.Name{CommonName: "system:node:a", Organization: []string{"system:nodes"}}}
		for _, u := range uids {
			c.Subject.Names = append(c.Subject.Names, pkix.AttributeTypeAndValue{Type: uidOID, Value: u})
		}
		return c
	}
	resp, ok, err := certificateUser(withUID("1234"))
	if !ok || err != nil || resp.User.GetName() != "system:node:a" || resp.User.GetUID() != "1234" ||
		resp.User.GetGroups()[0] != "system:nodes" || len(resp.User.GetExtra()[user.CredentialIDKey]) != 1 {
		t.Errorf("user = %+v ok=%v err=%v", resp, ok, err)
	}
	if _, _, err := certificateUser(withUID("1", "2")); err == nil {
		t.Error("two UIDs: no error")
	}
	if _, ok, _ := certificateUser(&x509.Certificate{}); ok {
		t.Error("no common name: authenticated")
	}
}
