// Package kubeletauth authenticates and authorizes requests to the kubelet API (port 10250) as
// the upstream kubelet does (pkg/kubelet/server/auth.go, cmd/kubelet/app/auth.go): x509 client
// certificates signed by authentication.x509.clientCAFile, bearer tokens checked with the API
// server's TokenReview (authentication.webhook), anonymous requests refused unless
// authentication.anonymous.enabled; then a SubjectAccessReview (authorization.mode Webhook) for
// the node subresource the path maps to (nodes/proxy, nodes/stats, nodes/metrics, nodes/log...),
// or AlwaysAllow. The request authenticators (x509, bearer token, websocket protocol, union,
// anonymous, token cache) are k8s.io/apiserver's, composed as its delegating factory composes
// them; the TokenReview and SubjectAccessReview webhooks and the client CA reload are written
// here over the typed clients, with upstream's retry, caching and decisions, because their
// k8s.io/apiserver packages link CEL, OpenTelemetry and the API server's certificate
// controllers (about 400 packages) for code the kubelet API never runs. The package also maps
// a request to its attributes (Attributes, a pure function) and filters a handler.
//
// Reading order: auth.go (BuildAuth), webhook.go, clientca.go, attributes.go, filter.go.
package kubeletauth
