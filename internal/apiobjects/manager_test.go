package apiobjects

import (
	"errors"
	"github.com/nodelet/nodelet/internal/fakekube"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

func TestNewRequiresClientAndClock(t *testing.T) {
	if _, err := New(Config{Clock: clock.RealClock{}}); err == nil {
		t.Error("no client: no error")
	}
	if _, err := New(Config{Client: fakekube.Core(fake.NewClientset())}); err == nil {
		t.Error("no clock: no error")
	}
}

func TestReadsWatchedObjectsByName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, configMap("cfg", map[string]string{"k": "v"}), configMap("unrelated", nil),
			secret("creds", map[string]string{"k": "s3cret"}))
		h.m.RegisterPod(podUsing("p1", []string{"cfg", "missing"}, []string{"creds"}))

		if cm := h.mustGetConfigMap("cfg"); cm.Data["k"] != "v" {
			t.Errorf("configMap data %v", cm.Data)
		}
		s, err := h.m.GetSecret(ns, "creds")
		if err != nil || string(s.Data["k"]) != "s3cret" {
			t.Errorf("GetSecret: %v, %v", s, err)
		}
		_, err = h.m.GetConfigMap(ns, "missing")
		if !apierrors.IsNotFound(err) || err.Error() != `configmap "missing" not found` {
			t.Errorf("missing configMap: %v, want upstream's NotFound", err)
		}
		synctest.Wait()
		wantLists := []string{"configmaps metadata.name=cfg", "configmaps metadata.name=missing", "secrets metadata.name=creds"}
		if got := sorted(h.actions("list")); !slices.Equal(got, wantLists) {
			t.Errorf("lists %q, want %q (one per object, by name)", got, wantLists)
		}
		wantWatches := []string{"configmaps metadata.name=cfg", "configmaps metadata.name=missing", "secrets metadata.name=creds"}
		if got := sorted(h.actions("watch")); !slices.Equal(got, wantWatches) {
			t.Errorf("watches %q, want %q", got, wantWatches)
		}
		if got := h.actions("get"); len(got) != 0 {
			t.Errorf("GETs %q: watched objects are read from the cache", got)
		}
	})
}

