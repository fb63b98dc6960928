package cli

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeEventsAPI serves GET /events from events, filtered by the namespace and pod parameters as
// the server filters them, but in the order given (the CLI sorts); it records the queries.
type fakeEventsAPI struct {
	mu      sync.Mutex
	events  []v1.Event
	code    int
	queries []string
}

func (f *fakeEventsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path != "/events" {
		http.NotFound(w, r)
		return
	}
	f.queries = append(f.queries, r.URL.RawQuery)
	if f.code != 0 {
		http.Error(w, "events are only served when the read-only API is bound to a loopback address", f.code)
		return
	}
	namespace, pod := r.URL.Query().Get("namespace"), r.URL.Query().Get("pod")
	list := v1.EventList{Items: []v1.Event{}}
	list.Kind, list.APIVersion = "EventList", "v1"
	for _, e := range f.events {
		if (namespace == "" || e.Namespace == namespace) && (pod == "" || e.InvolvedObject.Name == pod) {
			list.Items = append(list.Items, e)
		}
	}
	_ = json.NewEncoder(w).Encode(&list)
}

// event builds a kubelet event about a pod, first seen first ago and last seen last ago, count
// times.
func event(namespace, podName, eventType, reason, message string, count int32, first, last time.Duration) v1.Event {
	return v1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: podName + ".1", Namespace: namespace},
		InvolvedObject: v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: namespace, Name: podName},
		Type:           eventType, Reason: reason, Message: message, Count: count,
		FirstTimestamp: ago(first), LastTimestamp: ago(last),
		Source: v1.EventSource{Component: "kubelet", Host: "nodelet-1"},
	}
}

func eventListing() []v1.Event {
	// The new API's fields: no first and last timestamps, an eventTime and a series.
	series := event("kube-system", "db", v1.EventTypeWarning, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", 0, 0, 0)
	series.FirstTimestamp, series.LastTimestamp = metav1.Time{}, metav1.Time{}
	series.EventTime = metav1.NewMicroTime(now.Add(-3 * time.Hour))
	series.Series = &v1.EventSeries{Count: 40, LastObservedTime: metav1.NewMicroTime(now.Add(-20 * time.Second))}
	single := event("kube-system", "db", v1.EventTypeNormal, "Scheduled", "Successfully assigned kube-system/db to nodelet-1", 0, 0, 0)
	single.FirstTimestamp, single.LastTimestamp = metav1.Time{}, metav1.Time{}
	single.EventTime = metav1.NewMicroTime(now.Add(-3*time.Hour - time.Minute))
	return []v1.Event{
		event("default", "web", v1.EventTypeWarning, "BackOff", "Back-off restarting failed container app in pod default/web", 12, 9*time.Minute, 45*time.Second),
		event("default", "web", v1.EventTypeNormal, "Pulling", `Pulling image "nginx:1.27"`, 1, 26*time.Hour, 26*time.Hour),
		event("default", "batch", v1.EventTypeNormal, "Started", "  Started container job\n", 1, 5*time.Minute+30*time.Second, 5*time.Minute+30*time.Second),
		event("kube-system", "db", v1.EventTypeWarning, "Failed", "Error: failed to create containerd task:\nexec: \"app\": not found", 3, time.Hour, 2*time.Minute),
		event("kube-system", "db", v1.EventTypeNormal, "Killing", "Stopping container \x1b[31mapp", 1, 90*time.Second, 90*time.Second),
		series, single,
	}
}

func TestEvents(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		query  string
		code   int
		out    string
		errOut string
	}{
		{"default namespace", []string{"events"}, "namespace=default", 0,
			"LAST SEEN           TYPE      REASON    OBJECT      MESSAGE\n" +
				"26h                 Normal    Pulling   Pod/web     Pulling image \"nginx:1.27\"\n" +
				"5m30s               Normal    Started   Pod/batch   Started container job\n" +
				"45s (x12 over 9m)   Warning   BackOff   Pod/web     Back-off restarting failed container app in pod default/web\n", ""},
		{"one pod", []string{"events", "web"}, "namespace=default&pod=web", 0,
			"LAST SEEN           TYPE      REASON    OBJECT    MESSAGE\n" +
				"26h                 Normal    Pulling   Pod/web   Pulling image \"nginx:1.27\"\n" +
				"45s (x12 over 9m)   Warning   BackOff   Pod/web   Back-off restarting failed container app in pod default/web\n", ""},
		{"pod/NAME in a namespace", []string{"events", "-n", "kube-system", "pod/db"}, "namespace=kube-system&pod=db", 0,
			"LAST SEEN           TYPE      REASON      OBJECT   MESSAGE\n" +
				"3h1m                Normal    Scheduled   Pod/db   Successfully assigned kube-system/db to nodelet-1\n" +
				"2m (x3 over 60m)    Warning   Failed      Pod/db   Error: failed to create containerd task:...\n" +
				"90s                 Normal    Killing     Pod/db   Stopping container ^[[31mapp\n" +
				"20s (x40 over 3h)   Warning   Unhealthy   Pod/db   Readiness probe failed: HTTP probe failed with statuscode: 503\n", ""},
		{"all namespaces", []string{"events", "-A"}, "", 0,
			"NAMESPACE     LAST SEEN           TYPE      REASON      OBJECT      MESSAGE\n" +
				"default       26h                 Normal    Pulling     Pod/web     Pulling image \"nginx:1.27\"\n" +
				"kube-system   3h1m                Normal    Scheduled   Pod/db      Successfully assigned kube-system/db to nodelet-1\n" +
				"default       5m30s               Normal    Started     Pod/batch   Started container job\n" +
				"kube-system   2m (x3 over 60m)    Warning   Failed      Pod/db      Error: failed to create containerd task:...\n" +
				"kube-system   90s                 Normal    Killing     Pod/db      Stopping container ^[[31mapp\n" +
				"default       45s (x12 over 9m)   Warning   BackOff     Pod/web     Back-off restarting failed container app in pod default/web\n" +
				"kube-system   20s (x40 over 3h)   Warning   Unhealthy   Pod/db      Readiness probe failed: HTTP probe failed with statuscode: 503\n", ""},
		{"a pod in all namespaces", []string{"events", "--all-namespaces", "pods/batch"}, "pod=batch", 0,
			"NAMESPACE   LAST SEEN   TYPE     REASON    OBJECT      MESSAGE\n" +
				"default     5m30s       Normal   Started   Pod/batch   Started container job\n", ""},
		{"no events", []string{"events", "--namespace", "empty"}, "namespace=empty", 0, "", "No resources found in empty namespace.\n"},
		{"no events for the pod", []string{"events", "gone"}, "namespace=default&pod=gone", 0, "", "No resources found in default namespace.\n"},
		{"two pods", []string{"events", "a", "b"}, "", 2, "",
			"error: expected at most one POD, got [\"a\" \"b\"]\nSee 'nodelet events --help' for usage.\n"},
		{"empty pod", []string{"events", "pod/"}, "", 2, "", "error: POD must not be empty\nSee 'nodelet events --help' for usage.\n"},
		{"bad flag", []string{"events", "-o", "wide"}, "", 2, "",
			"error: unknown shorthand flag: 'o' in -o\nSee 'nodelet events --help' for usage.\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeEventsAPI{events: eventListing()}
			code, out, errOut := run(t, api, tc.args...)
			if code != tc.code || out != tc.out || errOut != tc.errOut {
				t.Errorf("exit %d\nout:\n%s\nerrOut:\n%s\nwant exit %d\nout:\n%s\nerrOut:\n%s", code, out, errOut, tc.code, tc.out, tc.errOut)
			}
			var want []string
			if tc.code == 0 {
				want = []string{tc.query}
			}
			if strings.Join(api.queries, ",") != strings.Join(want, ",") || len(api.queries) != len(want) {
				t.Errorf("queries %q, want %q", api.queries, want)
			}
		})
	}
}

