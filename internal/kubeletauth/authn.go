package kubeletauth

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// The request authenticator is k8s.io/apiserver's delegating authenticator as the kubelet
// builds it (authenticatorfactory, v0.37): x509 client certificates, then bearer tokens from
// the Authorization header or a WebSocket subprotocol, checked by a cached token
// authenticator; authenticated users get system:authenticated; without credentials, anonymous
// when enabled. Its request packages link the API server's feature gates, audit and
// authentication configuration API, so their small parts are written here.

var (
	errInvalidBearerToken = errors.New("invalid bearer token")
	// uidOID is the X.509 subject attribute carrying the user's UID (RFC 4519 uid).
	uidOID = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}
	// protocolHeader is where a WebSocket client may carry its bearer token.
	protocolHeader = textproto.CanonicalMIMEHeaderKey("Sec-WebSocket-Protocol")
)

// bearerProtocolPrefix prefixes the base64url bearer token a WebSocket client passes as a
// subprotocol.
const bearerProtocolPrefix = "base64url.bearer.authorization.k8s.io."

// requestAuthenticator authenticates kubelet API requests.
type requestAuthenticator struct {
	ca        *clientCA   // nil: no client certificates
	tokens    *tokenCache // nil: no bearer tokens
	anonymous bool
}

var _ authenticator.Request = (*requestAuthenticator)(nil)

// AuthenticateRequest tries each method in upstream's order. An error from one that
// recognised credentials it could not accept (an unknown CA, an invalid token) refuses the
// request, even with anonymous access enabled, as upstream's fail-on-error union.
func (a *requestAuthenticator) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	var errs []error
	methods := []func(*http.Request) (*authenticator.Response, bool, error){}
	if a.ca != nil {
		methods = append(methods, a.clientCertificate)
	}
	if a.tokens != nil {
		methods = append(methods, a.bearerToken, a.webSocketToken)
	}
	for _, m := range methods {
		resp, ok, err := m(r)
		if ok {
			return withAuthenticatedGroup(resp), true, nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, false, errors.Join(errs...)
	}
	if a.anonymous {
		return &authenticator.Response{User: &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}}, true, nil
	}
	return nil, false, nil
}

// withAuthenticatedGroup adds system:authenticated to the user's groups.
func withAuthenticatedGroup(resp *authenticator.Response) *authenticator.Response {
	u := resp.User
	if slices.Contains(u.GetGroups(), user.AllAuthenticated) {
		return resp
	}
	out := *resp
	out.User = &user.DefaultInfo{Name: u.GetName(), UID: u.GetUID(), Extra: u.GetExtra(),
		Groups: append(slices.Clone(u.GetGroups()), user.AllAuthenticated)}
	return &out
}

// clientCertificate authenticates a TLS client certificate the client CA signed: the user is
// the subject's common name, its groups the organizations, its UID the uid attribute.
func (a *requestAuthenticator) clientCertificate(r *http.Request) (*authenticator.Response, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	opts, _ := a.ca.VerifyOptions()
	peer := r.TLS.PeerCertificates
	if opts.Intermediates == nil && len(peer) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, c := range peer[1:] {
			opts.Intermediates.AddCert(c)
		}
	}
	if _, err := peer[0].Verify(opts); err != nil {
		return nil, false, fmt.Errorf("verifying certificate SN=%s failed: %w", peer[0].SerialNumber, err)
	}
	return certificateUser(peer[0])
}

