package criconfig

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

// fakeObjects serves configMaps and secrets of namespace "default" and counts the reads; a
// missing object is NotFound as apiobjects.Manager returns it.
type fakeObjects struct {
	configMaps map[string]map[string]string
	secrets    map[string]map[string]string
	err        error // returned by every read when set
	reads      int
}

var _ Objects = (*fakeObjects)(nil)

func (f *fakeObjects) GetConfigMap(namespace, name string) (*v1.ConfigMap, error) {
	f.reads++
	if f.err != nil {
		return nil, f.err
	}
	data, ok := f.configMaps[name]
	if !ok || namespace != "default" {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmap"}, name)
	}
	return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: data}, nil
}

func (f *fakeObjects) GetSecret(namespace, name string) (*v1.Secret, error) {
	f.reads++
	if f.err != nil {
		return nil, f.err
	}
	data, ok := f.secrets[name]
	if !ok || namespace != "default" {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secret"}, name)
	}
	s := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s, nil
}

func cmKey(name, key string, optional bool) v1.EnvVar {
	return v1.EnvVar{ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: name}, Key: key, Optional: ptr.To(optional)}}}
}

func secretKey(name, key string, optional bool) v1.EnvVar {
	return v1.EnvVar{ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: name}, Key: key, Optional: ptr.To(optional)}}}
}

func named(name string, e v1.EnvVar) v1.EnvVar { e.Name = name; return e }

func fromCM(name, prefix string, optional bool) v1.EnvFromSource {
	return v1.EnvFromSource{Prefix: prefix, ConfigMapRef: &v1.ConfigMapEnvSource{
		LocalObjectReference: v1.LocalObjectReference{Name: name}, Optional: ptr.To(optional)}}
}

func fromSecret(name, prefix string, optional bool) v1.EnvFromSource {
	return v1.EnvFromSource{Prefix: prefix, SecretRef: &v1.SecretEnvSource{
		LocalObjectReference: v1.LocalObjectReference{Name: name}, Optional: ptr.To(optional)}}
}