func TestOnChangeNamesTheReferencingPods(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, configMap("cfg", map[string]string{"k": "v1"}), configMap("other", nil))
		h.m.RegisterPod(podUsing("p2", []string{"cfg"}, nil))
		h.m.RegisterPod(podUsing("p1", []string{"cfg", "other"}, nil))
		h.m.RegisterPod(podUsing("p3", []string{"other"}, nil))
		h.mustGetConfigMap("cfg")
		h.mustGetConfigMap("other")
		synctest.Wait() // the watches are open
		if got := h.takeChanges(); len(got) != 0 {
			t.Errorf("OnChange %v on the first list, want none", got)
		}

		h.updateConfigMap(configMap("cfg", map[string]string{"k": "v2"}))
		synctest.Wait()
		if got := h.takeChanges(); !equalChanges(got, uids("p1", "p2")) {
			t.Errorf("after an update: OnChange %v, want [[p1 p2]]", got)
		}
		if cm := h.mustGetConfigMap("cfg"); cm.Data["k"] != "v2" {
			t.Errorf("after an update: data %v, want v2", cm.Data)
		}

		if err := h.client.CoreV1().ConfigMaps(ns).Delete(t.Context(), "cfg", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := h.takeChanges(); !equalChanges(got, uids("p1", "p2")) {
			t.Errorf("after a delete: OnChange %v, want [[p1 p2]]", got)
		}
		if _, err := h.m.GetConfigMap(ns, "cfg"); !apierrors.IsNotFound(err) {
			t.Errorf("after a delete: %v, want NotFound", err)
		}

		if _, err := h.client.CoreV1().ConfigMaps(ns).Create(t.Context(), configMap("cfg", map[string]string{"k": "v3"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := h.takeChanges(); !equalChanges(got, uids("p1", "p2")) {
			t.Errorf("after a create: OnChange %v, want [[p1 p2]]", got)
		}
		if cm := h.mustGetConfigMap("cfg"); cm.Data["k"] != "v3" {
			t.Errorf("after a create: data %v, want v3", cm.Data)
		}

		h.updateConfigMap(configMap("other", map[string]string{"x": "y"}))
		synctest.Wait()
		if got := h.takeChanges(); !equalChanges(got, uids("p1", "p3")) {
			t.Errorf("another object: OnChange %v, want [[p1 p3]] only", got)
		}
	})
}

func TestUnregisterStopsWatching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, configMap("cfg", map[string]string{"k": "v1"}))
		p1, p2 := podUsing("p1", []string{"cfg"}, nil), podUsing("p2", []string{"cfg"}, nil)
		h.m.RegisterPod(p1)
		h.m.RegisterPod(p2)
		h.mustGetConfigMap("cfg")
		synctest.Wait()

		h.m.UnregisterPod(p1)
		h.updateConfigMap(configMap("cfg", map[string]string{"k": "v2"}))
		synctest.Wait()
		if got := h.takeChanges(); !equalChanges(got, uids("p2")) {
			t.Errorf("one pod left: OnChange %v, want [[p2]]", got)
		}

		h.m.UnregisterPod(p2)
		h.m.UnregisterPod(p2) // again: nothing to do
		synctest.Wait()
		h.updateConfigMap(configMap("cfg", map[string]string{"k": "v3"}))
		synctest.Wait()
		if got := h.takeChanges(); len(got) != 0 {
			t.Errorf("no pod left: OnChange %v, want none", got)
		}
		// Not referenced any more: a direct GET.
		if cm := h.mustGetConfigMap("cfg"); cm.Data["k"] != "v3" {
			t.Errorf("direct GET: data %v", cm.Data)
		}
		if got := h.actions("get"); !slices.Equal(got, []string{"configmaps cfg"}) {
			t.Errorf("GETs %q, want one of cfg", got)
		}
		if n := len(h.actions("list")); n != 1 {
			t.Errorf("%d lists, want 1", n)
		}
	})
}

func TestRegisterAgainAppliesTheDifference(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, configMap("a", nil), configMap("b", nil))
		h.m.RegisterPod(podUsing("p1", []string{"a"}, nil))
		h.mustGetConfigMap("a")
		h.m.RegisterPod(podUsing("p1", []string{"a"}, nil)) // unchanged: no new reflector
		h.m.RegisterPod(podUsing("p1", []string{"b"}, nil))
		h.mustGetConfigMap("b")
		h.mustGetConfigMap("a") // no longer referenced: GET
		synctest.Wait()
		if got := sorted(h.actions("list")); !slices.Equal(got, []string{"configmaps metadata.name=a", "configmaps metadata.name=b"}) {
			t.Errorf("lists %q, want one per object", got)
		}
		if got := h.actions("get"); !slices.Equal(got, []string{"configmaps a"}) {
			t.Errorf("GETs %q, want a", got)
		}
		h.updateConfigMap(configMap("a", map[string]string{"x": "1"}))
		synctest.Wait()
		if got := h.takeChanges(); len(got) != 0 {
			t.Errorf("OnChange %v for an object the pod no longer references", got)
		}
	})
}

func TestSurvivesAPIOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, configMap("cfg", map[string]string{"k": "v"}))
		h.setListError(apierrors.NewServiceUnavailable("etcd is down"))
		h.m.RegisterPod(podUsing("p1", []string{"cfg"}, nil))
		start := time.Now()
		_, err := h.m.GetConfigMap(ns, "cfg")
		if err == nil || !strings.Contains(err.Error(), "failed to sync configmap cache") || !strings.Contains(err.Error(), "ns/cfg") {
			t.Fatalf("during the outage: %v, want a sync timeout naming the object", err)
		}
		if waited := time.Since(start); waited != DefaultSyncTimeout {
			t.Errorf("waited %v, want the sync timeout %v", waited, DefaultSyncTimeout)
		}
		h.setListError(nil)
		time.Sleep(time.Minute) // the reflector's back-off
		if cm := h.mustGetConfigMap("cfg"); cm.Data["k"] != "v" {
			t.Errorf("after the outage: data %v", cm.Data)
		}
		if n := len(h.actions("list")); n < 2 {
			t.Errorf("%d lists, want retries", n)
		}
	})
}

