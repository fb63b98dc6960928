package apiobjects

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// Token timings, as upstream's token manager.
const (
	// defaultTokenExpirationSeconds is the lifetime requested when the projection sets none (the
	// API's default for serviceAccountToken.expirationSeconds).
	defaultTokenExpirationSeconds = 3600
	// maxTokenTTL: a token older than this is refreshed whatever its lifetime.
	maxTokenTTL = 24 * time.Hour
	// maxTokenJitter spreads the refreshes of tokens requested together.
	maxTokenJitter = 10 * time.Second
	tokenGCPeriod  = time.Minute
)

// GetServiceAccountToken returns a token of the pod's service account for a projected
// serviceAccountToken source, from the TokenRequest API: bound to the pod, for the projection's
// audience (none: the API server's default) and lifetime (default 3600 s). A cached token is
// reused until it is older than 80% of its lifetime or 24 hours; when the refresh then fails,
// the cached token is returned while it is still valid, as upstream.
func (m *Manager) GetServiceAccountToken(pod *v1.Pod, p *v1.ServiceAccountTokenProjection) (string, error) {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		return "", fmt.Errorf("pod %s has no serviceAccountName: cannot request a token for its projected volume", klog.KObj(pod))
	}
	req := tokenRequest(pod, p)
	key := tokenKey(sa, pod.Namespace, req)
	cached := m.cachedToken(key)
	now := m.cfg.Clock.Now()
	if cached != nil && !requiresRefresh(now, cached, m.jitter()) {
		return cached.Status.Token, nil
	}
	ctx, cancel := context.WithTimeout(m.ctx, m.cfg.RequestTimeout)
	defer cancel()
	got, err := m.cfg.Client.ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		switch {
		case cached == nil:
			return "", fmt.Errorf("failed to fetch token of service account %s/%s for pod %s: %w", pod.Namespace, sa, klog.KObj(pod), err)
		case expired(now, cached):
			return "", fmt.Errorf("token %s expired and refresh failed: %w", key, err)
		}
		klog.ErrorS(err, "Couldn't refresh a service account token; using the cached one until it expires",
			"pod", klog.KObj(pod), "podUID", pod.UID, "serviceAccount", sa, "cacheKey", key, "expires", cached.Status.ExpirationTimestamp)
		return cached.Status.Token, nil
	}
	if got.Spec.ExpirationSeconds == nil { // an API server that does not echo it: what was asked
		got.Spec.ExpirationSeconds = req.Spec.ExpirationSeconds
	}
	m.tokensMu.Lock()
	m.tokens[key] = cachedToken{tr: got, podUID: pod.UID}
	m.tokensMu.Unlock()
	return got.Status.Token, nil
}

// tokenRequest is the TokenRequest for a projection, as upstream's projected volume builds it.
func tokenRequest(pod *v1.Pod, p *v1.ServiceAccountTokenProjection) *authenticationv1.TokenRequest {
	var audiences []string
	if p.Audience != "" {
		audiences = []string{p.Audience}
	}
	exp := p.ExpirationSeconds
	if exp == nil {
		exp = ptr.To[int64](defaultTokenExpirationSeconds)
	}
	return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences:         audiences,
		ExpirationSeconds: ptr.To(*exp),
		BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID},
	}}
}

// tokenKey is upstream's cache key: service account, namespace, audiences, lifetime and bound
// object. It holds nothing confidential and may be logged.
func tokenKey(sa, namespace string, tr *authenticationv1.TokenRequest) string {
	var exp int64
	if tr.Spec.ExpirationSeconds != nil {
		exp = *tr.Spec.ExpirationSeconds
	}
	var ref authenticationv1.BoundObjectReference
	if tr.Spec.BoundObjectRef != nil {
		ref = *tr.Spec.BoundObjectRef
	}
	return fmt.Sprintf("%q/%q/%#v/%#v/%#v/%q", sa, namespace, tr.Spec.Audiences, exp, ref, tr.UID)
}

// requiresRefresh is upstream's: the token is older than 24 hours, or within 20% of its
// lifetime of expiring, each moved earlier by jitter.
func requiresRefresh(now time.Time, tr *authenticationv1.TokenRequest, jitter time.Duration) bool {
	if tr.Spec.ExpirationSeconds == nil {
		return false
	}
	exp := tr.Status.ExpirationTimestamp.Time
	lifetime := time.Duration(*tr.Spec.ExpirationSeconds) * time.Second
	issued := exp.Add(-lifetime)
	if now.After(issued.Add(maxTokenTTL - jitter)) {
		return true
	}
	return now.After(exp.Add(-lifetime*20/100 - jitter))
}

func expired(now time.Time, tr *authenticationv1.TokenRequest) bool {
	return now.After(tr.Status.ExpirationTimestamp.Time)
}

// cachedToken is a TokenRequest's response and the pod it was requested for.
type cachedToken struct {
	tr     *authenticationv1.TokenRequest
	podUID types.UID
}

func (m *Manager) cachedToken(key string) *authenticationv1.TokenRequest {
	m.tokensMu.Lock()
	defer m.tokensMu.Unlock()
	return m.tokens[key].tr
}

// dropPodTokens forgets the tokens bound to the pod.
func (m *Manager) dropPodTokens(uid types.UID) {
	m.tokensMu.Lock()
	defer m.tokensMu.Unlock()
	for k, t := range m.tokens {
		if t.podUID == uid {
			delete(m.tokens, k)
		}
	}
}

// dropExpiredTokens forgets the tokens that expired.
func (m *Manager) dropExpiredTokens() {
	now := m.cfg.Clock.Now()
	m.tokensMu.Lock()
	defer m.tokensMu.Unlock()
	for k, t := range m.tokens {
		if expired(now, t.tr) {
			delete(m.tokens, k)
		}
	}
}
