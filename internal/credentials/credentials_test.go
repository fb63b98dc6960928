package credentials

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRepository(t *testing.T) {
	for _, tc := range []struct {
		image, want string
		wantErr     bool
	}{
		{image: "busybox", want: "docker.io/library/busybox"},
		{image: "busybox:1.36", want: "docker.io/library/busybox"},
		{image: "team/app:v1", want: "docker.io/team/app"},
		{image: "docker.io/busybox", want: "docker.io/library/busybox"},
		{image: "index.docker.io/team/app@sha256:abc", want: "docker.io/team/app"},
		{image: "quay.io/coreos/etcd:v3.5@sha256:abc", want: "quay.io/coreos/etcd"},
		{image: "localhost/app", want: "localhost/app"},
		{image: "localhost:5000/team/app:v1", want: "localhost:5000/team/app"},
		{image: "registry.local:5000/app", want: "registry.local:5000/app"},
		{image: "Registry/app", want: "Registry/app"}, // an upper-case first component is a domain
		{image: "", wantErr: true},
		{image: ":tag", wantErr: true},
		{image: "team/App", wantErr: true},
	} {
		got, err := Repository(tc.image)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("Repository(%q) = %q, %v; want %q (error %t)", tc.image, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestURLsMatch(t *testing.T) {
	for _, tc := range []struct {
		glob, target string
		want         bool
	}{
		{"*.kubernetes.io", "prefix.kubernetes.io", true},
		{"prefix.*.io", "prefix.kubernetes.io", true},
		{"prefix.kubernetes.*", "prefix.kubernetes.io", true},
		{"*-good.kubernetes.io", "prefix-good.kubernetes.io", true},
		{"*.kubernetes.io/blah", "prefix.kubernetes.io/blah", true},
		{"prefix.*.io/foo", "prefix.kubernetes.io/foo/bar", true},
		{"*.kubernetes.io:1111/blah", "prefix.kubernetes.io:1111/blah", true},
		{"*kubernetes.io", "kubernetes.io", true},
		{"*.*.*.kubernetes.io", "a.b.c.kubernetes.io", true},
		{"*.kubernetes.io", "kubernetes.io", false},          // number of parts
		{"*.*.kubernetes.io", "prefix.kubernetes.io", false}, // number of parts
		{"*kubernetes.io", "a.kubernetes.io", false},
		{"kubernetes.io", "kubernetes.com", false},
		{"k*.io", "quay.io", false},
		{"*.kubernetes.io:1234/blah", "prefix.kubernetes.io:1111/blah", false}, // port
		{"prefix.*.io/foo", "prefix.kubernetes.io:1111/foo/bar", false},        // port
		{"quay.io/coreos", "quay.io/other/etcd", false},                        // path prefix
		{"[.io", "a.io", false},                                                // bad glob
	} {
		if got := urlsMatch(tc.glob, tc.target); got != tc.want {
			t.Errorf("urlsMatch(%q, %q) = %t, want %t", tc.glob, tc.target, got, tc.want)
		}
	}
}

func TestIsDefaultRegistryMatch(t *testing.T) {
	for image, want := range map[string]bool{
		"foo":                    true,
		"foo/bar":                true,
		"docker.io/library/foo":  true,
		"index.docker.io/foo":    true,
		"quay.io/foo":            false,
		"localhost:5000/foo":     false,
		"registry.local/foo/bar": false,
		"":                       false,
		"/foo":                   false,
	} {
		if got := isDefaultRegistryMatch(image); got != want {
			t.Errorf("isDefaultRegistryMatch(%q) = %t, want %t", image, got, want)
		}
	}
}

func user(name string) AuthConfig { return AuthConfig{Username: name, Password: name + "-pw"} }

func TestKeyringLookup(t *testing.T) {
	cfg := dockerConfig{
		"https://index.docker.io/v1/":    {Username: "hub", Password: "hub-pw"},
		"quay.io":                        {Username: "quay", Password: "quay-pw"},
		"quay.io/coreos":                 {Username: "coreos", Password: "coreos-pw"},
		"http://registry.local:5000/v2/": {Username: "local", Password: "local-pw"},
		"*.gcr.io":                       {Username: "gcr", Password: "gcr-pw"},
		"gcr.io/project":                 {Username: "project", Password: "project-pw"},
		"https://registry.local/v2/team": {Username: "team", Password: "team-pw"},
		"%zz":                            {Username: "bad", Password: "bad-pw"}, // ignored: not a URL
	}
	var k Keyring
	k.Add(cfg)
	for _, tc := range []struct {
		image string
		want  []AuthConfig
	}{
		{"quay.io/coreos/etcd:v3", []AuthConfig{user("coreos"), user("quay")}}, // most specific first
		{"quay.io/other/app", []AuthConfig{user("quay")}},
		{"registry.local:5000/app", []AuthConfig{user("local")}},
		{"registry.local/team/app", []AuthConfig{user("team")}}, // /v2/ means the host, its path stays
		{"registry.local/other", nil},
		{"registry.local:5001/app", nil}, // another port
		{"eu.gcr.io/project/app", []AuthConfig{user("gcr")}},
		{"gcr.io/project/app", []AuthConfig{user("project")}},
		{"busybox", []AuthConfig{user("hub")}},
		{"team/app:v1", []AuthConfig{user("hub")}},
		{"docker.io/team/app", []AuthConfig{user("hub")}},
		{"other.io/app", nil},
	} {
		got, err := k.Lookup(tc.image)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Lookup(%q) = %v, %v; want %v", tc.image, got, err, tc.want)
		}
	}
	if _, err := k.Lookup("team/App"); err == nil {
		t.Error("Lookup of an invalid image name: no error")
	}
	var empty Keyring
	if got, err := empty.Lookup("busybox"); got != nil || err != nil {
		t.Errorf("empty keyring: %v, %v; want no credentials", got, err)
	}
}

func TestKeyringSharedKeysKeepEveryCredential(t *testing.T) {
	var k Keyring
	k.Add(dockerConfig{"quay.io": {Username: "a"}})
	k.Add(dockerConfig{"https://quay.io/v1/": {Username: "b"}, "quay.io/": {Username: "c"}})
	got, _ := k.Lookup("quay.io/x/y")
	want := []AuthConfig{{Username: "a"}, {Username: "b"}, {Username: "c"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("credentials %v, want %v (in the order added, for rotation)", got, want)
	}
	if len(k.index) != 1 {
		t.Errorf("index %v, want one key", k.index)
	}
}

func secret(name string, typ v1.SecretType, key, value string) *v1.Secret {
	return &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Type: typ,
		Data: map[string][]byte{key: []byte(value)}}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestKeyringFromSecrets(t *testing.T) {
	for _, tc := range []struct {
		name    string
		secrets []*v1.Secret
		image   string
		want    []AuthConfig
		wantErr string
	}{
		{
			name: "dockerconfigjson with auth (padded)",
			secrets: []*v1.Secret{secret("s", v1.SecretTypeDockerConfigJson, v1.DockerConfigJsonKey,
				`{"auths":{"registry.local":{"auth":"`+b64("alice:s3cr:et")+`"}}}`)},
			image: "registry.local/app", want: []AuthConfig{{Username: "alice", Password: "s3cr:et"}},
		},
		{
			name: "dockerconfigjson with auth (unpadded) wins over username",
			secrets: []*v1.Secret{secret("s", v1.SecretTypeDockerConfigJson, v1.DockerConfigJsonKey,
				`{"auths":{"registry.local":{"username":"x","password":"y","auth":"`+strings.TrimRight(b64("bob:pw1"), "=")+`"}}}`)},
			image: "registry.local/app", want: []AuthConfig{{Username: "bob", Password: "pw1"}},
		},
		{
			name: "dockercfg with username and password",
			secrets: []*v1.Secret{secret("s", v1.SecretTypeDockercfg, v1.DockerConfigKey,
				`{"https://index.docker.io/v1/":{"username":"carol","password":"pw","email":"c@example.com"}}`)},
			image: "busybox", want: []AuthConfig{{Username: "carol", Password: "pw"}},
		},
		{
			name: "two secrets: both credentials, in the order of the secrets",
			secrets: []*v1.Secret{
				secret("a", v1.SecretTypeDockerConfigJson, v1.DockerConfigJsonKey, `{"auths":{"registry.local":{"username":"a"}}}`),
				secret("b", v1.SecretTypeDockerConfigJson, v1.DockerConfigJsonKey, `{"auths":{"registry.local":{"username":"b"}}}`),
			},
			image: "registry.local/app", want: []AuthConfig{{Username: "a"}, {Username: "b"}},
		},
		{
			name: "other types and keys contribute nothing",
			secrets: []*v1.Secret{
				secret("opaque", v1.SecretTypeOpaque, v1.DockerConfigJsonKey, `{"auths":{"registry.local":{"username":"a"}}}`),
				secret("wrong-key", v1.SecretTypeDockerConfigJson, v1.DockerConfigKey, `{"registry.local":{"username":"a"}}`),
				secret("empty", v1.SecretTypeDockercfg, v1.DockerConfigKey, ``),
			},
			image: "registry.local/app",
		},
		{
			name:    "invalid JSON names the secret",
			secrets: []*v1.Secret{secret("broken", v1.SecretTypeDockerConfigJson, v1.DockerConfigJsonKey, `{"auths":`)},
			wantErr: "image pull secret ns/broken: parse .dockerconfigjson",
		},
		{
			name: "auth without a colon",
			secrets: []*v1.Secret{secret("noco", v1.SecretTypeDockerConfigJson, v1.DockerConfigJsonKey,
				`{"auths":{"registry.local":{"auth":"`+b64("nocolon")+`"}}}`)},
			wantErr: "must be formatted as base64(username:password)",
		},
		{
			name: "auth not base64",
			secrets: []*v1.Secret{secret("nob64", v1.SecretTypeDockercfg, v1.DockerConfigKey,
				`{"registry.local":{"auth":"!!!"}}`)},
			wantErr: "image pull secret ns/nob64",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := KeyringFromSecrets(tc.secrets)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := k.Lookup(tc.image)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Lookup(%q) = %v, %v; want %v", tc.image, got, err, tc.want)
			}
		})
	}
}
