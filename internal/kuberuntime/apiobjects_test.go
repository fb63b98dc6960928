package kuberuntime

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/credentials"
)

// fakeObjects serves configMaps and secrets by "namespace/name"; anything else is NotFound, as
// apiobjects.Manager returns it.
type fakeObjects struct {
	mu         sync.Mutex
	configMaps map[string]*v1.ConfigMap
	secrets    map[string]*v1.Secret
	reads      []string
}

var _ APIObjects = (*fakeObjects)(nil)

func (f *fakeObjects) GetConfigMap(namespace, name string) (*v1.ConfigMap, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, "configmap "+namespace+"/"+name)
	if cm, ok := f.configMaps[namespace+"/"+name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmap"}, name)
}

func (f *fakeObjects) GetSecret(namespace, name string) (*v1.Secret, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, "secret "+namespace+"/"+name)
	if s, ok := f.secrets[namespace+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secret"}, name)
}

// pullSecret is a kubernetes.io/dockerconfigjson secret in "default" with one user per registry.
func pullSecret(name string, registryUsers map[string]string) *v1.Secret {
	var entries []string
	for registry, user := range registryUsers {
		auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + user + "-pw"))
		entries = append(entries, fmt.Sprintf("%q:{\"auth\":%q}", registry, auth))
	}
	return &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Type: v1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{v1.DockerConfigJsonKey: []byte(`{"auths":{` + strings.Join(entries, ",") + `}}`)}}
}

func withPullSecrets(names ...string) podOpt {
	return mod(func(p *v1.Pod) {
		for _, n := range names {
			p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, v1.LocalObjectReference{Name: n})
		}
	})
}

// authUsers lists the usernames of the pulls, "" for an anonymous pull.
func authUsers(auths []*runtimeapi.AuthConfig) []string {
	out := make([]string, len(auths))
	for i, a := range auths {
		out[i] = a.GetUsername()
	}
	return out
}

