package credentialplugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/credentials"
)

// TestMain makes the test binary a credential provider plugin when NODELET_TEST_PLUGIN names
// a behaviour: the tests link it into a bin dir under the providers' names.
func TestMain(m *testing.M) {
	if mode := os.Getenv("NODELET_TEST_PLUGIN"); mode != "" {
		os.Exit(runPlugin(mode))
	}
	os.Exit(m.Run())
}

func runPlugin(mode string) int {
	in, _ := io.ReadAll(os.Stdin)
	if f := os.Getenv("COUNT_FILE"); f != "" {
		fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintln(fh, string(in))
			fh.Close()
		}
	}
	var req map[string]string
	_ = json.Unmarshal(in, &req)
	version := req["apiVersion"]
	switch mode {
	case "good":
		resp := map[string]any{"kind": "CredentialProviderResponse", "apiVersion": version, "cacheKeyType": os.Getenv("KEY_TYPE"),
			"auth": map[string]any{"127.0.0.1:5001": map[string]string{"username": "user-" + req["image"], "password": "pw"}}}
		if d := os.Getenv("CACHE_DURATION"); d != "" {
			resp["cacheDuration"] = d
		}
		_ = json.NewEncoder(os.Stdout).Encode(resp)
	case "fail":
		fmt.Fprintln(os.Stderr, "no credentials for you")
		return 3
	case "garbage":
		fmt.Println("this is not json")
	case "wrong-version":
		fmt.Println(`{"kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1alpha1","cacheKeyType":"Image"}`)
	case "bad-key-type":
		fmt.Printf(`{"kind":"CredentialProviderResponse","apiVersion":%q,"cacheKeyType":"Forever"}`+"\n", version)
	case "hang":
		time.Sleep(time.Hour)
	}
	return 0
}

