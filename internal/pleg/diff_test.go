package pleg

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/nodelet/nodelet/internal/container"
)

const (
	running = container.StateRunning
	exited  = container.StateExited
	created = container.StateCreated
	unknown = container.StateUnknown
)

func ctr(id string, s container.State) *container.Container {
	return &container.Container{ID: id, Name: "c-" + id, State: s}
}

func sbx(id string, s container.State) *container.Container {
	return &container.Container{ID: id, State: s}
}

// pod builds a listing of one pod; sandboxes are the *container.Container values with no name.
func pod(uid types.UID, objs ...*container.Container) *container.Pod {
	p := &container.Pod{ID: uid, Name: "pod-" + string(uid), Namespace: "default"}
	for _, o := range objs {
		if o.Name == "" {
			p.Sandboxes = append(p.Sandboxes, o)
		} else {
			p.Containers = append(p.Containers, o)
		}
	}
	return p
}

func listing(pods ...*container.Pod) map[types.UID]*container.Pod {
	m := map[types.UID]*container.Pod{}
	for _, p := range pods {
		m[p.ID] = p
	}
	return m
}

func ev(uid types.UID, t EventType, cid string) Event { return Event{ID: uid, Type: t, Data: cid} }

func TestDiff(t *testing.T) {
	tests := []struct {
		name        string
		old, cur    map[types.UID]*container.Pod
		wantEvents  []Event
		wantChanged []types.UID
	}{
		{
			name: "both empty",
		},
		{
			name:        "new running container and sandbox",
			cur:         listing(pod("a", sbx("s1", running), ctr("c1", running))),
			wantEvents:  []Event{ev("a", ContainerStarted, "c1"), ev("a", ContainerStarted, "s1")},
			wantChanged: []types.UID{"a"},
		},
		{
			name:        "new exited container is reported dead",
			cur:         listing(pod("a", ctr("c1", exited))),
			wantEvents:  []Event{ev("a", ContainerDied, "c1")},
			wantChanged: []types.UID{"a"},
		},
		{
			name:        "new created container is a change, as unknown",
			cur:         listing(pod("a", ctr("c1", created))),
			wantEvents:  []Event{ev("a", ContainerChanged, "c1")},
			wantChanged: []types.UID{"a"},
		},
		{
			name:        "running to exited",
			old:         listing(pod("a", sbx("s1", running), ctr("c1", running))),
			cur:         listing(pod("a", sbx("s1", running), ctr("c1", exited))),
			wantEvents:  []Event{ev("a", ContainerDied, "c1")},
			wantChanged: []types.UID{"a"},
		},
		{
			name:        "created to running",
			old:         listing(pod("a", ctr("c1", created))),
			cur:         listing(pod("a", ctr("c1", running))),
			wantEvents:  []Event{ev("a", ContainerStarted, "c1")},
			wantChanged: []types.UID{"a"},
		},
		{
			name:        "created to exited",
			old:         listing(pod("a", ctr("c1", created))),
			cur:         listing(pod("a", ctr("c1", exited))),
			wantEvents:  []Event{ev("a", ContainerDied, "c1")},
			wantChanged: []types.UID{"a"},
		},
		{
			name: "created to unknown is no change",
			old:  listing(pod("a", ctr("c1", created))),
			cur:  listing(pod("a", ctr("c1", unknown))),
		},
		{
			name:        "running to unknown",
			old:         listing(pod("a", ctr("c1", running))),
			cur:         listing(pod("a", ctr("c1", unknown))),
			wantEvents:  []Event{ev("a", ContainerChanged, "c1")},
			wantChanged: []types.UID{"a"},
		},
		{
			name:        "unknown to exited",
			old:         listing(pod("a", ctr("c1", unknown))),
			cur:         listing(pod("a", ctr("c1", exited))),
			wantEvents:  []Event{ev("a", ContainerDied, "c1")},
			wantChanged: []types.UID{"a"},
		},
		{
			name:        "exited to gone",
			old:         listing(pod("a", sbx("s1", running), ctr("c1", exited))),
			cur:         listing(pod("a", sbx("s1", running))),
			wantEvents:  []Event{ev("a", ContainerRemoved, "c1")},
			wantChanged: []types.UID{"a"},
		},
		{
			name:        "running to gone: died then removed",
			old:         listing(pod("a", sbx("s1", running), ctr("c1", running))),
			cur:         listing(pod("a", sbx("s1", running))),
			wantEvents:  []Event{ev("a", ContainerDied, "c1"), ev("a", ContainerRemoved, "c1")},
			wantChanged: []types.UID{"a"},
		},
		{
			name:        "unknown to gone: died then removed",
			old:         listing(pod("a", ctr("c1", unknown))),
			cur:         listing(pod("a")),
			wantEvents:  []Event{ev("a", ContainerDied, "c1"), ev("a", ContainerRemoved, "c1")},
			wantChanged: []types.UID{"a"},
		},
		{
			name:        "sandbox dies, container keeps running",
			old:         listing(pod("a", sbx("s1", running), ctr("c1", running))),
			cur:         listing(pod("a", sbx("s1", exited), ctr("c1", running))),
			wantEvents:  []Event{ev("a", ContainerDied, "s1")},
			wantChanged: []types.UID{"a"},
		},
		{
			name: "sandbox replaced: old removed, new started",
			old:  listing(pod("a", sbx("s1", exited), ctr("c1", exited))),
			cur:  listing(pod("a", sbx("s2", running), ctr("c1", exited))),
			wantEvents: []Event{
				ev("a", ContainerRemoved, "s1"),
				ev("a", ContainerStarted, "s2"),
			},
			wantChanged: []types.UID{"a"},
		},
		{
			name: "whole pod vanishes",
			old:  listing(pod("a", sbx("s1", running), ctr("c1", exited), ctr("c2", running))),
			wantEvents: []Event{
				ev("a", ContainerRemoved, "c1"),
				ev("a", ContainerDied, "c2"), ev("a", ContainerRemoved, "c2"),
				ev("a", ContainerDied, "s1"), ev("a", ContainerRemoved, "s1"),
			},
			wantChanged: []types.UID{"a"},
		},
		{
			name: "multiple pods, sorted by pod then container, unchanged pod left out",
			old: listing(
				pod("b", ctr("c9", running)),
				pod("c", ctr("c5", running)),
			),
			cur: listing(
				pod("c", ctr("c5", running)),
				pod("b", ctr("c9", exited), ctr("c3", running)),
				pod("a", ctr("c2", running), ctr("c1", running)),
			),
			wantEvents: []Event{
				ev("a", ContainerStarted, "c1"),
				ev("a", ContainerStarted, "c2"),
				ev("b", ContainerStarted, "c3"),
				ev("b", ContainerDied, "c9"),
			},
			wantChanged: []types.UID{"a", "b"},
		},
		{
			name: "no change, no events",
			old:  listing(pod("a", sbx("s1", running), ctr("c1", running), ctr("c0", exited))),
			cur:  listing(pod("a", sbx("s1", running), ctr("c1", running), ctr("c0", exited))),
		},
		{
			name:        "nil pods are absent",
			old:         map[types.UID]*container.Pod{"a": nil, "b": pod("b", ctr("c1", running))},
			cur:         map[types.UID]*container.Pod{"b": nil, "c": nil},
			wantEvents:  []Event{ev("b", ContainerDied, "c1"), ev("b", ContainerRemoved, "c1")},
			wantChanged: []types.UID{"b"},
		},
		{
			name: "pod without containers has no events",
			cur:  listing(pod("a")),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, changed := Diff(tt.old, tt.cur)
			if !reflect.DeepEqual(events, tt.wantEvents) {
				t.Errorf("events:\n got %v\nwant %v", events, tt.wantEvents)
			}
			if !reflect.DeepEqual(changed, tt.wantChanged) {
				t.Errorf("changed: got %v, want %v", changed, tt.wantChanged)
			}
		})
	}
}