func TestEnvFromAPIObjects(t *testing.T) {
	objects := func() *fakeObjects {
		return &fakeObjects{
			configMaps: map[string]map[string]string{
				"cfg":   {"b": "2", "a": "1", "mode": "fast"},
				"other": {"a": "other-a"},
			},
			secrets: map[string]map[string]string{"creds": {"user": "admin", "pass": "s3cret"}},
		}
	}
	for _, tc := range []struct {
		name    string
		envFrom []v1.EnvFromSource
		env     []v1.EnvVar
		want    []string // KEY=VALUE in order
		wantErr string
	}{
		{
			name: "configMapKeyRef and secretKeyRef",
			env:  []v1.EnvVar{named("MODE", cmKey("cfg", "mode", false)), named("USER", secretKey("creds", "user", false))},
			want: []string{"MODE=fast", "USER=admin"},
		},
		{
			name: "values expand earlier references",
			env:  []v1.EnvVar{named("USER", secretKey("creds", "user", false)), {Name: "URL", Value: "http://$(USER)@host"}},
			want: []string{"USER=admin", "URL=http://admin@host"},
		},
		{
			name:    "envFrom with prefixes, keys sorted per source",
			envFrom: []v1.EnvFromSource{fromCM("cfg", "CFG_", false), fromSecret("creds", "", false)},
			want:    []string{"CFG_a=1", "CFG_b=2", "CFG_mode=fast", "pass=s3cret", "user=admin"},
		},
		{
			name:    "later sources and env override earlier ones in place",
			envFrom: []v1.EnvFromSource{fromCM("cfg", "", false), fromCM("other", "", false)},
			env:     []v1.EnvVar{{Name: "b", Value: "from-env $(a)"}, {Name: "NEW", Value: "x"}},
			want:    []string{"a=other-a", "b=from-env other-a", "mode=fast", "NEW=x"},
		},
		{
			name:    "missing configMap",
			env:     []v1.EnvVar{named("X", cmKey("absent", "k", false))},
			wantErr: `configmap "absent" not found`,
		},
		{
			name:    "missing key in a configMap",
			env:     []v1.EnvVar{named("X", cmKey("cfg", "nokey", false))},
			wantErr: "couldn't find key nokey in ConfigMap default/cfg",
		},
		{
			name:    "missing secret",
			env:     []v1.EnvVar{named("X", secretKey("absent", "k", false))},
			wantErr: `secret "absent" not found`,
		},
		{
			name:    "missing key in a secret",
			env:     []v1.EnvVar{named("X", secretKey("creds", "nokey", false))},
			wantErr: "couldn't find key nokey in Secret default/creds",
		},
		{
			name: "optional references that miss are left out",
			env: []v1.EnvVar{
				named("A", cmKey("absent", "k", true)), named("B", cmKey("cfg", "nokey", true)),
				named("C", secretKey("absent", "k", true)), named("D", secretKey("creds", "nokey", true)),
				{Name: "E", Value: "$(A)"},
			},
			want: []string{"E=$(A)"},
		},
		{
			name:    "an optional miss keeps the envFrom value",
			envFrom: []v1.EnvFromSource{fromCM("cfg", "", false)},
			env:     []v1.EnvVar{named("mode", cmKey("cfg", "nokey", true))},
			want:    []string{"a=1", "b=2", "mode=fast"},
		},
		{
			name:    "missing envFrom sources",
			envFrom: []v1.EnvFromSource{fromSecret("absent", "", false)},
			wantErr: `secret "absent" not found`,
		},
		{
			name:    "missing optional envFrom sources are skipped",
			envFrom: []v1.EnvFromSource{fromCM("absent", "", true), fromSecret("absent", "", true), fromSecret("creds", "S_", true)},
			want:    []string{"S_pass=s3cret", "S_user=admin"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod()
			c := &pod.Spec.Containers[0]
			c.EnvFrom, c.Env = tc.envFrom, tc.env
			kvs, err := Env(pod, c, PodIdentity{Objects: objects()})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q (upstream's message)", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := keyValues(kvs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("env %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEnvReadsEachObjectOnce(t *testing.T) {
	pod := testPod()
	c := &pod.Spec.Containers[0]
	c.EnvFrom = []v1.EnvFromSource{fromCM("cfg", "", false)}
	c.Env = []v1.EnvVar{named("A", cmKey("cfg", "a", false)), named("B", cmKey("cfg", "b", false))}
	f := &fakeObjects{configMaps: map[string]map[string]string{"cfg": {"a": "1", "b": "2"}}}
	if _, err := Env(pod, c, PodIdentity{Objects: f}); err != nil {
		t.Fatal(err)
	}
	if f.reads != 1 {
		t.Errorf("%d reads of configMap cfg, want 1", f.reads)
	}
}

func TestEnvAPIObjectErrors(t *testing.T) {
	pod := testPod()
	c := &pod.Spec.Containers[0]
	for _, tc := range []struct {
		name    string
		envFrom []v1.EnvFromSource
		env     []v1.EnvVar
		objects Objects
		want    error
	}{
		{name: "no API server: configMapKeyRef", env: []v1.EnvVar{named("X", cmKey("cfg", "k", false))}, want: ErrNeedsAPIServer},
		{name: "no API server: secretKeyRef", env: []v1.EnvVar{named("X", secretKey("s", "k", true))}, want: ErrNeedsAPIServer},
		{name: "no API server: envFrom", envFrom: []v1.EnvFromSource{fromCM("cfg", "", true)}, want: ErrNeedsAPIServer},
		{
			name:    "other errors fail even optional references",
			env:     []v1.EnvVar{named("X", cmKey("cfg", "k", true))},
			objects: &fakeObjects{err: errSync},
			want:    errSync,
		},
		{
			name:    "other errors fail optional envFrom",
			envFrom: []v1.EnvFromSource{fromSecret("s", "", true)},
			objects: &fakeObjects{err: errSync},
			want:    errSync,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.EnvFrom, c.Env = tc.envFrom, tc.env
			_, err := Env(pod, c, PodIdentity{Objects: tc.objects})
			if !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
		})
	}
}

var errSync = fmt.Errorf("failed to sync configmap cache: timed out")

// keyValues prints the environment as KEY=VALUE, in order.
func keyValues(kvs []*runtimeapi.KeyValue) []string {
	var out []string
	for _, kv := range kvs {
		out = append(out, kv.Key+"="+string(kv.Value))
	}
	return out
}
