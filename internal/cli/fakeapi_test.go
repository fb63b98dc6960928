package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"
)

// fakeAPI serves /pods from pods and /containerLogs with logBody, or logCode and logBody as
// the error; it records the log requests.
type fakeAPI struct {
	mu       sync.Mutex
	pods     []v1.Pod
	podsCode int
	logCode  int
	logBody  string
	logReqs  []*url.URL
	events   []v1.Event // GET /events, filtered by namespace and pod
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.URL.Path == "/pods":
		if f.podsCode != 0 {
			http.Error(w, "boom", f.podsCode)
			return
		}
		list := v1.PodList{Items: f.pods}
		list.Kind, list.APIVersion = "PodList", "v1"
		_ = json.NewEncoder(w).Encode(&list)
	case len(r.URL.Path) > len("/containerLogs/") && r.URL.Path[:len("/containerLogs/")] == "/containerLogs/":
		f.logReqs = append(f.logReqs, r.URL)
		if f.logCode != 0 {
			http.Error(w, f.logBody, f.logCode)
			return
		}
		_, _ = w.Write([]byte(f.logBody))
	case r.URL.Path == "/events":
		list := v1.EventList{Items: []v1.Event{}}
		ns, pod := r.URL.Query().Get("namespace"), r.URL.Query().Get("pod")
		for _, e := range f.events {
			if (ns == "" || e.Namespace == ns) && (pod == "" || e.InvolvedObject.Name == pod) {
				list.Items = append(list.Items, e)
			}
		}
		_ = json.NewEncoder(w).Encode(&list)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeAPI) requests() []*url.URL {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*url.URL(nil), f.logReqs...)
}

// run runs the CLI against the fake API with the test clock; it returns the exit code, out
// and errOut.
func run(t *testing.T, api http.Handler, args ...string) (int, string, string) {
	t.Helper()
	ts := httptest.NewServer(api)
	defer ts.Close()
	var out, errOut bytes.Buffer
	// --server goes right after the command, so that a test's own --server wins.
	if len(args) > 0 {
		args = append([]string{args[0], "--server", ts.URL}, args[1:]...)
	}
	code := Run(context.Background(), args, nil, &out, &errOut, testingclock.NewFakePassiveClock(now), "v1.37.1-nodelet")
	return code, out.String(), errOut.String()
}
