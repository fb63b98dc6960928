package credentialplugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const cfgHeader = "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\n"

const goodProvider = `- name: registry-login
  matchImages: ["127.0.0.1:5001", "*.example.com/team"]
  defaultCacheDuration: 10m
  apiVersion: credentialprovider.kubelet.k8s.io/v1
  args: [--verbose]
  env: [{name: TOKEN_FILE, value: /etc/token}]
`

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadConfig(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "a.yaml", cfgHeader+"providers:\n"+goodProvider)
	ps, err := ReadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Name != "registry-login" || ps[0].DefaultCacheDuration.Duration.String() != "10m0s" ||
		len(ps[0].MatchImages) != 2 || ps[0].Env[0].Value != "/etc/token" {
		t.Errorf("ReadConfig = %+v", ps)
	}
	// A directory: its .json/.yaml/.yml files in name order; others skipped.
	writeFile(t, dir, "b.json", `{"apiVersion":"kubelet.config.k8s.io/v1","kind":"CredentialProviderConfig","providers":[{"name":"second","matchImages":["x.io"],"defaultCacheDuration":"1m","apiVersion":"credentialprovider.kubelet.k8s.io/v1beta1"}]}`)
	writeFile(t, dir, "notes.txt", "not read")
	ps, err = ReadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Name != "registry-login" || ps[1].Name != "second" {
		t.Errorf("ReadConfig(dir) = %+v, want a.yaml's then b.json's", ps)
	}
	writeFile(t, dir, "c.yml", cfgHeader+"providers:\n"+strings.Replace(goodProvider, "registry-login", "second", 1))
	if _, err := ReadConfig(dir); err == nil || !strings.Contains(err.Error(), `duplicate provider name "second"`) {
		t.Errorf("a name in two files: %v", err)
	}
}

func TestReadConfigErrors(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string
	}{
		{"unknown field", cfgHeader + "providers:\n" + goodProvider + "  cacheForever: true\n", []string{`unknown field "providers[0].cacheForever"`}},
		{"no providers", cfgHeader + "providers: []\n", []string{"providers: Required value"}},
		{"wrong kind", "apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\nproviders:\n" + goodProvider, []string{"kind: Unsupported value"}},
		{"wrong apiVersion", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: CredentialProviderConfig\nproviders:\n" + goodProvider, []string{"apiVersion: Unsupported value"}},
		{"slash in name", cfgHeader + "providers:\n" + strings.Replace(goodProvider, "registry-login", "a/b", 1), []string{"providers[0].name", "cannot contain '/'"}},
		{"plugin apiVersion", cfgHeader + "providers:\n" + strings.Replace(goodProvider, "credentialprovider.kubelet.k8s.io/v1", "v2", 1), []string{"providers[0].apiVersion: Unsupported value"}},
		{"no matchImages", cfgHeader + "providers:\n" + strings.Replace(goodProvider, `matchImages: ["127.0.0.1:5001", "*.example.com/team"]`, "matchImages: []", 1), []string{"providers[0].matchImages: Required value"}},
		{"no cache duration", cfgHeader + "providers:\n" + strings.Replace(goodProvider, "  defaultCacheDuration: 10m\n", "", 1), []string{"providers[0].defaultCacheDuration: Required value"}},
		{"negative cache duration", cfgHeader + "providers:\n" + strings.Replace(goodProvider, "10m", "-1m", 1), []string{"providers[0].defaultCacheDuration", "greater than or equal to 0"}},
		{"tokenAttributes", cfgHeader + "providers:\n" + goodProvider + "  tokenAttributes: {serviceAccountTokenAudience: x, requireServiceAccount: true}\n", []string{"providers[0].tokenAttributes: Forbidden", "service account tokens"}},
		{"empty", "", []string{"file is empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "c.yaml", tt.content)
			_, err := ReadConfig(path)
			if err == nil {
				t.Fatal("ReadConfig succeeded")
			}
			for _, w := range append(tt.want, "c.yaml") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if _, err := ReadConfig(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no configuration files") {
		t.Errorf("an empty directory: %v", err)
	}
}
