package kubeletauth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/kubeclient"
)

// Deps are the API clients the webhooks use (nil in standalone mode) and the clock that
// paces the client CA reload.
type Deps struct {
	TokenReviews         kubeclient.TokenReviewInterface
	SubjectAccessReviews kubeclient.SubjectAccessReviewInterface
	Clock                clock.WithTicker
}

// Auth is what the secure server needs: the authenticator, the authorizer, and Run, which
// reloads the client CA file when it changes until ctx ends.
type Auth struct {
	Authenticator authenticator.Request
	Authorizer    Authorizer
	Run           func(ctx context.Context)
}

// BuildAuth is upstream's BuildAuth from the configuration's authentication and
// authorization sections, with k8s.io/apiserver's delegating factories' composition: x509
// client certificates, then cached TokenReviews of bearer tokens (header or websocket
// protocol), every authenticated user in system:authenticated; anonymous requests
// (system:anonymous) only when enabled. Authorization: SubjectAccessReviews with cached
// decisions, or AlwaysAllow.
func BuildAuth(deps Deps, authn kubeletconfigv1beta1.KubeletAuthentication, authz kubeletconfigv1beta1.KubeletAuthorization) (*Auth, error) {
	if deps.Clock == nil {
		return nil, errors.New("kubeletauth: Deps.Clock is required")
	}
	a := &requestAuthenticator{anonymous: authn.Anonymous.Enabled != nil && *authn.Anonymous.Enabled}
	if authn.X509.ClientCAFile != "" {
		var err error
		if a.ca, err = newClientCA(authn.X509.ClientCAFile); err != nil {
			return nil, fmt.Errorf("authentication.x509.clientCAFile %s: %w", authn.X509.ClientCAFile, err)
		}
	}
	if authn.Webhook.Enabled != nil && *authn.Webhook.Enabled {
		if deps.TokenReviews == nil {
			return nil, errors.New("authentication.webhook.enabled needs the API server (--kubeconfig)")
		}
		a.tokens = newTokenCache(&tokenReviewer{reviews: deps.TokenReviews, backoff: webhookRetryBackoff()},
			authn.Webhook.CacheTTL.Duration)
	}
	if a.ca == nil && a.tokens == nil && !a.anonymous {
		return nil, errors.New("authentication: no method configured (set x509.clientCAFile, webhook.enabled or anonymous.enabled)")
	}
	var z Authorizer
	switch authz.Mode {
	case kubeletconfigv1beta1.KubeletAuthorizationModeAlwaysAllow:
		z = alwaysAllow{}
	case kubeletconfigv1beta1.KubeletAuthorizationModeWebhook:
		if deps.SubjectAccessReviews == nil {
			return nil, errors.New("authorization.mode Webhook needs the API server (--kubeconfig)")
		}
		z = newSARAuthorizer(deps.SubjectAccessReviews,
			authz.Webhook.CacheAuthorizedTTL.Duration, authz.Webhook.CacheUnauthorizedTTL.Duration)
	default:
		return nil, fmt.Errorf("authorization.mode: unknown mode %q (want Webhook or AlwaysAllow)", authz.Mode)
	}
	run := func(ctx context.Context) {
		if a.ca != nil {
			a.ca.Run(ctx, deps.Clock)
		}
	}
	return &Auth{Authenticator: a, Authorizer: z, Run: run}, nil
}

// alwaysAllow is authorization.mode AlwaysAllow.
type alwaysAllow struct{}

func (alwaysAllow) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}

// webhookRetryBackoff is k8s.io/apiserver's options.DefaultAuthWebhookRetryBackoff, the kubelet's
// retry of TokenReview and SubjectAccessReview calls. It is written out here because importing
// that options package links the API server's admission and storage code (etcd clients, client-go
// fakes) into nodelet: 1 s more of start-up and megabytes of resident memory for one value.
func webhookRetryBackoff() wait.Backoff {
	return wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
}
