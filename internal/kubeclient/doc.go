// Package kubeclient is nodelet's API client: one generic typed client (resource.go, making
// the requests of client-go's gentype, the code every generated clientset is made of) over one
// REST client per API group nodelet talks to — core/v1, coordination.k8s.io/v1, node.k8s.io/v1, authentication.k8s.io/v1,
// authorization.k8s.io/v1 — with a scheme holding only those groups.
//
// Why not client-go's typed clients: each of them imports client-go's kubernetes/scheme, which
// registers every built-in API group (56 packages of types, their conversions and defaults)
// into memory at start-up, and their apply configurations. nodelet uses five groups and a
// dozen verbs; this package links about 90 packages fewer and a smaller scheme.
//
// The interfaces here are the methods nodelet calls, with client-go's signatures, so that
// client-go's fake clientset can stand in for a client in unit tests (internal/fakekube).
package kubeclient