// TestDiffAcrossRelists follows one container through several listings, each diffed against the
// one before, as Generic does.
func TestDiffAcrossRelists(t *testing.T) {
	steps := []struct {
		cur  map[types.UID]*container.Pod
		want []Event
	}{
		{listing(pod("a", sbx("s1", running), ctr("c1", created))),
			[]Event{ev("a", ContainerChanged, "c1"), ev("a", ContainerStarted, "s1")}},
		{listing(pod("a", sbx("s1", running), ctr("c1", running))),
			[]Event{ev("a", ContainerStarted, "c1")}},
		{listing(pod("a", sbx("s1", running), ctr("c1", running))),
			nil},
		{listing(pod("a", sbx("s1", running), ctr("c1", exited), ctr("c2", running))),
			[]Event{ev("a", ContainerDied, "c1"), ev("a", ContainerStarted, "c2")}},
		{listing(pod("a", sbx("s1", exited), ctr("c2", exited))),
			[]Event{ev("a", ContainerRemoved, "c1"), ev("a", ContainerDied, "c2"), ev("a", ContainerDied, "s1")}},
		{listing(),
			[]Event{ev("a", ContainerRemoved, "c2"), ev("a", ContainerRemoved, "s1")}},
	}
	var old map[types.UID]*container.Pod
	for i, s := range steps {
		got, _ := Diff(old, s.cur)
		if !reflect.DeepEqual(got, s.want) {
			t.Errorf("relist %d:\n got %v\nwant %v", i, got, s.want)
		}
		old = s.cur
	}
}

func TestDiffDoesNotModifyListings(t *testing.T) {
	old := listing(pod("a", ctr("c2", running), ctr("c1", running)))
	cur := listing(pod("a", ctr("c2", exited)))
	Diff(old, cur)
	if got := old["a"].Containers; len(got) != 2 || got[0].ID != "c2" || got[1].ID != "c1" {
		t.Errorf("old listing modified: %v", got)
	}
	if len(cur) != 1 || len(cur["a"].Containers) != 1 {
		t.Errorf("current listing modified: %v", cur)
	}
}