func TestPullWithImagePullSecrets(t *testing.T) {
	secrets := map[string]*v1.Secret{
		"default/alice":  pullSecret("alice", map[string]string{"registry.local": "alice"}),
		"default/team":   pullSecret("team", map[string]string{"registry.local/app": "team"}),
		"default/other":  pullSecret("other", map[string]string{"quay.io": "quay"}),
		"default/broken": {ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "broken"}, Type: v1.SecretTypeDockerConfigJson, Data: map[string][]byte{v1.DockerConfigJsonKey: []byte("{")}},
	}
	refused := errors.New("401 Unauthorized")
	for _, tc := range []struct {
		name         string
		noObjects    bool
		secrets      []string
		pullErrs     []error
		wantUsers    []string // per PullImage call
		wantReason   string   // "" when app starts
		wantMsg      string   // in the waiting message
		wantMissing  bool     // FailedToRetrieveImagePullSecret event
		wantNoPulls  bool
		wantSecretRd int
	}{
		{name: "matching secret", secrets: []string{"alice"}, wantUsers: []string{"alice"}, wantSecretRd: 1},
		{name: "no matching credential: anonymous", secrets: []string{"other"}, wantUsers: []string{""}, wantSecretRd: 1},
		{name: "no Objects (standalone): anonymous", noObjects: true, secrets: []string{"alice"}, wantUsers: []string{""}},
		{name: "missing secret skipped", secrets: []string{"absent", "alice"}, wantUsers: []string{"alice"}, wantSecretRd: 2},
		{name: "most specific first, next one after a failure", secrets: []string{"alice", "team"},
			pullErrs: []error{refused}, wantUsers: []string{"team", "alice"}, wantSecretRd: 2},
		{name: "every credential fails: no anonymous attempt (as upstream)", secrets: []string{"alice", "team"},
			pullErrs: []error{refused, errors.New("403 Forbidden")}, wantUsers: []string{"team", "alice"},
			wantReason: ReasonErrImagePull, wantMsg: "[401 Unauthorized, 403 Forbidden]", wantSecretRd: 2},
		{name: "pull fails with a missing secret: event", secrets: []string{"absent"}, pullErrs: []error{refused},
			wantUsers: []string{""}, wantReason: ReasonErrImagePull, wantMsg: "401 Unauthorized", wantMissing: true, wantSecretRd: 1},
		{name: "invalid secret fails the pull", secrets: []string{"broken"}, wantReason: ReasonErrImagePull,
			wantMsg: "image pull secret default/broken", wantNoPulls: true, wantSecretRd: 1},
		{name: "empty names ignored", secrets: []string{"", "alice"}, wantUsers: []string{"alice"}, wantSecretRd: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.img.RemoveImage(testImage)
			objects := &fakeObjects{secrets: secrets}
			if !tc.noObjects {
				h.m.deps.Objects = objects
			}
			for _, err := range tc.pullErrs {
				h.img.InjectError("PullImage", err)
			}
			res := h.sync(newPod(withPullSecrets(tc.secrets...)))
			if got := res.Waiting["app"].Reason; got != tc.wantReason {
				t.Fatalf("waiting %q, want %q (err %v)", got, tc.wantReason, res.Err)
			}
			if tc.wantReason != "" && !strings.Contains(res.Waiting["app"].Message, tc.wantMsg) {
				t.Errorf("waiting message %q, want it to contain %q", res.Waiting["app"].Message, tc.wantMsg)
			}
			auths := h.img.PullAuths()
			if tc.wantNoPulls {
				if len(auths) != 0 {
					t.Errorf("%d pulls, want none", len(auths))
				}
			} else if got := authUsers(auths); strings.Join(got, ",") != strings.Join(tc.wantUsers, ",") {
				t.Errorf("pulls as %q, want %q", got, tc.wantUsers)
			}
			if n := len(objects.reads); n != tc.wantSecretRd {
				t.Errorf("secret reads %v, want %d", objects.reads, tc.wantSecretRd)
			}
			if got := h.rec.has("FailedToRetrieveImagePullSecret"); got != tc.wantMissing {
				t.Errorf("FailedToRetrieveImagePullSecret event: %t, want %t (%v)", got, tc.wantMissing, h.rec.all())
			}
		})
	}
}

func TestPullPassesTheWholeAuthConfig(t *testing.T) {
	h := newHarness(t)
	h.img.RemoveImage(testImage)
	h.m.deps.Objects = &fakeObjects{secrets: map[string]*v1.Secret{
		"default/s": pullSecret("s", map[string]string{"https://registry.local/v1/": "alice"})}}
	h.mustSync(newPod(withPullSecrets("s")))
	auths := h.img.PullAuths()
	if len(auths) != 1 {
		t.Fatalf("%d pulls, want 1", len(auths))
	}
	want := &runtimeapi.AuthConfig{Username: "alice", Password: "alice-pw"}
	if got := auths[0]; got.String() != want.String() {
		t.Errorf("AuthConfig %v, want %v", got, want)
	}
}

func TestPresentImageReadsNoPullSecret(t *testing.T) {
	h := newHarness(t)
	objects := &fakeObjects{}
	h.m.deps.Objects = objects
	h.mustSync(newPod(withPullSecrets("alice")))
	if len(objects.reads) != 0 || h.img.CallCount("PullImage") != 0 {
		t.Errorf("reads %v and %d pulls for a present image, want none", objects.reads, h.img.CallCount("PullImage"))
	}
}

