package kubeletauth

import (
	"net/http/httptest"
	"slices"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
)

func TestAttributes(t *testing.T) {
	u := &user.DefaultInfo{Name: "alice"}
	for _, tc := range []struct {
		method, path, verb string
		subs               []string
	}{
		{"GET", "/containerLogs/ns/pod/c", "get", []string{"proxy"}},
		{"POST", "/exec/ns/pod/c", "create", []string{"proxy"}},
		{"GET", "/pods", "get", []string{"pods", "proxy"}},
		{"GET", "/runningpods/", "get", []string{"pods", "proxy"}},
		{"GET", "/healthz", "get", []string{"healthz", "proxy"}},
		{"GET", "/healthz/ping", "get", []string{"healthz", "proxy"}},
		{"GET", "/configz", "get", []string{"configz", "proxy"}},
		{"GET", "/stats/summary", "get", []string{"stats"}},
		{"GET", "/stats", "get", []string{"stats"}},
		{"GET", "/statsX", "get", []string{"proxy"}},
		{"GET", "/metrics", "get", []string{"metrics"}},
		{"GET", "/metrics/resource", "get", []string{"metrics"}},
		{"GET", "/logs/syslog", "get", []string{"log"}},
		{"POST", "/checkpoint/ns/pod/c", "create", []string{"checkpoint"}},
		{"GET", "/flagz", "get", []string{"configz"}},
		{"PUT", "/run/ns/pod/c", "update", []string{"proxy"}},
		{"DELETE", "/pods/x", "delete", []string{"pods", "proxy"}},
	} {
		var subs []string
		for _, a := range Attributes("node-1", u, httptest.NewRequest(tc.method, tc.path, nil)) {
			subs = append(subs, a.Subresource)
			if a.Verb != tc.verb || a.Resource != "nodes" || a.Name != "node-1" ||
				a.APIVersion != "v1" || !a.ResourceRequest || a.User != u || a.Path != tc.path {
				t.Errorf("%s %s: %+v, want verb %q on nodes/node-1", tc.method, tc.path, a, tc.verb)
			}
		}
		if !slices.Equal(subs, tc.subs) {
			t.Errorf("%s %s: subresources %q, want %q", tc.method, tc.path, subs, tc.subs)
		}
	}
}
