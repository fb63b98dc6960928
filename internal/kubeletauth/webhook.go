package kubeletauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/kubeclient"
)

// The two webhooks are k8s.io/apiserver's webhook token authenticator and webhook authorizer
// (plugin/pkg/authenticator/token/webhook, plugin/pkg/authorizer/webhook, v0.37) as the kubelet
// configures them through the delegating factories, written over the typed clients: those
// packages also carry the generic webhook client, CEL match conditions and OpenTelemetry, about
// 250 packages the kubelet API never runs.

// maxControlledAttrCacheSize is upstream's bound on the size of attributes whose decision is
// cached.
const maxControlledAttrCacheSize = 10000

// tokenReviewer authenticates bearer tokens with TokenReviews (uncached: token/cache wraps it).
type tokenReviewer struct {
	reviews kubeclient.TokenReviewInterface
	backoff wait.Backoff
}

var _ authenticator.Token = (*tokenReviewer)(nil)

// AuthenticateToken is upstream's WebhookTokenAuthenticator.AuthenticateToken without audience
// checks (the kubelet API's requests carry no audiences).
func (t *tokenReviewer) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}
	var result *authenticationv1.TokenReview
	err := withRetry(ctx, t.backoff, func() error {
		var err error
		result, err = t.reviews.Create(ctx, review, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		klog.ErrorS(err, "Failed to make the TokenReview request for a kubelet API client; check that the API server is reachable")
		return nil, false, err
	}
	st := result.Status
	if !st.Authenticated {
		if st.Error != "" {
			return nil, false, errors.New(st.Error)
		}
		return nil, false, nil
	}
	var extra map[string][]string
	if st.User.Extra != nil {
		extra = make(map[string][]string, len(st.User.Extra))
		for k, v := range st.User.Extra {
			extra[k] = v
		}
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: st.User.Username, UID: st.User.UID,
		Groups: st.User.Groups, Extra: extra}}, true, nil
}

// sarAuthorizer authorizes with SubjectAccessReviews, caching allowed decisions for
// allowTTL and the others for denyTTL; an error is no opinion (the request is refused).
type sarAuthorizer struct {
	reviews           kubeclient.SubjectAccessReviewInterface
	backoff           wait.Backoff
	allowTTL, denyTTL time.Duration
	cache             *utilcache.LRUExpireCache
}

var _ Authorizer = (*sarAuthorizer)(nil)

func newSARAuthorizer(reviews kubeclient.SubjectAccessReviewInterface, allowTTL, denyTTL time.Duration) *sarAuthorizer {
	return &sarAuthorizer{reviews: reviews, backoff: webhookRetryBackoff(), allowTTL: allowTTL, denyTTL: denyTTL,
		cache: utilcache.NewLRUExpireCache(8192)}
}

// Authorize is upstream's WebhookAuthorizer.Authorize with the delegating factory's settings
// (decision on error: no opinion).
func (a *sarAuthorizer) Authorize(ctx context.Context, attr authorizer.Attributes) (authorizer.Decision, string, error) {
	review := &authorizationv1.SubjectAccessReview{Spec: sarSpec(attr)}
	key, err := json.Marshal(review.Spec)
	if err != nil {
		return authorizer.DecisionNoOpinion, "", err
	}
	if cached, ok := a.cache.Get(string(key)); ok {
		review.Status = cached.(authorizationv1.SubjectAccessReviewStatus)
	} else {
		var result *authorizationv1.SubjectAccessReview
		err := withRetry(ctx, a.backoff, func() error {
			var err error
			result, err = a.reviews.Create(ctx, review, metav1.CreateOptions{})
			return err
		})
		if err != nil {
			klog.ErrorS(err, "Failed to make the SubjectAccessReview request for a kubelet API client; check that the API server is reachable")
			return authorizer.DecisionNoOpinion, "", err
		}
		review.Status = result.Status
		if shouldCache(attr) {
			ttl := a.denyTTL
			if review.Status.Allowed {
				ttl = a.allowTTL
			}
			a.cache.Add(string(key), review.Status, ttl)
		}
	}
	st := review.Status
	switch {
	case st.Denied && st.Allowed:
		return authorizer.DecisionDeny, st.Reason, errors.New("webhook subject access review returned both allow and deny response")
	case st.Denied:
		return authorizer.DecisionDeny, st.Reason, nil
	case st.Allowed:
		return authorizer.DecisionAllow, st.Reason, nil
	default:
		return authorizer.DecisionNoOpinion, st.Reason, nil
	}
}

// sarSpec is the review of attr (the kubelet's attributes carry no selectors).
func sarSpec(attr authorizer.Attributes) authorizationv1.SubjectAccessReviewSpec {
	var spec authorizationv1.SubjectAccessReviewSpec
	if u := attr.GetUser(); u != nil {
		spec.User, spec.UID, spec.Groups = u.GetName(), u.GetUID(), u.GetGroups()
		if extra := u.GetExtra(); extra != nil {
			spec.Extra = make(map[string]authorizationv1.ExtraValue, len(extra))
			for k, v := range extra {
				spec.Extra[k] = v
			}
		}
	}
	if attr.IsResourceRequest() {
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Namespace: attr.GetNamespace(), Verb: attr.GetVerb(),
			Group: attr.GetAPIGroup(), Version: attr.GetAPIVersion(), Resource: attr.GetResource(),
			Subresource: attr.GetSubresource(), Name: attr.GetName()}
	} else {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: attr.GetPath(), Verb: attr.GetVerb()}
	}
	return spec
}

func shouldCache(attr authorizer.Attributes) bool {
	size := len(attr.GetNamespace()) + len(attr.GetVerb()) + len(attr.GetAPIGroup()) + len(attr.GetAPIVersion()) +
		len(attr.GetResource()) + len(attr.GetSubresource()) + len(attr.GetName()) + len(attr.GetPath())
	return size < maxControlledAttrCacheSize
}

// withRetry is k8s.io/apiserver's webhook.WithExponentialBackoff with DefaultShouldRetry:
// connection resets, lost HTTP/2 connections, internal errors, timeouts, 429s and responses
// asking for a delay are retried with backoff; the last webhook error is returned.
func withRetry(ctx context.Context, backoff wait.Backoff, call func() error) error {
	var callErr error
	err := wait.ExponentialBackoffWithContext(ctx, backoff, func(context.Context) (bool, error) {
		callErr = call()
		if shouldRetry(callErr) {
			return false, nil
		}
		return callErr == nil, callErr
	})
	switch {
	case callErr != nil:
		return callErr
	case err != nil:
		return fmt.Errorf("webhook call failed: %w", err)
	}
	return nil
}

func shouldRetry(err error) bool {
	if err == nil {
		return false
	}
	if utilnet.IsConnectionReset(err) || utilnet.IsHTTP2ConnectionLost(err) || apierrors.IsInternalError(err) ||
		apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) {
		return true
	}
	_, delay := apierrors.SuggestsClientDelay(err)
	return delay
}
