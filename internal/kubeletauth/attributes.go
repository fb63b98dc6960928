package kubeletauth

import (
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Attributes is upstream's nodeAuthorizerAttributesGetter with KubeletFineGrainedAuthz (GA and
// locked on since 1.36): the resource is the node itself, the verb follows the HTTP method, and
// the subresources follow the path. A request is allowed when any of them is, tried in order:
// first the fine-grained one (/pods, /runningpods/ → pods; /healthz → healthz; /configz →
// configz), then /stats → stats, /metrics → metrics, /logs → log, /checkpoint → checkpoint,
// /statusz → statusz, /flagz → configz, and anything else (containerLogs, exec, pods,
// healthz...) → proxy.
func Attributes(nodeName string, u user.Info, r *http.Request) []authorizer.AttributesRecord {
	verb := ""
	switch r.Method {
	case http.MethodPost:
		verb = "create"
	case http.MethodGet:
		verb = "get"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
	}
	path := r.URL.Path
	var subs []string
	switch {
	case isSubpath(path, "/allocatedPods"), isSubpath(path, "/pods"), isSubpath(path, "/runningpods/"):
		subs = append(subs, "pods")
	case isSubpath(path, "/healthz"):
		subs = append(subs, "healthz")
	case isSubpath(path, "/configz"):
		subs = append(subs, "configz")
	}
	switch {
	case isSubpath(path, "/stats"):
		subs = append(subs, "stats")
	case isSubpath(path, "/metrics"):
		subs = append(subs, "metrics")
	case isSubpath(path, "/logs"):
		subs = append(subs, "log")
	case isSubpath(path, "/checkpoint"):
		subs = append(subs, "checkpoint")
	case isSubpath(path, "/statusz"):
		subs = append(subs, "statusz")
	case isSubpath(path, "/flagz"):
		subs = append(subs, "configz")
	default:
		subs = append(subs, "proxy")
	}
	out := make([]authorizer.AttributesRecord, 0, len(subs))
	for _, sub := range subs {
		out = append(out, authorizer.AttributesRecord{
			User: u, Verb: verb, APIVersion: "v1", Resource: "nodes", Subresource: sub,
			Name: nodeName, ResourceRequest: true, Path: path,
		})
	}
	return out
}

// isSubpath is upstream's: path is prefix itself or below it.
func isSubpath(path, prefix string) bool {
	path, prefix = strings.TrimSuffix(path, "/"), strings.TrimSuffix(prefix, "/")
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}
