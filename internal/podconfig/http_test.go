package podconfig

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// servedBody is what the test server answers; the test changes it between polls.
type servedBody struct {
	mu      sync.Mutex
	status  int
	body    string
	handler http.HandlerFunc
	headers http.Header
}

func (s *servedBody) set(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body, s.handler = status, body, nil
}

func (s *servedBody) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.headers = r.Header.Clone()
	h, status, body := s.handler, s.status, s.body
	s.mu.Unlock()
	if h != nil {
		h(w, r)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

const podListJSON = `{"apiVersion":"v1","kind":"PodList","items":[
 {"metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"busybox"}]}},
 {"metadata":{"name":"b"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}]}`

// handlerTransport serves requests in memory with a handler: no sockets, so that the test runs
// in a synctest bubble, where the client's timeout runs on the bubble's clock.
type handlerTransport struct{ h http.Handler }

func (tr handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	done := make(chan *http.Response, 1)
	go func() {
		w := httptest.NewRecorder()
		tr.h.ServeHTTP(w, req)
		done <- w.Result()
	}()
	select {
	case resp := <-done:
		return resp, nil
	case <-req.Context().Done(): // the handler ends with the request's context
		return nil, req.Context().Err()
	}
}

// TestHTTPSource runs in a synctest bubble: a poll that cannot go on (an unanswered request,
// a report or snapshot that never comes) blocks the bubble, which synctest reports.
func TestHTTPSource(t *testing.T) { synctest.Test(t, httpSourceScenario) }

func httpSourceScenario(t *testing.T) {
	served := &servedBody{status: 200, body: string(manifest("single", "busybox"))}
	rec := newRecorder()
	clk := clocktesting.NewFakeClock(time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = RunHTTPSource(ctx, HTTPConfig{URL: "http://manifests.test/pods", Header: http.Header{"X-Token": {"secret"}}, NodeName: "n1",
			Period: 20 * time.Second, Clock: clk, Sink: rec, Reporter: rec,
			Client: &http.Client{Timeout: 2 * time.Second, Transport: handlerTransport{served}}})
	}()
	defer func() { cancel(); <-done }()
	poll := func() { clk.Step(20 * time.Second) }
	// waitReports ticks once (the ticker buffers one tick, so a poll of the new state follows even
	// if a poll is under way) and waits for the report.
	waitReports := func(sub string, n int) {
		t.Helper()
		poll()
		for len(rec.reportsFor(sub)) < n {
			<-rec.reported
		}
	}

	rec.waitFor(t, "single-n1")
	if got := served.headers.Get("X-Token"); got != "secret" {
		t.Errorf("header X-Token = %q", got)
	}

	served.set(200, podListJSON)
	poll()
	rec.waitFor(t, "a-n1,b-n1")

	// Failures keep the last pods (nothing is sent) and are reported once until they change.
	served.set(500, "boom")
	waitReports("500 Internal Server Error", 1)
	for range 3 {
		poll()
	}
	served.set(200, strings.Repeat("x", MaxManifestBytes+10))
	waitReports("larger than", 1)
	served.mu.Lock()
	served.handler = func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, r.URL.Path, http.StatusFound) }
	served.mu.Unlock()
	waitReports("redirects", 1)
	served.mu.Lock()
	served.handler = func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() } // answers only after the client gave up
	served.mu.Unlock()
	// The client's timeout ends the request's context: "context deadline exceeded", with
	// "(Client.Timeout exceeded ...)" unless the context's timer fired before the client's.
	waitReports("deadline exceeded", 1)
	served.set(200, "kind: [")
	waitReports("not valid YAML", 1)
	if r := rec.reportsFor("500"); len(r) != 1 {
		t.Errorf("the 500 was reported %d times, want once: %q", len(r), r)
	}
	select {
	case pods := <-rec.snapshots:
		t.Fatalf("a failed poll sent a snapshot: %q", names(pods))
	default:
	}

	// Recovery, then an empty body means no pods.
	served.set(200, podListJSON)
	poll()
	rec.waitFor(t, "a-n1,b-n1")
	served.set(200, "")
	poll()
	rec.waitFor(t, "")
}
