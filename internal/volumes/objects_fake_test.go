package volumes

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// fakeObjects serves ConfigMaps and Secrets from maps keyed "ns/name" and makes tokens
// "token-<audience>-<expirationSeconds>-<generation>".
type fakeObjects struct {
	mu         sync.Mutex
	configMaps map[string]*v1.ConfigMap
	secrets    map[string]*v1.Secret
	tokenGen   int
	tokenCalls []v1.ServiceAccountTokenProjection
	err        error // returned by every call when set
}

var _ Objects = (*fakeObjects)(nil)

func newFakeObjects() *fakeObjects {
	return &fakeObjects{configMaps: map[string]*v1.ConfigMap{}, secrets: map[string]*v1.Secret{}}
}

func (f *fakeObjects) GetConfigMap(ns, name string) (*v1.ConfigMap, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	if cm, ok := f.configMaps[ns+"/"+name]; ok {
		return cm.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func (f *fakeObjects) GetSecret(ns, name string) (*v1.Secret, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	if s, ok := f.secrets[ns+"/"+name]; ok {
		return s.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func (f *fakeObjects) GetServiceAccountToken(pod *v1.Pod, p *v1.ServiceAccountTokenProjection) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return "", f.err
	}
	f.tokenCalls = append(f.tokenCalls, *p)
	return "token-" + p.Audience + "-" + strconv.FormatInt(ptr.Deref(p.ExpirationSeconds, 0), 10) + "-" + strconv.Itoa(f.tokenGen), nil
}

func (f *fakeObjects) setConfigMap(name string, data map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.configMaps["default/"+name] = &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Data: data}
}

func (f *fakeObjects) setSecret(name string, data map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	f.secrets["default/"+name] = s
}

func newAPITestManager(t *testing.T, objs Objects, mnt Mounter) (*Manager, string) {
	t.Helper()
	root := t.TempDir()
	return New(Config{RootDir: root, Objects: objs, Clock: clocktesting.NewFakePassiveClock(testTime),
		NodeAllocatableMemory: 8 << 30, NodeAllocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4")}}, mnt), root
}

func cmVol(name, cm string) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
		LocalObjectReference: v1.LocalObjectReference{Name: cm}}}}
}

func secretVol(name, secret string) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: secret}}}
}

// readVolume returns the user-visible files of a volume (through the symlinks), by path.
func readVolume(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "..") {
			continue
		}
		top := filepath.Join(dir, e.Name())
		if fi, err := os.Stat(top); err != nil {
			t.Fatal(err)
		} else if fi.IsDir() {
			top += "/" // makes the walk follow a top-level symlink to a directory
		}
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			out[strings.TrimSuffix(strings.TrimPrefix(p, dir+"/"), "/")] = string(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
