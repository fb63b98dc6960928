package events

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	testingclock "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func pod(namespace, name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + name), ResourceVersion: "7"}}
}

// recorder is the interface the runtime and the prober use.
type recorder interface {
	Eventf(pod *v1.Pod, eventType, reason, messageFmt string, args ...any)
}

var _ recorder = (*Store)(nil)

// summary is what the tests compare of an event.
func summary(events []v1.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, fmt.Sprintf("%s/%s %s %s %q x%d %s..%s", e.Namespace, e.InvolvedObject.Name, e.Type, e.Reason, e.Message,
			e.Count, e.FirstTimestamp.Sub(t0), e.LastTimestamp.Sub(t0)))
	}
	return out
}

func TestEventfBuildsUpstreamEvent(t *testing.T) {
	clk := testingclock.NewFakePassiveClock(t0)
	s := New(clk, "node-1", 10)
	s.Eventf(pod("prod", "web"), v1.EventTypeNormal, "Pulling", "Pulling image %q", "nginx:1.27")

	now := metav1.NewTime(t0)
	want := v1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web.%x", t0.UnixNano()), Namespace: "prod"},
		InvolvedObject: v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "prod", Name: "web",
			UID: "uid-web", ResourceVersion: "7"},
		Reason:              "Pulling",
		Message:             `Pulling image "nginx:1.27"`,
		Source:              v1.EventSource{Component: "kubelet", Host: "node-1"},
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
		Type:                v1.EventTypeNormal,
		ReportingController: "kubelet",
		ReportingInstance:   "node-1",
	}
	got := s.List("", "")
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("events\n got %+v\nwant %+v", got, want)
	}
}

func TestEventfDefaultNamespaceAndDrops(t *testing.T) {
	s := New(testingclock.NewFakePassiveClock(t0), "n", 10)
	s.Eventf(pod("", "bare"), v1.EventTypeWarning, "Failed", "Error: %v", "boom")
	s.Eventf(pod("default", "web"), "Info", "Odd", "not a valid type")
	s.Eventf(nil, v1.EventTypeNormal, "Nil", "no pod")
	got := s.List("", "")
	if len(got) != 1 || got[0].Namespace != "default" || got[0].InvolvedObject.Namespace != "" || got[0].Message != "Error: boom" {
		t.Fatalf("events %+v", got)
	}
}