func TestEnvFromAPIObjects(t *testing.T) {
	envPod := newPod(withContainer("app", func(c *v1.Container) {
		c.Env = []v1.EnvVar{{Name: "MODE", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Key: "mode"}}}}
		c.EnvFrom = []v1.EnvFromSource{{Prefix: "S_", SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}}}}
	}))
	t.Run("resolved", func(t *testing.T) {
		h := newHarness(t)
		h.m.deps.Objects = &fakeObjects{
			configMaps: map[string]*v1.ConfigMap{"default/cfg": {Data: map[string]string{"mode": "fast"}}},
			secrets:    map[string]*v1.Secret{"default/creds": {Data: map[string][]byte{"user": []byte("admin")}}},
		}
		h.mustSync(envPod)
		_, cfg := h.rt.Container(containerID(envPod, "app", 0))
		if cfg == nil {
			t.Fatalf("app not created: %v", h.rt.ContainerIDs())
		}
		env := map[string]string{}
		for _, kv := range cfg.Envs {
			env[kv.Key] = string(kv.Value)
		}
		if env["MODE"] != "fast" || env["S_user"] != "admin" {
			t.Errorf("env %v, want MODE=fast and S_user=admin", env)
		}
	})
	t.Run("missing configMap", func(t *testing.T) {
		h := newHarness(t)
		h.m.deps.Objects = &fakeObjects{secrets: map[string]*v1.Secret{"default/creds": {}}}
		res := h.sync(envPod)
		w := res.Waiting["app"]
		if w.Reason != ReasonCreateContainerConfigError || !strings.Contains(w.Message, `configmap "cfg" not found`) {
			t.Errorf("waiting %q %q, want CreateContainerConfigError with upstream's message", w.Reason, w.Message)
		}
		if n := h.rt.CallCount("CreateContainer"); n != 0 {
			t.Errorf("%d creates", n)
		}
	})
}

type fakeCredentialPlugins struct {
	auths []credentials.AuthConfig
	errs  []error
	asked []string
}

func (f *fakeCredentialPlugins) Lookup(_ context.Context, image string) ([]credentials.AuthConfig, []error) {
	f.asked = append(f.asked, image)
	return f.auths, f.errs
}

var _ CredentialPlugins = (*fakeCredentialPlugins)(nil)

// The credential provider plugins' credentials are tried after the pull secrets' (upstream's
// union keyring); a plugin's failure is in the message of a pull that fails.
func TestPullWithCredentialPlugins(t *testing.T) {
	refused := errors.New("401 Unauthorized")
	t.Run("after the secrets", func(t *testing.T) {
		h := newHarness(t)
		h.img.RemoveImage(testImage)
		h.m.deps.Objects = &fakeObjects{secrets: map[string]*v1.Secret{"default/alice": pullSecret("alice", map[string]string{"registry.local": "alice"})}}
		plugins := &fakeCredentialPlugins{auths: []credentials.AuthConfig{{Username: "plugin", Password: "pw"}}}
		h.m.deps.CredentialPlugins = plugins
		h.img.InjectError("PullImage", refused)
		h.mustSync(newPod(withPullSecrets("alice")))
		if got := authUsers(h.img.PullAuths()); strings.Join(got, ",") != "alice,plugin" {
			t.Errorf("pulls as %q, want the secret's then the plugin's", got)
		}
		if len(plugins.asked) != 1 || plugins.asked[0] != testImage {
			t.Errorf("plugins asked for %v, want %s", plugins.asked, testImage)
		}
	})
	t.Run("a failed plugin is in the failed pull's message", func(t *testing.T) {
		h := newHarness(t)
		h.img.RemoveImage(testImage)
		h.m.deps.CredentialPlugins = &fakeCredentialPlugins{errs: []error{errors.New(`credential provider "login": no answer within 1m0s (killed)`)}}
		h.img.InjectError("PullImage", refused)
		res := h.sync(newPod())
		w := res.Waiting["app"]
		if w.Reason != ReasonErrImagePull || !strings.Contains(w.Message, "401 Unauthorized") || !strings.Contains(w.Message, `credential provider "login"`) {
			t.Errorf("waiting %+v, want ErrImagePull with the pull's and the plugin's errors", w)
		}
		if got := authUsers(h.img.PullAuths()); strings.Join(got, ",") != "" {
			t.Errorf("pulls as %q, want one anonymous pull", got)
		}
	})
}
