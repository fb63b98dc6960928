package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// basicAuthRegistry is an in-memory registry that, like docker-registry with
// htpasswd, answers 401 with a Basic challenge unless the request carries
// user:password.
func basicAuthRegistry(t *testing.T, user, password string) string {
	t.Helper()
	reg := registry.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// countingRecipe builds a small random image and counts its builds.
func countingRecipe(t *testing.T, builds *int) recipe {
	t.Helper()
	input := filepath.Join(t.TempDir(), "input")
	if err := os.WriteFile(input, []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	return recipe{
		name:   "private/busybox",
		tags:   []string{"1.35"},
		inputs: func(*builder) []string { return []string{input} },
		build: func(context.Context, *builder) (v1.Image, error) {
			*builds++
			return random.Image(64, 1)
		},
	}
}

func TestEnsurePushesWithCredentials(t *testing.T) {
	addr := basicAuthRegistry(t, "nodelet", "secret")
	b := &builder{os: "linux", arch: "amd64"}
	builds := 0
	r := countingRecipe(t, &builds)
	ctx := context.Background()
	good := target{registry: addr, auth: &authn.Basic{Username: "nodelet", Password: "secret"}}

	if err := ensure(ctx, good, b, r); err != nil {
		t.Fatalf("push with the right credentials: %v", err)
	}
	if builds != 1 {
		t.Fatalf("%d builds, want 1", builds)
	}
	ref, err := name.NewTag(addr+"/private/busybox:1.35", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	want, err := inputsHash(b, r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := remoteInputs(ref, []remote.Option{remote.WithAuth(good.auth)})
	if err != nil || got != want {
		t.Errorf("pushed image inputs label = %q, %v; want %q", got, err, want)
	}

	// The registry refuses anonymous pulls.
	_, err = remote.Image(ref)
	var terr *transport.Error
	if !errors.As(err, &terr) || terr.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous pull: err = %v, want 401", err)
	}

	// Up to date: a second run with credentials looks the image up and does not rebuild.
	if err := ensure(ctx, good, b, r); err != nil {
		t.Fatalf("second ensure: %v", err)
	}
	if builds != 1 {
		t.Errorf("%d builds after a second ensure of unchanged inputs, want 1", builds)
	}

	bad := target{registry: addr, auth: &authn.Basic{Username: "nodelet", Password: "wrong"}}
	if err := ensure(ctx, bad, b, r); err == nil {
		t.Error("ensure with a wrong password succeeded")
	}
}

func TestRunRequiresAuthCredentials(t *testing.T) {
	for _, tc := range []struct{ user, password string }{{"", "secret"}, {"nodelet", ""}} {
		o := options{authRegistry: "127.0.0.1:1", authUser: tc.user, authPassword: tc.password}
		err := run(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), authPasswordEnv) {
			t.Errorf("run with user %q, password %q: err = %v, want one naming $%s", tc.user, tc.password, err, authPasswordEnv)
		}
	}
}

func TestPrivateCatalogIsBusybox(t *testing.T) {
	priv := privateCatalog()
	if len(priv) != 1 || priv[0].name != "private/busybox" || len(priv[0].tags) != 1 || priv[0].tags[0] != "1.35" {
		t.Fatalf("privateCatalog() = %+v, want private/busybox:1.35", priv)
	}
	b := &builder{busybox: "/some/busybox"}
	if in := priv[0].inputs(b); len(in) != 1 || in[0] != b.busybox {
		t.Errorf("inputs = %q, want the busybox binary", in)
	}
	for _, r := range catalog() {
		if r.name == priv[0].name {
			t.Errorf("%s is also in the public catalog", r.name)
		}
	}
}
