package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// describeFixture is testdata/describe-pod.json: the pod and events both describe tests use.
func describeFixture(t *testing.T) (fixture struct {
	Pod    v1.Pod       `json:"pod"`
	Events v1.EventList `json:"events"`
}) {
	t.Helper()
	b, err := os.ReadFile("testdata/describe-pod.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &fixture); err != nil {
		t.Fatal(err)
	}
	return fixture
}

// TestDescribePodMatchesKubectl compares describePod with what the real `kubectl describe pod`
// printed for the same pod and events (testdata/describe-pod.golden, written by
// hack/cligolden/gen.go with k8s.io/kubectl v0.37.1). The events are 20 years old for both,
// so their ages print the same whenever the golden file was made.
func TestDescribePodMatchesKubectl(t *testing.T) {
	fixture := describeFixture(t)
	want, err := os.ReadFile("testdata/describe-pod.golden")
	if err != nil {
		t.Fatal(err)
	}
	got := describePod(&fixture.Pod, fixture.Events.Items, fixture.Pod.Status.StartTime.Add(20*365*24*time.Hour+10*24*time.Hour))
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Errorf("line %d:\n got %q\nwant %q", i+1, g, w)
			}
		}
	}
}

// `nodelet describe pod` against the fake API: the pod, its events, kubectl's errors.
func TestDescribeCommand(t *testing.T) {
	fixture := describeFixture(t)
	api := &fakeAPI{pods: []v1.Pod{fixture.Pod}, events: fixture.Events.Items}
	for _, args := range [][]string{{"describe", "pod", "web-node-1"}, {"describe", "pods/web-node-1"}, {"describe", "po", "web-node-1", "-n", "default"}} {
		code, out, errOut := run(t, api, args...)
		if code != 0 || errOut != "" || !strings.HasPrefix(out, "Name:             web-node-1\nNamespace:        default\n") ||
			!strings.Contains(out, "Events:\n  Type     Reason   Age") || !strings.Contains(out, "(x9 over ") {
			t.Errorf("%v: exit %d, errOut %q\n%s", args, code, errOut, out)
		}
	}
	code, _, errOut := run(t, api, "describe", "pod", "nope")
	if code != 1 || errOut != "Error from server (NotFound): pods \"nope\" not found\n" {
		t.Errorf("unknown pod: exit %d, %q", code, errOut)
	}
	code, _, errOut = run(t, api, "describe", "nodes")
	if code != 1 || errOut != "error: the server doesn't have a resource type \"nodes\"\n" {
		t.Errorf("other resource: exit %d, %q", code, errOut)
	}
	if !IsCommand([]string{"describe"}) {
		t.Error("IsCommand(describe)")
	}
}
