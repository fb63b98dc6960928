package apiobjects

import (
	"context"
	"github.com/nodelet/nodelet/internal/fakekube"
	"io"
	"os"
	"slices"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// TestMain keeps the reflectors' logs of expected failures out of the test output, and
// apimachinery's HandleError from sleeping: its error back-off remembers the wall-clock time of
// package initialization, decades after the clock of a synctest bubble (2000-01-01) starts, so
// the first reflector error in a bubble would sleep for decades.
func TestMain(m *testing.M) {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	utilruntime.ErrorHandlers = nil
	os.Exit(m.Run())
}

const ns = "ns"

func configMap(name string, data map[string]string) *v1.ConfigMap {
	return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("cm-" + name)}, Data: data}
}

func secret(name string, data map[string]string) *v1.Secret {
	s := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("secret-" + name)}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// podUsing is a pod in ns that mounts the configMaps as volumes and reads the secrets in env.
func podUsing(uid string, configMaps []string, secrets []string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pod-" + uid, UID: types.UID(uid)},
		Spec: v1.PodSpec{ServiceAccountName: "default", Containers: []v1.Container{{Name: "app"}}}}
	for _, n := range configMaps {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: n, VolumeSource: v1.VolumeSource{
			ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: n}}}})
	}
	for _, n := range secrets {
		p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, v1.EnvVar{Name: "E", ValueFrom: &v1.EnvVarSource{
			SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: n}, Key: "k"}}})
	}
	return p
}

// harness is a Manager over a fake clientset that behaves as the Node authorizer: configMaps and
// secrets may be listed and watched only one at a time, by name. It runs inside a synctest
// bubble with the real clock (the bubble's fake time).
type harness struct {
	t      *testing.T
	client *fake.Clientset
	m      *Manager

	mu      sync.Mutex
	changes [][]types.UID
	failing error // every list fails with it while set
}

func newHarness(t *testing.T, objects ...runtime.Object) *harness {
	t.Helper()
	h := &harness{t: t, client: fake.NewClientset(objects...)}
	for _, resource := range []string{"configmaps", "secrets"} {
		h.client.PrependReactor("list", resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
			if err := h.listError(); err != nil {
				return true, nil, err
			}
			return nodeAuthorizer(a, a.(k8stesting.ListAction).GetListRestrictions().Fields)
		})
		h.client.PrependWatchReactor(resource, func(a k8stesting.Action) (bool, watch.Interface, error) {
			handled, _, err := nodeAuthorizer(a, a.(k8stesting.WatchAction).GetWatchRestrictions().Fields)
			return handled, nil, err
		})
	}
	m, err := New(Config{Client: fakekube.Core(h.client), Clock: clock.RealClock{}, OnChange: func(uids []types.UID) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.changes = append(h.changes, uids)
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.m = m
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return h
}

// nodeAuthorizer refuses lists and watches that do not select one object by name.
func nodeAuthorizer(a k8stesting.Action, sel fields.Selector) (bool, runtime.Object, error) {
	if _, ok := sel.RequiresExactMatch("metadata.name"); !ok {
		return true, nil, apierrors.NewForbidden(a.GetResource().GroupResource(), "", nil)
	}
	return false, nil, nil
}

func (h *harness) listError() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failing
}

func (h *harness) setListError(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failing = err
}

// takeChanges returns the OnChange calls so far and forgets them.
func (h *harness) takeChanges() [][]types.UID {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.changes
	h.changes = nil
	return out
}

// actions lists the client's calls as "<verb> <resource>[ <name or field selector>]".
func (h *harness) actions(verb string) []string {
	var out []string
	for _, a := range h.client.Actions() {
		if a.GetVerb() != verb {
			continue
		}
		s := a.GetResource().Resource
		switch a := a.(type) {
		case k8stesting.GetAction:
			s += " " + a.GetName()
		case k8stesting.ListAction:
			s += " " + a.GetListRestrictions().Fields.String()
		case k8stesting.WatchAction:
			s += " " + a.GetWatchRestrictions().Fields.String()
		}
		out = append(out, s)
	}
	return out
}

func (h *harness) updateConfigMap(cm *v1.ConfigMap) {
	h.t.Helper()
	if _, err := h.client.CoreV1().ConfigMaps(ns).Update(h.t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) mustGetConfigMap(name string) *v1.ConfigMap {
	h.t.Helper()
	cm, err := h.m.GetConfigMap(ns, name)
	if err != nil {
		h.t.Fatalf("GetConfigMap(%s): %v", name, err)
	}
	return cm
}

func uids(s ...string) []types.UID {
	out := make([]types.UID, len(s))
	for i, u := range s {
		out[i] = types.UID(u)
	}
	return out
}

func equalChanges(got [][]types.UID, want ...[]types.UID) bool {
	return slices.EqualFunc(got, want, func(a, b []types.UID) bool { return slices.Equal(a, b) })
}
