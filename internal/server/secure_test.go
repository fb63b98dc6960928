package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	certutil "k8s.io/client-go/util/cert"
)

// The kubelet API: every route goes through the filter, and container logs are served on a
// routable address (the filter guards them, not the bind address).
func TestSecureServerFiltersEveryRoute(t *testing.T) {
	e := newEnv(t)
	web := podWith("web", 0, "app")
	e.addPod(web)
	e.writeLog(web, "app", 0, rec(0, "stdout", "F", "hello"))
	certFile, keyFile := selfSignedPair(t)
	allowed := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer ok" {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	srv, err := New(Config{Address: "0.0.0.0:10250", Clock: e.clock, Secure: &Secure{CertFile: certFile, KeyFile: keyFile, Filter: allowed}},
		Deps{Pods: e.pods, Logs: e.logs})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/pods", "/healthz", "/containerLogs/default/web/app"} {
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != http.StatusUnauthorized {
			t.Errorf("%s without credentials: %d, want 401", path, w.Code)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/containerLogs/default/web/app", nil)
	r.Header.Set("Authorization", "Bearer ok")
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, r)
	if w.Code != http.StatusOK || w.Body.String() != "hello\n" {
		t.Errorf("authorized container logs: %d %q", w.Code, w.Body.String())
	}
	if _, err := New(Config{Address: ":10250", Clock: e.clock, Secure: &Secure{CertFile: "/nonexistent", KeyFile: keyFile, Filter: allowed}},
		Deps{Pods: e.pods, Logs: e.logs}); err == nil {
		t.Error("a missing certificate must be an error")
	}
}

// selfSignedPair writes a self-signed serving certificate and key for the kubelet API's tests.
func selfSignedPair(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	crt, key, err := certutil.GenerateSelfSignedCertKey("node-1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "c.crt"), filepath.Join(dir, "c.key")
	if err := os.WriteFile(certFile, crt, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