// binDir links the test binary into a new directory under each name.
func binDir(t *testing.T, names ...string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, n := range names {
		if err := os.Symlink(self, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func testProvider(name, mode string, env ...string) kubeletconfigv1.CredentialProvider {
	p := kubeletconfigv1.CredentialProvider{Name: name, APIVersion: "credentialprovider.kubelet.k8s.io/v1",
		MatchImages: []string{"127.0.0.1:5001"}, DefaultCacheDuration: &metav1.Duration{Duration: time.Minute},
		Env: []kubeletconfigv1.ExecEnvVar{{Name: "NODELET_TEST_PLUGIN", Value: mode}}}
	for i := 0; i+1 < len(env); i += 2 {
		p.Env = append(p.Env, kubeletconfigv1.ExecEnvVar{Name: env[i], Value: env[i+1]})
	}
	return p
}

func execCount(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func TestLookupCachesByKeyType(t *testing.T) {
	const img1, img2 = "127.0.0.1:5001/private/busybox:1.35", "127.0.0.1:5001/private/other:1"
	for _, tc := range []struct {
		keyType  string
		duration string
		// execs after looking up img1, img1 again, img2, and img1 after the cache expired
		wantExecs [4]int
	}{
		{"Image", "", [4]int{1, 1, 2, 3}},
		{"Registry", "", [4]int{1, 1, 1, 2}},
		{"Global", "", [4]int{1, 1, 1, 2}},
		{"Image", "0s", [4]int{1, 2, 3, 4}}, // a zero cacheDuration: never cached
	} {
		t.Run(tc.keyType+"/"+tc.duration, func(t *testing.T) {
			count := filepath.Join(t.TempDir(), "count")
			clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
			p, err := New(Config{Providers: []kubeletconfigv1.CredentialProvider{
				testProvider("good", "good", "KEY_TYPE", tc.keyType, "COUNT_FILE", count, "CACHE_DURATION", tc.duration)},
				BinDir: binDir(t, "good")}, clk)
			if err != nil {
				t.Fatal(err)
			}
			lookup := func(image string) []credentials.AuthConfig {
				auths, errs := p.Lookup(context.Background(), image)
				if len(errs) > 0 {
					t.Fatal(errs)
				}
				return auths
			}
			got := lookup(img1)
			if len(got) != 1 || got[0].Username != "user-"+img1 || got[0].Password != "pw" {
				t.Fatalf("Lookup = %+v, want the plugin's credentials for %s", got, img1)
			}
			steps := []func(){func() {}, func() { lookup(img1) }, func() { lookup(img2) }, func() { clk.Step(2 * time.Minute); lookup(img1) }}
			for i, step := range steps {
				step()
				if n := execCount(t, count); n != tc.wantExecs[i] {
					t.Errorf("after step %d: %d executions, want %d", i, n, tc.wantExecs[i])
				}
			}
			// The request the plugin got.
			b, _ := os.ReadFile(count)
			first := strings.SplitN(string(b), "\n", 2)[0]
			if want := `{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":"` + img1 + `","kind":"CredentialProviderRequest"}`; first != want {
				t.Errorf("the plugin's request = %s, want %s", first, want)
			}
		})
	}
}

func TestLookupOnlyMatchingImages(t *testing.T) {
	count := filepath.Join(t.TempDir(), "count")
	p, err := New(Config{Providers: []kubeletconfigv1.CredentialProvider{testProvider("good", "good", "KEY_TYPE", "Image", "COUNT_FILE", count)},
		BinDir: binDir(t, "good")}, clocktesting.NewFakeClock(time.Unix(1000, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if auths, errs := p.Lookup(context.Background(), "docker.io/library/busybox:1.35"); len(auths) != 0 || len(errs) != 0 || execCount(t, count) != 0 {
		t.Errorf("an image no matchImages matches: %v %v, %d executions; want nothing, no execution", auths, errs, execCount(t, count))
	}
	var none *Plugins
	if auths, errs := none.Lookup(context.Background(), "x"); auths != nil || errs != nil {
		t.Error("nil Plugins gave something")
	}
}

func TestLookupPluginFailures(t *testing.T) {
	const img = "127.0.0.1:5001/private/busybox:1.35"
	for _, tc := range []struct {
		mode string
		want []string
	}{
		{"fail", []string{`"bad"`, "exit status 3", "no credentials for you"}},
		{"garbage", []string{`"bad"`, "not a CredentialProviderResponse"}},
		{"wrong-version", []string{`"bad"`, "did not match expected apiVersion"}},
		{"bad-key-type", []string{`"bad"`, "cacheKeyType", "Forever"}},
		{"hang", []string{`"bad"`, "no answer within 1s", "killed"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			// A good plugin after the bad one still gives its credentials. The hanging plugin
			// is alone, with a short timeout (a loaded machine may start the good one slowly).
			providers := []kubeletconfigv1.CredentialProvider{testProvider("bad", tc.mode), testProvider("good", "good", "KEY_TYPE", "Image")}
			timeout := time.Minute
			if tc.mode == "hang" {
				providers, timeout = providers[:1], time.Second
			}
			p, err := New(Config{Providers: providers, BinDir: binDir(t, "bad", "good"), Timeout: timeout}, clocktesting.NewFakeClock(time.Unix(1000, 0)))
			if err != nil {
				t.Fatal(err)
			}
			auths, errs := p.Lookup(context.Background(), img)
			if len(errs) != 1 {
				t.Fatalf("errors %v, want the bad plugin's", errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(errs[0].Error(), w) {
					t.Errorf("error %q does not say %q", errs[0], w)
				}
			}
			if wantGood := len(providers) == 2; wantGood && (len(auths) != 1 || auths[0].Username != "user-"+img) || !wantGood && len(auths) != 0 {
				t.Errorf("credentials %+v, want the good plugin's (if any)", auths)
			}
		})
	}
	if _, err := New(Config{Providers: []kubeletconfigv1.CredentialProvider{testProvider("missing", "good")}, BinDir: t.TempDir()},
		clocktesting.NewFakeClock(time.Unix(0, 0))); err == nil || !strings.Contains(err.Error(), `"missing"`) {
		t.Errorf("a provider without its binary: %v, want an error naming it", err)
	}
}
