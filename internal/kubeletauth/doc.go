// Package kubeletauth authenticates and authorizes requests to the kubelet API (port 10250) as
// the upstream kubelet does (pkg/kubelet/server/auth.go, cmd/kubelet/app/auth.go): x509 client
// certificates signed by authentication.x509.clientCAFile, bearer tokens checked with the API
// server's TokenReview (authentication.webhook), anonymous requests refused unless
// authentication.anonymous.enabled; then a SubjectAccessReview (authorization.mode Webhook) for
// the node subresource the path maps to (nodes/proxy, nodes/stats, nodes/metrics, nodes/log...),
// or AlwaysAllow. The authenticators and authorizers are k8s.io/apiserver's delegating ones,
// the same code the kubelet uses; this package only builds them from the KubeletConfiguration,
// maps a request to its attributes (Attributes, a pure function) and filters a handler.
//
// Reading order: auth.go (BuildAuth), attributes.go, filter.go.
package kubeletauth
