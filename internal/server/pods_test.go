package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestPodsEmpty(t *testing.T) {
	e := newEnv(t)
	rec := httptest.NewRecorder()
	e.srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/pods", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("code %d", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	want := `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}` + "\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
}

func TestPodsListsPodsWithStatus(t *testing.T) {
	e := newEnv(t)
	a := podWith("a", 2, "app")
	a.Status.Phase = v1.PodRunning
	b := podWith("b", 0, "x", "y")
	e.addPod(a)
	e.addPod(b)
	e.pods.set(a, nil, b) // a nil entry is skipped

	code, body := get(t, e.srv.Handler(), "/pods")
	if code != http.StatusOK {
		t.Fatalf("code %d: %s", code, body)
	}
	if !strings.HasPrefix(body, `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"a","namespace":"default","uid":"uid-a"`) {
		t.Errorf("unexpected encoding: %s", body)
	}
	var list v1.PodList
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 || list.Items[0].Name != "a" || list.Items[1].Name != "b" {
		t.Fatalf("items: %+v", list.Items)
	}
	if got := list.Items[0].Status; got.Phase != v1.PodRunning || got.ContainerStatuses[0].RestartCount != 2 {
		t.Errorf("status not served: %+v", got)
	}
	if len(list.Items[1].Spec.Containers) != 2 {
		t.Errorf("spec not served: %+v", list.Items[1].Spec)
	}
}
