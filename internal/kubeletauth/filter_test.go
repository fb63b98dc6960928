package kubeletauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// byHeader authenticates the user named in the X-User header.
type byHeader struct{}

func (byHeader) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	name := r.Header.Get("X-User")
	if name == "" {
		return nil, false, nil
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: name}}, true, nil
}

// onlyAdminProxy allows admin on nodes/proxy and records what it was asked.
type onlyAdminProxy struct{ asked []authorizer.Attributes }

func (o *onlyAdminProxy) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	o.asked = append(o.asked, a)
	if a.GetUser().GetName() == "admin" && a.GetSubresource() == "proxy" ||
		a.GetUser().GetName() == "monitor" && a.GetSubresource() == "healthz" {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

var (
	_ authenticator.Request = byHeader{}
	_ Authorizer            = (*onlyAdminProxy)(nil)
)

func TestFilter(t *testing.T) {
	z := &onlyAdminProxy{}
	h := Filter("node-1", byHeader{}, z, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for _, tc := range []struct {
		user, path string
		want       int
	}{
		{"", "/containerLogs/a/b/c", http.StatusUnauthorized},
		{"bob", "/containerLogs/a/b/c", http.StatusForbidden},
		{"admin", "/stats/summary", http.StatusForbidden},
		{"admin", "/containerLogs/a/b/c", http.StatusTeapot},
		{"admin", "/pods", http.StatusTeapot},      // nodes/pods refused, nodes/proxy allowed
		{"monitor", "/healthz", http.StatusTeapot}, // fine-grained nodes/healthz is enough
		{"monitor", "/pods", http.StatusForbidden},
	} {
		r := httptest.NewRequest(http.MethodGet, tc.path, nil)
		if tc.user != "" {
			r.Header.Set("X-User", tc.user)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("user %q %s: %d %q, want %d", tc.user, tc.path, w.Code, w.Body.String(), tc.want)
		}
	}
	var asked []string
	for _, a := range z.asked {
		asked = append(asked, a.GetUser().GetName()+":"+a.GetSubresource())
	}
	want := []string{"bob:proxy", "admin:stats", "admin:proxy", "admin:pods", "admin:proxy", "monitor:healthz", "monitor:pods", "monitor:proxy"}
	if !slices.Equal(asked, want) || z.asked[0].GetName() != "node-1" {
		t.Errorf("authorizer asked %q, want %q", asked, want)
	}
}
