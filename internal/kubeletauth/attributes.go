package kubeletauth

import (
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Attributes is upstream's nodeAuthorizerAttributesGetter without the fine-grained feature: the
// resource is the node itself, the verb follows the HTTP method, and the subresource follows the
// path: /stats → stats, /metrics → metrics, /logs → log, /checkpoint → checkpoint, /statusz →
// statusz, /flagz → configz, anything else (containerLogs, exec, pods, healthz...) → proxy.
func Attributes(nodeName string, u user.Info, r *http.Request) authorizer.AttributesRecord {
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
	sub := "proxy"
	switch {
	case isSubpath(path, "/stats"):
		sub = "stats"
	case isSubpath(path, "/metrics"):
		sub = "metrics"
	case isSubpath(path, "/logs"):
		sub = "log"
	case isSubpath(path, "/checkpoint"):
		sub = "checkpoint"
	case isSubpath(path, "/statusz"):
		sub = "statusz"
	case isSubpath(path, "/flagz"):
		sub = "configz"
	}
	return authorizer.AttributesRecord{
		User: u, Verb: verb, APIVersion: "v1", Resource: "nodes", Subresource: sub,
		Name: nodeName, ResourceRequest: true, Path: path,
	}
}

// isSubpath is upstream's: path is prefix itself or below it.
func isSubpath(path, prefix string) bool {
	path, prefix = strings.TrimSuffix(path, "/"), strings.TrimSuffix(prefix, "/")
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}