// certificateUser is upstream's CommonNameUserConversion.
func certificateUser(c *x509.Certificate) (*authenticator.Response, bool, error) {
	if c.Subject.CommonName == "" {
		return nil, false, nil
	}
	var uids []string
	for _, name := range c.Subject.Names {
		if !name.Type.Equal(uidOID) {
			continue
		}
		uid, ok := name.Value.(string)
		if !ok {
			return nil, false, errors.New("unable to parse UID into a string")
		}
		uids = append(uids, uid)
	}
	var uid string
	switch {
	case len(uids) > 1:
		return nil, false, fmt.Errorf("expected 1 UID, but found multiple: %v", uids)
	case len(uids) == 1 && uids[0] == "":
		return nil, false, errors.New("UID cannot be an empty string")
	case len(uids) == 1:
		uid = uids[0]
	}
	fp := sha256.Sum256(c.Raw)
	return &authenticator.Response{User: &user.DefaultInfo{Name: c.Subject.CommonName, UID: uid,
		Groups: c.Subject.Organization,
		Extra:  map[string][]string{user.CredentialIDKey: {"X509SHA256=" + hex.EncodeToString(fp[:])}}}}, true, nil
}

// bearerToken authenticates "Authorization: Bearer <token>", and removes the header once the
// token is accepted (it is not passed on).
func (a *requestAuthenticator) bearerToken(r *http.Request) (*authenticator.Response, bool, error) {
	parts := strings.SplitN(strings.TrimSpace(r.Header.Get("Authorization")), " ", 3)
	if len(parts) < 2 || strings.ToLower(parts[0]) != "bearer" || parts[1] == "" {
		return nil, false, nil
	}
	resp, ok, err := a.tokens.AuthenticateToken(r.Context(), parts[1])
	if ok {
		r.Header.Del("Authorization")
	}
	if !ok && err == nil {
		err = errInvalidBearerToken
	}
	return resp, ok, err
}

// webSocketToken authenticates the token a WebSocket client passes as the subprotocol
// base64url.bearer.authorization.k8s.io.<token>, which is removed once accepted.
func (a *requestAuthenticator) webSocketToken(r *http.Request) (*authenticator.Response, bool, error) {
	if !wsstream.IsWebSocketRequest(r) {
		return nil, false, nil
	}
	var token string
	var others []string
	for _, h := range r.Header[protocolHeader] {
		for _, p := range strings.Split(h, ",") {
			p = strings.TrimSpace(p)
			if !strings.HasPrefix(p, bearerProtocolPrefix) {
				others = append(others, p)
				continue
			}
			if token != "" {
				return nil, false, errors.New("multiple base64.bearer.authorization tokens specified")
			}
			decoded, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(p, bearerProtocolPrefix))
			if err != nil {
				return nil, false, errors.New("invalid base64.bearer.authorization token encoding")
			}
			if !utf8.Valid(decoded) {
				return nil, false, errors.New("invalid base64.bearer.authorization token")
			}
			token = string(decoded)
		}
	}
	if token == "" {
		return nil, false, nil
	}
	if len(others) == 0 {
		return nil, false, errors.New("missing additional subprotocol")
	}
	resp, ok, err := a.tokens.AuthenticateToken(r.Context(), token)
	if ok {
		r.Header.Set(protocolHeader, strings.Join(others, ","))
	}
	if !ok && err == nil {
		err = errInvalidBearerToken
	}
	return resp, ok, err
}

// tokenCache remembers token verdicts for ttl (both accepted and refused, never errors), as
// k8s.io/apiserver's cached token authenticator as the kubelet configures it. Tokens are
// keyed by their SHA-256.
type tokenCache struct {
	tokens authenticator.Token
	ttl    time.Duration
	cache  *utilcache.LRUExpireCache
}

type tokenVerdict struct {
	resp *authenticator.Response
	ok   bool
}

func newTokenCache(tokens authenticator.Token, ttl time.Duration) *tokenCache {
	return &tokenCache{tokens: tokens, ttl: ttl, cache: utilcache.NewLRUExpireCache(4096)}
}

func (c *tokenCache) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	sum := sha256.Sum256([]byte(token))
	key := string(sum[:])
	if v, ok := c.cache.Get(key); ok {
		verdict := v.(tokenVerdict)
		return verdict.resp, verdict.ok, nil
	}
	resp, ok, err := c.tokens.AuthenticateToken(ctx, token)
	if err == nil && c.ttl > 0 {
		c.cache.Add(key, tokenVerdict{resp: resp, ok: ok}, c.ttl)
	}
	return resp, ok, err
}