func TestEventsServerErrors(t *testing.T) {
	code, _, errOut := run(t, &fakeEventsAPI{code: http.StatusForbidden}, "events")
	want := "Error from server (Forbidden): events are only served when the read-only API is bound to a loopback address\n"
	if code != 1 || errOut != want {
		t.Errorf("403: exit %d, %q", code, errOut)
	}
	code, _, errOut = run(t, http.NotFoundHandler(), "events")
	if code != 1 || errOut != "Error from server (NotFound): 404 page not found\n" {
		t.Errorf("404: exit %d, %q", code, errOut)
	}
	code, _, errOut = run(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{")) }), "events")
	if code != 1 || !strings.HasPrefix(errOut, "error: decode the event list from ") {
		t.Errorf("bad JSON: exit %d, %q", code, errOut)
	}
	code, _, errOut = run(t, http.NotFoundHandler(), "events", "--server", "http://127.0.0.1:1")
	if code != 1 || !strings.Contains(errOut, "error: cannot reach nodelet's read-only API at http://127.0.0.1:1") {
		t.Errorf("unreachable: exit %d, %q", code, errOut)
	}
}

func TestEventRowFallbacks(t *testing.T) {
	e := v1.Event{InvolvedObject: v1.ObjectReference{Kind: "Node"}, Type: "Normal", Reason: "Starting", Message: "Starting kubelet."}
	// kubectl events prints Kind/name even without a name.
	if got := strings.Join(eventRow(&e, now), "|"); got != "<unknown>|Normal|Starting|Node/|Starting kubelet." {
		t.Errorf("row %q", got)
	}
	e.FirstTimestamp = ago(time.Hour) // no lastTimestamp: last seen is the first
	if got := eventRow(&e, now)[0]; got != "60m" {
		t.Errorf("last seen %q", got)
	}
	if !IsCommand([]string{"events"}) {
		t.Error("IsCommand(events)")
	}
}

func TestTableCell(t *testing.T) {
	for in, want := range map[string]string{
		"plain": "plain", "a\nb": "a...", "a\r\nb": "a...", "a\fb": "a...", "\x1b[1mbold": "^[[1mbold", "": "",
	} {
		if got := tableCell(in); got != want {
			t.Errorf("tableCell(%q) = %q, want %q", in, got, want)
		}
	}
}