func TestImmutableObjectsStopBeingWatched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cm := configMap("frozen", map[string]string{"k": "v1"})
		cm.Immutable = ptr.To(true)
		h := newHarness(t, cm)
		h.m.RegisterPod(podUsing("p1", []string{"frozen"}, nil))
		h.mustGetConfigMap("frozen")
		synctest.Wait()
		// The fake lets an immutable object change; the API server would not.
		changed := cm.DeepCopy()
		changed.Data["k"] = "v2"
		h.updateConfigMap(changed)
		synctest.Wait()
		if got := h.takeChanges(); len(got) != 0 {
			t.Errorf("OnChange %v for an immutable object", got)
		}
		if got := h.mustGetConfigMap("frozen"); got.Data["k"] != "v1" {
			t.Errorf("data %v, want the cached v1", got.Data)
		}
		if n := len(h.actions("list")) + len(h.actions("get")); n != 1 {
			t.Errorf("%d reads from the API server, want the first list only", n)
		}
	})
}

func TestDirectGetOfUnreferencedObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, secret("creds", map[string]string{"k": "v"}))
		s, err := h.m.GetSecret(ns, "creds")
		if err != nil || string(s.Data["k"]) != "v" {
			t.Errorf("GetSecret: %v, %v", s, err)
		}
		_, err = h.m.GetSecret(ns, "absent")
		if !apierrors.IsNotFound(err) || err.Error() != `secret "absent" not found` {
			t.Errorf("absent secret: %v, want upstream's NotFound", err)
		}
		h.client.PrependReactor("get", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewInternalError(errors.New("boom"))
		})
		_, err = h.m.GetConfigMap(ns, "cfg")
		if err == nil || apierrors.IsNotFound(err) || !strings.Contains(err.Error(), "get configmap ns/cfg") {
			t.Errorf("failed GET: %v, want an error naming the object", err)
		}
	})
}

func TestAfterShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, configMap("cfg", map[string]string{"k": "v"}))
		h.m.RegisterPod(podUsing("p1", []string{"cfg"}, nil))
		h.mustGetConfigMap("cfg")
		h.m.shutdown()
		if cm := h.mustGetConfigMap("cfg"); cm.Data["k"] != "v" {
			t.Errorf("listed before the shutdown: %v", cm.Data)
		}
		h.m.RegisterPod(podUsing("p2", []string{"late"}, nil))
		if _, err := h.m.GetConfigMap(ns, "late"); err == nil || !strings.Contains(err.Error(), "failed to sync") {
			t.Errorf("referenced after the shutdown: %v, want a sync error", err)
		}
		if got := h.actions("list"); len(got) != 1 {
			t.Errorf("lists %q, want no reflector after the shutdown", got)
		}
	})
}

func TestStoreIgnoresOtherObjects(t *testing.T) {
	var calls int
	s := newObjectStore("cfg", func() { calls++ })
	other := configMap("other", nil)
	mine := configMap("cfg", nil)
	mine.ResourceVersion = "1"
	if err := s.Replace([]any{other, mine}, "1"); err != nil {
		t.Fatal(err)
	}
	for _, op := range []func(any) error{s.Add, s.Update, s.Delete} {
		if err := op(other); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 0 {
		t.Errorf("%d changes from another object", calls)
	}
	// A relist with the same version is no change; a new version is.
	_ = s.Replace([]any{mine.DeepCopy()}, "2")
	newer := mine.DeepCopy()
	newer.ResourceVersion = "2"
	_ = s.Replace([]any{newer}, "3")
	if calls != 1 {
		t.Errorf("%d changes, want 1 (the new version)", calls)
	}
	if obj, ok := s.wait(clock.RealClock{}, 0); !ok || obj.(*v1.ConfigMap).ResourceVersion != "2" {
		t.Errorf("store holds %v, %t", obj, ok)
	}
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}