func TestRepeatsAreCounted(t *testing.T) {
	clk := testingclock.NewFakePassiveClock(t0)
	s := New(clk, "n", 10)
	web := pod("default", "web")
	s.Eventf(web, v1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", "app")
	first := s.List("", "")[0]
	clk.SetTime(t0.Add(time.Minute))
	web2 := web.DeepCopy()
	web2.ResourceVersion = "8"
	s.Eventf(web2, v1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", "app")
	clk.SetTime(t0.Add(2 * time.Minute))
	s.Eventf(web, v1.EventTypeWarning, "BackOff", "Back-off restarting failed container app")

	// Any difference in the key makes another event.
	other := pod("default", "web")
	other.UID = "uid-new-instance"
	s.Eventf(other, v1.EventTypeWarning, "BackOff", "Back-off restarting failed container app")
	s.Eventf(web, v1.EventTypeNormal, "BackOff", "Back-off restarting failed container app")
	s.Eventf(web, v1.EventTypeWarning, "Failed", "Back-off restarting failed container app")
	s.Eventf(web, v1.EventTypeWarning, "BackOff", "Back-off restarting failed container sidecar")
	s.Eventf(pod("other", "web"), v1.EventTypeWarning, "BackOff", "Back-off restarting failed container app")

	got := s.List("", "")
	want := []string{
		`default/web Warning BackOff "Back-off restarting failed container app" x3 0s..2m0s`,
		`default/web Warning BackOff "Back-off restarting failed container app" x1 2m0s..2m0s`,
		`default/web Normal BackOff "Back-off restarting failed container app" x1 2m0s..2m0s`,
		`default/web Warning Failed "Back-off restarting failed container app" x1 2m0s..2m0s`,
		`default/web Warning BackOff "Back-off restarting failed container sidecar" x1 2m0s..2m0s`,
		`other/web Warning BackOff "Back-off restarting failed container app" x1 2m0s..2m0s`,
	}
	if s := summary(got); !reflect.DeepEqual(s, want) {
		t.Fatalf("events\n got %q\nwant %q", s, want)
	}
	if got[0].Name != first.Name || got[0].InvolvedObject.ResourceVersion != "7" {
		t.Errorf("a repeat changed the name or the involved object: %+v", got[0])
	}
}

func TestCapacityEvictsLeastRecentlySeen(t *testing.T) {
	clk := testingclock.NewFakePassiveClock(t0)
	s := New(clk, "n", 3)
	web := pod("default", "web")
	for i := range 3 {
		clk.SetTime(t0.Add(time.Duration(i) * time.Second))
		s.Eventf(web, v1.EventTypeNormal, "R", "m%d", i)
	}
	clk.SetTime(t0.Add(10 * time.Second))
	s.Eventf(web, v1.EventTypeNormal, "R", "m0") // m0 is now the most recently seen
	s.Eventf(web, v1.EventTypeNormal, "R", "m3") // evicts m1
	s.Eventf(web, v1.EventTypeNormal, "R", "m4") // evicts m2
	s.Eventf(web, v1.EventTypeNormal, "R", "m1") // evicted: counts again from 1; evicts m0
	want := []string{
		`default/web Normal R "m3" x1 10s..10s`,
		`default/web Normal R "m4" x1 10s..10s`,
		`default/web Normal R "m1" x1 10s..10s`,
	}
	if got := summary(s.List("", "")); !reflect.DeepEqual(got, want) {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
	if s.Len() != 3 {
		t.Errorf("Len %d", s.Len())
	}
}

func TestDefaultCapacity(t *testing.T) {
	s := New(testingclock.NewFakePassiveClock(t0), "n", 0)
	web := pod("default", "web")
	for i := range DefaultCapacity + 5 {
		s.Eventf(web, v1.EventTypeNormal, "R", "m%d", i)
	}
	got := s.List("", "")
	if len(got) != DefaultCapacity || got[0].Message != "m5" {
		t.Fatalf("%d events, first %q", len(got), got[0].Message)
	}
}

func TestListFiltersAndSorts(t *testing.T) {
	clk := testingclock.NewFakePassiveClock(t0)
	s := New(clk, "n", 10)
	clk.SetTime(t0.Add(time.Minute))
	s.Eventf(pod("default", "web"), v1.EventTypeNormal, "Started", "a")
	clk.SetTime(t0) // the wall clock steps back
	s.Eventf(pod("kube-system", "dns"), v1.EventTypeNormal, "Started", "b")
	s.Eventf(pod("default", "db"), v1.EventTypeNormal, "Started", "c")
	clk.SetTime(t0.Add(2 * time.Minute))
	s.Eventf(pod("kube-system", "web"), v1.EventTypeNormal, "Started", "d")

	cases := []struct{ namespace, pod, want string }{
		{"", "", "b c a d"},
		{"default", "", "c a"},
		{"", "web", "a d"},
		{"kube-system", "web", "d"},
		{"default", "nope", ""},
		{"nope", "", ""},
	}
	for _, tc := range cases {
		got := s.List(tc.namespace, tc.pod)
		var msgs []string
		for _, e := range got {
			msgs = append(msgs, e.Message)
		}
		if strings.Join(msgs, " ") != tc.want || got == nil {
			t.Errorf("List(%q, %q) = %q (nil %v), want %q", tc.namespace, tc.pod, msgs, got == nil, tc.want)
		}
	}
}

func TestListReturnsCopies(t *testing.T) {
	s := New(testingclock.NewFakePassiveClock(t0), "n", 10)
	s.Eventf(pod("default", "web"), v1.EventTypeNormal, "Started", "a")
	got := s.List("", "")
	got[0].Message = "changed"
	got[0].Count = 99
	if e := s.List("", "")[0]; e.Message != "a" || e.Count != 1 {
		t.Errorf("the store was changed through List: %+v", e)
	}
}

func derefs(events []*v1.Event) []v1.Event {
	out := make([]v1.Event, 0, len(events))
	for _, e := range events {
		out = append(out, *e)
	}
	return out
}

func TestEventName(t *testing.T) {
	if got := eventName("web", 0x1f); got != "web.1f" {
		t.Errorf("eventName = %q", got)
	}
	long := strings.Repeat("a", 240) + "-b"
	got := eventName(long, t0.UnixNano())
	suffix := fmt.Sprintf(".%x", t0.UnixNano())
	if len(got) > maxNameLength || !strings.HasSuffix(got, suffix) || strings.Contains(got, "-.") {
		t.Errorf("eventName(long) = %q (%d)", got, len(got))
	}
}

func TestEventsAreLogged(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	klog.SetLogger(funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{Verbosity: 10}))
	defer klog.ClearLogger()

	s := New(testingclock.NewFakePassiveClock(t0), "n", 10)
	s.Eventf(pod("default", "web"), v1.EventTypeWarning, "Failed", "Error: %s", "boom")
	s.Eventf(pod("default", "web"), v1.EventTypeNormal, "Started", "not logged at the default verbosity")
	klog.Flush()
	mu.Lock()
	defer mu.Unlock()
	want := `"level"=0 "msg"="Event" "pod"={"name"="web" "namespace"="default"} "type"="Warning" "reason"="Failed" "message"="Error: boom"`
	if len(lines) != 1 || !strings.Contains(lines[0], want) {
		t.Errorf("logged %q, want one line with %s", lines, want)
	}
}

func TestConcurrentUse(t *testing.T) {
	s := New(testingclock.NewFakePassiveClock(t0), "n", 50)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			p := pod("default", fmt.Sprintf("p%d", g))
			for i := range 200 {
				s.Eventf(p, v1.EventTypeNormal, "R", "m%d", i%60)
				_ = s.List("default", "")
			}
		})
	}
	wg.Wait()
	if n := len(s.List("", "")); n != 50 {
		t.Errorf("%d events, want 50", n)
	}
}
