package podconfig

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/fakekube"
)

// mirrorRecorder is a MirrorSink that keeps the last set.
type mirrorRecorder struct {
	mu   sync.Mutex
	last []*v1.Pod
	sets int
}

var _ MirrorSink = (*mirrorRecorder)(nil)

func (m *mirrorRecorder) SetMirrorPods(pods []*v1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last = pods
	m.sets++
}

func (m *mirrorRecorder) names() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return names(m.last)
}

func apiPod(name string, uid string, mods ...func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(uid)},
		Spec: v1.PodSpec{NodeName: "n1", Containers: []v1.Container{{Name: "c", Image: "busybox:1"}},
			ServiceAccountName: "default"}} // API pods may reference API objects
	for _, m := range mods {
		m(p)
	}
	return p
}

// drainUpdates returns the updates the mux has delivered so far, as "OP:name,name".
func drainUpdates(m *Mux) []string {
	var out []string
	for {
		select {
		case u := <-m.Updates():
			out = append(out, u.Op.String()+":"+names(u.Pods))
		default:
			return out
		}
	}
}

type apiHarness struct {
	client  *fake.Clientset
	mux     *Mux
	mirrors *mirrorRecorder
	stop    func()
}

// startAPISource runs the source in the synctest bubble of the calling test.
func startAPISource(t *testing.T, client *fake.Clientset, synced func() bool) *apiHarness {
	t.Helper()
	h := &apiHarness{client: client, mux: NewMux(clock.RealClock{}, LogReporter{}, 50), mirrors: &mirrorRecorder{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := RunAPISource(ctx, APIConfig{Client: fakekube.Core(client), NodeName: "n1", Sink: h.mux, Mirrors: h.mirrors,
			Clock: clock.RealClock{}, NodeSynced: synced}); err != nil {
			t.Errorf("RunAPISource: %v", err)
		}
	}()
	h.stop = func() { cancel(); <-done }
	synctest.Wait()
	return h
}

func TestAPISourceTurnsChangesIntoOperations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		mirror := apiPod("static-n1", "m1", func(p *v1.Pod) {
			p.Annotations = map[string]string{ConfigMirrorAnnotationKey: "hash", ConfigSourceAnnotationKey: FileSource}
		})
		client := fake.NewClientset(apiPod("a", "ua"), mirror)
		var selector atomic.Value
		client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
			selector.Store(a.(k8stesting.ListAction).GetListRestrictions().Fields.String())
			return false, nil, nil
		})
		h := startAPISource(t, client, nil)
		defer h.stop()

		if got := selector.Load(); got != "spec.nodeName=n1" {
			t.Errorf("listed with field selector %q, want spec.nodeName=n1", got)
		}
		if got := drainUpdates(h.mux); strings.Join(got, " ") != "ADD:a" {
			t.Fatalf("first listing: %v, want ADD:a (the mirror pod is not a pod to run)", got)
		}
		if h.mirrors.names() != "static-n1" {
			t.Errorf("mirror pods %q, want static-n1", h.mirrors.names())
		}
		if !h.mux.SeenAllSources(APISource) {
			t.Error("the api source's first listing did not mark it seen")
		}
		pods := h.client.CoreV1().Pods("ns")

		step := func(what string, change func(p *v1.Pod), want string) {
			t.Helper()
			p, err := pods.Get(ctx, "a", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			change(p)
			if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			if got := strings.Join(drainUpdates(h.mux), " "); got != want {
				t.Errorf("%s: updates %q, want %q", what, got, want)
			}
		}
		step("status only", func(p *v1.Pod) { p.Status.Phase = v1.PodRunning }, "RECONCILE:a")
		step("spec", func(p *v1.Pod) { p.Spec.Containers[0].Image = "busybox:2" }, "UPDATE:a")
		step("nothing the kubelet looks at", func(p *v1.Pod) { p.ResourceVersion = "" }, "")
		step("deletion", func(p *v1.Pod) {
			now := metav1.NewTime(time.Now())
			p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, ptr.To[int64](30)
		}, "DELETE:a")

		if _, err := pods.Create(ctx, apiPod("b", "ub"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		got := drainUpdates(h.mux)
		if strings.Join(got, " ") != "ADD:b" {
			t.Fatalf("a new pod: %v", got)
		}
		if err := pods.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := pods.Delete(ctx, "static-n1", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := strings.Join(drainUpdates(h.mux), " "); got != "REMOVE:a" {
			t.Errorf("a pod gone from the API: %q, want REMOVE:a", got)
		}
		if h.mirrors.names() != "" {
			t.Errorf("a deleted mirror pod is still reported: %q", h.mirrors.names())
		}
	})
}

// The pods handed to the sync loop are the API's, with the source annotation and not made
// static: same name, UID and spec, nothing validated away.
func TestAPISourceKeepsAPIPodsAsTheyAre(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := apiPod("web-0", "u1", func(p *v1.Pod) {
			p.Annotations = map[string]string{"team": "x"}
			p.Spec.Volumes = []v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s"}}}}
		})
		h := startAPISource(t, fake.NewClientset(p), nil)
		defer h.stop()
		u := <-h.mux.Updates()
		if u.Op != ADD || u.Source != APISource || len(u.Pods) != 1 {
			t.Fatalf("update %v %s %d pods", u.Op, u.Source, len(u.Pods))
		}
		got := u.Pods[0]
		if got.Name != "web-0" || got.UID != "u1" || got.Namespace != "ns" {
			t.Errorf("identity changed: %s/%s %s", got.Namespace, got.Name, got.UID)
		}
		if got.Annotations[ConfigSourceAnnotationKey] != "api" || got.Annotations["team"] != "x" ||
			got.Annotations[ConfigFirstSeenAnnotationKey] == "" || got.Annotations[ConfigHashAnnotationKey] != "" {
			t.Errorf("annotations %v", got.Annotations)
		}
		if len(got.Spec.Volumes) != 1 || got.Spec.Volumes[0].Secret == nil {
			t.Errorf("spec changed: %+v", got.Spec.Volumes)
		}
		if !IsAPIPod(got) || IsStaticPod(got) || IsMirrorPod(got) {
			t.Error("classified wrongly")
		}
	})
}

