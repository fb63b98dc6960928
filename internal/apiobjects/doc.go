// Package apiobjects gives a cluster-mode node the API objects its pods reference: configMaps and
// secrets (for volumes, environment variables and imagePullSecrets) and service account tokens
// (for projected volumes), as the upstream kubelet's watch-based configMap and secret managers
// (pkg/kubelet/util/manager) and token manager (pkg/kubelet/token).
//
// The node's credentials (system:node:<name>) let it read only the objects that pods bound to it
// reference, one at a time: the Node authorizer refuses to list a namespace. So the Manager
// counts, per object, the registered pods that reference it (RegisterPod, UnregisterPod) and runs
// one reflector per referenced object, listing and watching it with the field selector
// metadata.name=<name>. GetConfigMap and GetSecret answer from the reflector's store, waiting a
// bounded time for its first list; an object no registered pod references is read with a direct
// GET. When a watched object changes after its first list, Config.OnChange receives the pods
// that reference it, so that their volumes and containers are synced again promptly. Reflectors
// retry on their own when the API server is unreachable; an immutable object stops being watched
// once read.
//
// Service account tokens come from the TokenRequest API, bound to the pod, cached per service
// account, audiences, expiration and pod, and requested again once older than 80% of their
// lifetime or 24 hours, as upstream.
//
// Services (services.go) lists and watches the cluster's Services with a cluster IP in every
// namespace (nodes may), for the pods' service environment variables.
//
// Reading order: manager.go, objects.go (per-object reflectors), references.go, tokens.go,
// services.go.
package apiobjects
