package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// pluginScript is a credential provider plugin: it records each request in $COUNT_FILE and
// answers as $MODE says (good: the auth registry's credentials for its registry).
const pluginScript = `#!/bin/sh
req=$(cat)
echo "$req" >> "$COUNT_FILE"
case "$MODE" in
good) printf '{"kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1","cacheKeyType":"Registry","cacheDuration":"5m","auth":{"%s":{"username":"%s","password":"%s"}}}\n' "$REG" "$REG_USER" "$REG_PASS" ;;
garbage) echo "this is not a response" ;;
esac
`

// TestCredentialProviderPlugin pulls an image from the password-protected test registry with
// the credentials a credential provider plugin gives (no imagePullSecrets), the plugin
// executed once for two pods of that registry (its Registry cache key); a plugin that prints
// garbage leaves the pull failing with an error naming it.
func TestCredentialProviderPlugin(t *testing.T) {
	reg, user, pass := authRegistry(t)
	image := reg + "/private/busybox:1.35"

	for _, mode := range []string{"good", "garbage"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			bin, count := filepath.Join(dir, "bin"), filepath.Join(dir, "requests")
			writeFiles(t, bin, map[string]string{"test-login": pluginScript})
			if err := os.Chmod(filepath.Join(bin, "test-login"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFiles(t, dir, map[string]string{"providers.yaml": fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
- name: test-login
  matchImages: [%q]
  defaultCacheDuration: 1m
  apiVersion: credentialprovider.kubelet.k8s.io/v1
  env:
  - {name: MODE, value: %s}
  - {name: COUNT_FILE, value: %q}
  - {name: REG, value: %q}
  - {name: REG_USER, value: %q}
  - {name: REG_PASS, value: %q}
`, reg, mode, count, reg, user, pass)})
			n := startNode(t, "--image-credential-provider-config", filepath.Join(dir, "providers.yaml"),
				"--image-credential-provider-bin-dir", bin)
			pod := func(name string) string {
				return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: %s
    imagePullPolicy: Always
    command: ["sleep", "3600"]
`, name, image)
			}
			n.write("a.yaml", pod("a"))
			if mode == "garbage" {
				p := n.waitPod("a", 2*time.Minute, "a failed pull naming the plugin", func(p *v1.Pod) bool {
					cs := containerStatus(p, "main")
					return cs != nil && cs.State.Waiting != nil && strings.Contains(cs.State.Waiting.Message, `credential provider "test-login"`)
				})
				w := containerStatus(p, "main").State.Waiting
				if w.Reason != "ErrImagePull" && w.Reason != "ImagePullBackOff" || !strings.Contains(w.Message, "not a CredentialProviderResponse") {
					t.Errorf("waiting %s %q, want ErrImagePull naming the plugin's garbage", w.Reason, w.Message)
				}
				return
			}
			n.waitPod("a", 2*time.Minute, "Running with the plugin's credentials", isRunningReady)
			n.write("b.yaml", pod("b"))
			n.waitPod("b", 2*time.Minute, "Running with the plugin's credentials", isRunningReady)
			b, err := os.ReadFile(count)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(string(b), "\n"); got != 1 {
				t.Errorf("the plugin ran %d times for two pulls of one registry, want 1 (cacheKeyType Registry):\n%s", got, b)
			}
			if want := `"image":"` + image + `"`; !strings.Contains(string(b), want) || !strings.Contains(string(b), `"kind":"CredentialProviderRequest"`) {
				t.Errorf("the plugin's request %s lacks %s", b, want)
			}
		})
	}
}
