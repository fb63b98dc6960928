package kubeletauth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// Clients are the API clients the webhooks use (nil in standalone mode).
type Clients struct {
	TokenReviews         authenticationclient.AuthenticationV1Interface
	SubjectAccessReviews authorizationclient.AuthorizationV1Interface
}

// Auth is what the secure server needs: the authenticator, the authorizer, and Run, which
// reloads the client CA file when it changes until ctx ends.
type Auth struct {
	Authenticator authenticator.Request
	Authorizer    Authorizer
	Run           func(ctx context.Context)
}

// BuildAuth is upstream's BuildAuth from the configuration's authentication and
// authorization sections.
func BuildAuth(c Clients, authn kubeletconfigv1beta1.KubeletAuthentication, authz kubeletconfigv1beta1.KubeletAuthorization) (*Auth, error) {
	cfg := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous: &apiserver.AnonymousAuthConfig{Enabled: authn.Anonymous.Enabled != nil && *authn.Anonymous.Enabled},
		CacheTTL:  authn.Webhook.CacheTTL.Duration,
	}
	var caFile *dynamiccertificates.DynamicFileCAContent
	if authn.X509.ClientCAFile != "" {
		var err error
		if caFile, err = dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", authn.X509.ClientCAFile); err != nil {
			return nil, fmt.Errorf("authentication.x509.clientCAFile %s: %w", authn.X509.ClientCAFile, err)
		}
		cfg.ClientCertificateCAContentProvider = caFile
	}
	if authn.Webhook.Enabled != nil && *authn.Webhook.Enabled {
		if c.TokenReviews == nil {
			return nil, errors.New("authentication.webhook.enabled needs the API server (--kubeconfig)")
		}
		cfg.WebhookRetryBackoff = webhookRetryBackoff()
		cfg.TokenAccessReviewClient = c.TokenReviews
	}
	a, _, err := cfg.New()
	if err != nil {
		return nil, fmt.Errorf("authentication: %w", err)
	}
	var z Authorizer
	switch authz.Mode {
	case kubeletconfigv1beta1.KubeletAuthorizationModeAlwaysAllow:
		z = authorizerfactory.NewAlwaysAllowAuthorizer()
	case kubeletconfigv1beta1.KubeletAuthorizationModeWebhook:
		if c.SubjectAccessReviews == nil {
			return nil, errors.New("authorization.mode Webhook needs the API server (--kubeconfig)")
		}
		z, err = authorizerfactory.DelegatingAuthorizerConfig{
			SubjectAccessReviewClient: c.SubjectAccessReviews,
			AllowCacheTTL:             authz.Webhook.CacheAuthorizedTTL.Duration,
			DenyCacheTTL:              authz.Webhook.CacheUnauthorizedTTL.Duration,
			WebhookRetryBackoff:       webhookRetryBackoff(),
		}.New()
		if err != nil {
			return nil, fmt.Errorf("authorization: %w", err)
		}
	default:
		return nil, fmt.Errorf("authorization.mode: unknown mode %q (want Webhook or AlwaysAllow)", authz.Mode)
	}
	run := func(ctx context.Context) {
		if caFile != nil {
			caFile.Run(ctx, 1)
		}
	}
	return &Auth{Authenticator: a, Authorizer: z, Run: run}, nil
}

// webhookRetryBackoff is k8s.io/apiserver's options.DefaultAuthWebhookRetryBackoff, the kubelet's
// retry of TokenReview and SubjectAccessReview calls. It is written out here because importing
// that options package links the API server's admission and storage code (etcd clients, client-go
// fakes) into nodelet: 1 s more of start-up and megabytes of resident memory for one value.
func webhookRetryBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
}
