package kubeletauth

import (
	"net/http/httptest"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
)

func TestAttributes(t *testing.T) {
	u := &user.DefaultInfo{Name: "alice"}
	for _, tc := range []struct {
		method, path, verb, sub string
	}{
		{"GET", "/containerLogs/ns/pod/c", "get", "proxy"},
		{"POST", "/exec/ns/pod/c", "create", "proxy"},
		{"GET", "/pods", "get", "proxy"},
		{"GET", "/healthz", "get", "proxy"},
		{"GET", "/stats/summary", "get", "stats"},
		{"GET", "/stats", "get", "stats"},
		{"GET", "/statsX", "get", "proxy"},
		{"GET", "/metrics", "get", "metrics"},
		{"GET", "/metrics/resource", "get", "metrics"},
		{"GET", "/logs/syslog", "get", "log"},
		{"POST", "/checkpoint/ns/pod/c", "create", "checkpoint"},
		{"GET", "/flagz", "get", "configz"},
		{"PUT", "/run/ns/pod/c", "update", "proxy"},
		{"DELETE", "/pods/x", "delete", "proxy"},
	} {
		a := Attributes("node-1", u, httptest.NewRequest(tc.method, tc.path, nil))
		if a.Verb != tc.verb || a.Subresource != tc.sub || a.Resource != "nodes" || a.Name != "node-1" ||
			a.APIVersion != "v1" || !a.ResourceRequest || a.User != u || a.Path != tc.path {
			t.Errorf("%s %s: %+v, want verb %q subresource %q on nodes/node-1", tc.method, tc.path, a, tc.verb, tc.sub)
		}
	}
}
