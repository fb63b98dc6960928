package pleg

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
)

var testTiming = timing{period: time.Second, threshold: 3 * time.Minute, safetyPeriod: 5 * time.Minute,
	safetyThreshold: 10 * time.Minute, initialBackoff: time.Second, maxBackoff: 30 * time.Second, unsupportedRetry: 5 * time.Minute}

func TestRelistDue(t *testing.T) {
	last := t0.Add(time.Hour)
	tests := []struct {
		name  string
		state loopState
		now   time.Time
		want  bool
	}{
		{"never relisted", loopState{stream: streamUp, lastOK: true}, t0, true},
		{"down: every tick", loopState{stream: streamDown, lastStart: last, lastOK: true}, last.Add(time.Millisecond), true},
		{"connecting: every tick", loopState{stream: streamConnecting, lastStart: last, lastOK: true}, last.Add(time.Second), true},
		{"up: before the safety period", loopState{stream: streamUp, lastStart: last, lastOK: true}, last.Add(5*time.Minute - time.Nanosecond), false},
		{"up: at the safety period", loopState{stream: streamUp, lastStart: last, lastOK: true}, last.Add(5 * time.Minute), true},
		{"up but the last relist failed: every tick", loopState{stream: streamUp, lastStart: last}, last.Add(time.Second), true},
	}
	for _, tc := range tests {
		if got := relistDue(tc.state, tc.now, testTiming); got != tc.want {
			t.Errorf("%s: relistDue = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestStreamTransitions(t *testing.T) {
	opened := t0.Add(time.Minute)
	connecting := connected(loopState{stream: streamDown, lastStart: t0, lastOK: true}, opened)
	if connecting.stream != streamConnecting || !connecting.connectedAt.Equal(opened) {
		t.Fatalf("connected: %+v", connecting)
	}
	tests := []struct {
		name  string
		state loopState
		start time.Time
		ok    bool
		want  streamState
	}{
		{"relist too soon after opening: the runtime may not have subscribed yet", connecting, opened.Add(time.Second - time.Nanosecond), true, streamConnecting},
		{"relist a period after opening catches up", connecting, opened.Add(time.Second), true, streamUp},
		{"failed relist does not catch up", connecting, opened.Add(time.Minute), false, streamConnecting},
		{"down stays down", loopState{stream: streamDown}, opened.Add(time.Minute), true, streamDown},
		{"up stays up after a failed relist", loopState{stream: streamUp}, opened, false, streamUp},
	}
	for _, tc := range tests {
		got := afterRelist(tc.state, tc.start, tc.ok, testTiming)
		if got.stream != tc.want || !got.lastStart.Equal(tc.start) || got.lastOK != tc.ok {
			t.Errorf("%s: afterRelist = %+v, want stream %v and the relist recorded", tc.name, got, tc.want)
		}
	}
	if got := broken(loopState{stream: streamUp, connectedAt: opened, lastStart: t0, lastOK: true}); got != (loopState{stream: streamDown, lastStart: t0, lastOK: true}) {
		t.Errorf("broken = %+v", got)
	}
}

func TestReconnectDelay(t *testing.T) {
	unavailable := grpcstatus.Error(codes.Unavailable, "refused")
	tests := []struct {
		name        string
		err         error
		prev, lived time.Duration
		want        time.Duration
	}{
		{"first failure", unavailable, 0, -1, time.Second},
		{"doubles", unavailable, 4 * time.Second, -1, 8 * time.Second},
		{"doubles after a short-lived stream", unavailable, 4 * time.Second, 29 * time.Second, 8 * time.Second},
		{"capped", unavailable, 16 * time.Second, -1, 30 * time.Second},
		{"stays capped", unavailable, 30 * time.Second, 0, 30 * time.Second},
		{"a stream that lived MaxBackoff starts over", unavailable, 30 * time.Second, 30 * time.Second, time.Second},
		{"closed cleanly", errStreamClosed, 2 * time.Second, time.Second, 4 * time.Second},
		{"unimplemented", grpcstatus.Error(codes.Unimplemented, "no"), 0, 0, 5 * time.Minute},
		{"unimplemented, wrapped", fmt.Errorf("cri: receiving: %w", grpcstatus.Error(codes.Unimplemented, "no")), time.Second, 0, 5 * time.Minute},
		{"after unimplemented, another error", unavailable, 5 * time.Minute, 0, 30 * time.Second},
	}
	for _, tc := range tests {
		if got := reconnectDelay(tc.err, tc.prev, tc.lived, testTiming); got != tc.want {
			t.Errorf("%s: reconnectDelay = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestHealth(t *testing.T) {
	relist := t0
	tests := []struct {
		name    string
		last    *time.Time
		up      bool
		upUntil time.Time
		now     time.Time
		want    string
	}{
		{"no relist yet", nil, true, time.Time{}, t0, "pleg has yet to be successful"},
		{"up, within the safety threshold", &relist, true, time.Time{}, t0.Add(10 * time.Minute), ""},
		{"up, past the safety threshold", &relist, true, time.Time{}, t0.Add(10*time.Minute + time.Second), "pleg was last seen active 10m1s ago; threshold is 10m0s"},
		{"down, within the threshold", &relist, false, time.Time{}, t0.Add(3 * time.Minute), ""},
		{"down, past the threshold", &relist, false, time.Time{}, t0.Add(3*time.Minute + time.Second), "pleg was last seen active 3m1s ago; threshold is 3m0s"},
		{"down since recently: the stream counted until then", &relist, false, t0.Add(8 * time.Minute), t0.Add(11 * time.Minute), ""},
		{"down for longer than the threshold", &relist, false, t0.Add(8 * time.Minute), t0.Add(11*time.Minute + time.Second), "pleg was last seen active 3m1s ago; threshold is 3m0s"},
	}
	for _, tc := range tests {
		err := health(tc.now, tc.last, tc.up, tc.upUntil, testTiming)
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
			t.Errorf("%s: health = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestEventPod(t *testing.T) {
	labels := map[string]string{container.PodUIDLabel: "u1", container.PodNameLabel: "web", container.PodNamespaceLabel: "ns"}
	meta := &runtimeapi.PodSandboxMetadata{Uid: "u2", Name: "meta", Namespace: "mns"}
	tests := []struct {
		name      string
		event     *runtimeapi.ContainerEventResponse
		wantUID   types.UID
		wantName  string
		wantSpace string
	}{
		{"sandbox labels first", &runtimeapi.ContainerEventResponse{PodSandboxStatus: &runtimeapi.PodSandboxStatus{Labels: labels, Metadata: meta}}, "u1", "web", "ns"},
		{"sandbox metadata", &runtimeapi.ContainerEventResponse{PodSandboxStatus: &runtimeapi.PodSandboxStatus{Metadata: meta}}, "u2", "meta", "mns"},
		{"a container's labels", &runtimeapi.ContainerEventResponse{ContainersStatuses: []*runtimeapi.ContainerStatus{{}, {Labels: labels}}}, "u1", "web", "ns"},
		{"no pod", &runtimeapi.ContainerEventResponse{ContainerId: "c1", PodSandboxStatus: &runtimeapi.PodSandboxStatus{}}, "", "", ""},
		{"nil", nil, "", "", ""},
	}
	for _, tc := range tests {
		uid, name, ns := eventPod(tc.event)
		if uid != tc.wantUID || name != tc.wantName || ns != tc.wantSpace {
			t.Errorf("%s: eventPod = %q %q %q, want %q %q %q", tc.name, uid, name, ns, tc.wantUID, tc.wantName, tc.wantSpace)
		}
	}
}

func TestPodFromStatus(t *testing.T) {
	created := t0.Add(time.Minute)
	tests := []struct {
		name   string
		status *container.PodStatus
		want   *container.Pod
	}{
		{"nil", nil, nil},
		{"nothing in the runtime", &container.PodStatus{ID: "a", Name: "web", Namespace: "ns"}, nil},
		{
			name: "sandboxes and containers",
			status: &container.PodStatus{ID: "a", Name: "web", Namespace: "ns",
				SandboxStatuses: []*runtimeapi.PodSandboxStatus{
					{Id: "s2", State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: 2},
					{Id: "s1", State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY, CreatedAt: 1},
				},
				ContainerStatuses: []*container.Status{
					{ID: "c2", Name: "app", State: container.StateCreated, Hash: 7, Image: "img", CreatedAt: created},
					{ID: "c1", Name: "app", State: container.StateExited},
				},
			},
			want: &container.Pod{ID: "a", Name: "web", Namespace: "ns",
				Sandboxes: []*container.Container{{ID: "s2", State: container.StateRunning, CreatedAt: 2}, {ID: "s1", State: container.StateExited, CreatedAt: 1}},
				Containers: []*container.Container{
					{ID: "c2", Name: "app", State: container.StateCreated, Hash: 7, Image: "img", CreatedAt: created.UnixNano()},
					{ID: "c1", Name: "app", State: container.StateExited},
				},
			},
		},
		{
			name: "named by the newest sandbox",
			status: &container.PodStatus{ID: "a", SandboxStatuses: []*runtimeapi.PodSandboxStatus{
				{Id: "s2", State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY, Metadata: &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "ns"}},
				{Id: "s1", State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY, Metadata: &runtimeapi.PodSandboxMetadata{Name: "old", Namespace: "old"}},
			}},
			want: &container.Pod{ID: "a", Name: "web", Namespace: "ns",
				Sandboxes: []*container.Container{{ID: "s2", State: container.StateExited}, {ID: "s1", State: container.StateExited}}},
		},
	}
	for _, tc := range tests {
		if got := podFromStatus(tc.status); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: podFromStatus =\n%s\nwant\n%s", tc.name, dump(got), dump(tc.want))
		}
	}
}

// The listing podFromStatus derives gives the same events as the runtime's listing would.
func TestPodFromStatusDiffsLikeAListing(t *testing.T) {
	rt := &fakeRuntime{pods: []*container.Pod{pod("a", sbx("s1", running), ctr("c1", exited), ctr("c2", running), ctr("c3", created))}}
	s, err := rt.GetPodStatus(t.Context(), "a", "pod-a", "default")
	if err != nil {
		t.Fatal(err)
	}
	fromListing, _ := Diff(nil, listing(rt.pods...))
	fromStatus, _ := Diff(nil, map[types.UID]*container.Pod{"a": podFromStatus(s)})
	if !reflect.DeepEqual(fromListing, fromStatus) {
		t.Errorf("events from the status %v, from the listing %v", fromStatus, fromListing)
	}
}

func dump(p *container.Pod) string {
	if p == nil {
		return "nil"
	}
	s := fmt.Sprintf("%s %s/%s", p.ID, p.Namespace, p.Name)
	for _, c := range append(append([]*container.Container(nil), p.Sandboxes...), p.Containers...) {
		s += fmt.Sprintf(" %+v", *c)
	}
	return s
}
