package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeEvents is an EventLister serving events and recording the queries.
type fakeEvents struct {
	mu      sync.Mutex
	events  []v1.Event
	queries []string
}

var _ EventLister = (*fakeEvents)(nil)

func (f *fakeEvents) List(namespace, podName string) []v1.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, namespace+"/"+podName)
	return f.events
}

func newEventsServer(t *testing.T, address string, events EventLister) *Server {
	t.Helper()
	e := newEnv(t)
	srv, err := New(Config{Address: address, Clock: e.clock}, Deps{Pods: e.pods, Logs: e.logs, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestEventsNotServedWithoutLister(t *testing.T) {
	if code, _ := get(t, newEnv(t).srv.Handler(), "/events"); code != http.StatusNotFound {
		t.Errorf("code %d, want 404", code)
	}
}

func TestEventsEmpty(t *testing.T) {
	rec := httptestGet(newEventsServer(t, "127.0.0.1:0", &fakeEvents{}).Handler(), "/events")
	if rec.Code != http.StatusOK {
		t.Fatalf("code %d", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	want := `{"kind":"EventList","apiVersion":"v1","metadata":{},"items":[]}` + "\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
}

func TestEventsListsWithQuery(t *testing.T) {
	at := metav1.NewTime(t0)
	event := v1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web.1", Namespace: "default"},
		InvolvedObject: v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "default", Name: "web", UID: "uid-web"},
		Reason:         "BackOff", Message: "Back-off restarting failed container app in pod default/web",
		Source: v1.EventSource{Component: "kubelet", Host: "node-1"}, FirstTimestamp: at, LastTimestamp: at,
		Count: 3, Type: v1.EventTypeWarning,
	}
	events := &fakeEvents{events: []v1.Event{event}}
	h := newEventsServer(t, "127.0.0.1:0", events).Handler()
	for _, target := range []string{"/events", "/events?namespace=default", "/events?pod=web", "/events?namespace=kube-system&pod=dns&other=x"} {
		code, body := get(t, h, target)
		if code != http.StatusOK {
			t.Fatalf("%s: code %d: %s", target, code, body)
		}
		if !strings.HasPrefix(body, `{"kind":"EventList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"web.1","namespace":"default"},"involvedObject":{"kind":"Pod"`) {
			t.Errorf("%s: unexpected encoding: %s", target, body)
		}
		var list v1.EventList
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || !equality.Semantic.DeepEqual(list.Items[0], event) {
			t.Errorf("%s: items %+v", target, list.Items)
		}
	}
	want := []string{"/", "default/", "/web", "kube-system/dns"}
	if !reflect.DeepEqual(events.queries, want) {
		t.Errorf("queries %q, want %q", events.queries, want)
	}
}

func TestEventsOnlyOnLoopback(t *testing.T) {
	events := &fakeEvents{events: []v1.Event{{Message: "secret"}}}
	code, body := get(t, newEventsServer(t, "0.0.0.0:10255", events).Handler(), "/events")
	if code != http.StatusForbidden || strings.Contains(body, "secret") || len(events.queries) != 0 {
		t.Errorf("%d %q, queries %q: want 403", code, body, events.queries)
	}
}

func TestEventsOnlyGet(t *testing.T) {
	rec := httptest.NewRecorder()
	newEventsServer(t, "127.0.0.1:0", &fakeEvents{}).Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/events", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: code %d, want 405", rec.Code)
	}
}