// The outage test runs in a synctest bubble: client-go waits out its re-list back-off on the
// real clock, which is the bubble's. (apimachinery's global error rate limit, behind the
// reflector's default error handler, may remember a wall-clock time far ahead of the bubble's
// clock: its first wait in a bubble then moves the bubble's clock to that time, at once.)
func TestAPISourceSurvivesOutages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset(apiPod("a", "ua"))
		var failing atomic.Bool
		failing.Store(true)
		listed := make(chan struct{}, 100)
		client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
			listed <- struct{}{}
			if failing.Load() {
				return true, nil, errors.New("connection refused")
			}
			return false, nil, nil
		})
		mux := NewMux(clock.RealClock{}, LogReporter{}, 50)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = RunAPISource(ctx, APIConfig{Client: fakekube.Core(client), NodeName: "n1", Sink: mux, Mirrors: &mirrorRecorder{}, Clock: clock.RealClock{}})
		}()
		defer func() { cancel(); <-done }()

		<-listed
		<-listed // retried after the back-off
		synctest.Wait()
		if got := drainUpdates(mux); len(got) != 0 || mux.SeenAllSources(APISource) {
			t.Fatalf("updates during the outage: %v", got)
		}
		failing.Store(false)
		u := <-mux.Updates() // once the API server answers
		if got := append([]string{u.Op.String() + ":" + names(u.Pods)}, drainUpdates(mux)...); strings.Join(got, " ") != "ADD:a" {
			t.Fatalf("after the outage: %q, want ADD:a", got)
		}
	})
}

func TestAPISourceWaitsForNodeSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var synced atomic.Bool
		h := startAPISource(t, fake.NewClientset(apiPod("a", "ua")), synced.Load)
		defer h.stop()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if got := drainUpdates(h.mux); len(got) != 0 {
			t.Fatalf("pods before the node synced: %v", got)
		}
		synced.Store(true)
		time.Sleep(NodeSyncPollPeriod)
		synctest.Wait()
		if got := fmt.Sprint(drainUpdates(h.mux)); got != "[ADD:a]" {
			t.Fatalf("after the node synced: %s", got)
		}
	})
}

func TestRunAPISourceRequiresItsDependencies(t *testing.T) {
	if err := RunAPISource(context.Background(), APIConfig{NodeName: "n1"}); err == nil {
		t.Fatal("no error without a client")
	}
}
