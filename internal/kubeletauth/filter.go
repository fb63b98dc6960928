package kubeletauth

import (
	"context"
	"fmt"
	"net/http"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/klog/v2"
)

// Authorizer decides a request (k8s.io/apiserver's delegating authorizer satisfies it).
type Authorizer interface {
	Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error)
}

// Filter authenticates each request (401 when no authenticator accepts it) and authorizes it
// for the node subresource its path maps to (403 with upstream's message when refused), then
// hands it to next. It is upstream's kubelet server InstallAuthFilter.
func Filter(nodeName string, authn authenticator.Request, authz Authorizer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logger := klog.FromContext(r.Context())
		info, ok, err := authn.AuthenticateRequest(r)
		if err != nil {
			logger.V(2).Info("Unable to authenticate the request", "path", r.URL.Path, "err", err)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		if !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		attrs := Attributes(nodeName, info.User, r)
		var subresources []string
		allowed := false
		for _, a := range attrs {
			subresources = append(subresources, a.Subresource)
			decision, _, err := authz.Authorize(r.Context(), a)
			if err != nil {
				logger.Error(err, "Authorization error", "user", a.User.GetName(), "verb", a.Verb,
					"resource", a.Resource, "subresource", a.Subresource)
				http.Error(w, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=%s, subresource=%s)",
					a.User.GetName(), a.Verb, a.Resource, a.Subresource), http.StatusInternalServerError)
				return
			}
			if decision == authorizer.DecisionAllow {
				allowed = true
				break
			}
		}
		if !allowed {
			a := attrs[0] // the attributes differ only by subresource
			logger.V(2).Info("Forbidden", "user", a.User.GetName(), "verb", a.Verb, "path", r.URL.Path,
				"subresources", subresources)
			http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=%s, subresource(s)=%v)",
				a.User.GetName(), a.Verb, a.Resource, subresources), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
