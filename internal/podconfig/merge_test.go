package podconfig

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// tpod builds a pod from a compact description: "name/uid" plus modifiers.
func tpod(nameUID string, mods ...func(*v1.Pod)) *v1.Pod {
	name, uid, _ := strings.Cut(nameUID, "/")
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(uid)},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "busybox:1.35"}}},
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

func image(img string) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.Containers[0].Image = img }
}
func label(k, v string) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Labels = map[string]string{k: v} }
}
func annotation(k, v string) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Annotations = map[string]string{k: v} }
}
func phase(ph v1.PodPhase) func(*v1.Pod) { return func(p *v1.Pod) { p.Status.Phase = ph } }
func deleted(p *v1.Pod) {
	ts := metav1.NewTime(t0)
	p.DeletionTimestamp = &ts
	p.DeletionGracePeriodSeconds = new(int64)
}

type step struct {
	// restore merges the pods as restored from the checkpoint (State.Restore).
	restore bool
	source  string
	pods    []*v1.Pod
	want    []string // "OP source uid,uid" per update, in order
	reject  []string // full names refused
}

func describe(updates []PodUpdate) []string {
	var out []string
	for _, u := range updates {
		var uids []string
		for _, p := range u.Pods {
			uids = append(uids, string(p.UID))
		}
		out = append(out, fmt.Sprintf("%s %s %s", u.Op, u.Source, strings.Join(uids, ",")))
	}
	return out
}

func TestMergeSequences(t *testing.T) {
	cases := []struct {
		name  string
		steps []step
	}{
		{"first empty listing marks the source with an empty ADD", []step{
			{source: "file", pods: nil, want: []string{"ADD file "}},
			{source: "file", pods: nil, want: nil},
		}},
		{"new pods are added in snapshot order", []step{
			{source: "file", pods: []*v1.Pod{tpod("b/2"), tpod("a/1")}, want: []string{"ADD file 2,1"}},
		}},
		{"identical snapshot yields nothing", []step{
			{source: "file", pods: []*v1.Pod{tpod("a/1")}, want: []string{"ADD file 1"}},
			{source: "file", pods: []*v1.Pod{tpod("a/1")}, want: nil},
		}},
		{"spec change is an UPDATE", []step{
			{source: "file", pods: []*v1.Pod{tpod("a/1")}, want: []string{"ADD file 1"}},
			{source: "file", pods: []*v1.Pod{tpod("a/1", image("busybox:1.36"))}, want: []string{"UPDATE file 1"}},
		}},
		{"label and annotation changes are UPDATEs, local annotations are not", []step{
			{source: "file", pods: []*v1.Pod{tpod("a/1")}, want: []string{"ADD file 1"}},
			{source: "file", pods: []*v1.Pod{tpod("a/1", label("k", "v"))}, want: []string{"UPDATE file 1"}},
			{source: "file", pods: []*v1.Pod{tpod("a/1", label("k", "v"), annotation("x", "y"))}, want: []string{"UPDATE file 1"}},
			{source: "file", pods: []*v1.Pod{tpod("a/1", label("k", "v"), annotation("x", "y"), func(p *v1.Pod) {
				p.Annotations[ConfigFirstSeenAnnotationKey] = "other"
			})}, want: nil},
		}},
		{"status-only change is a RECONCILE", []step{
			{source: "api", pods: []*v1.Pod{tpod("a/1")}, want: []string{"ADD api 1"}},
			{source: "api", pods: []*v1.Pod{tpod("a/1", phase(v1.PodRunning))}, want: []string{"RECONCILE api 1"}},
		}},
		{"deletionTimestamp is a DELETE", []step{
			{source: "api", pods: []*v1.Pod{tpod("a/1")}, want: []string{"ADD api 1"}},
			{source: "api", pods: []*v1.Pod{tpod("a/1", deleted)}, want: []string{"DELETE api 1"}},
		}},
		{"leaving the source is a REMOVE", []step{
			{source: "file", pods: []*v1.Pod{tpod("a/1"), tpod("b/2")}, want: []string{"ADD file 1,2"}},
			{source: "file", pods: []*v1.Pod{tpod("b/2")}, want: []string{"REMOVE file 1"}},
		}},
		{"a changed manifest (new UID) is REMOVE then ADD, in that order", []step{
			{source: "file", pods: []*v1.Pod{tpod("a/1")}, want: []string{"ADD file 1"}},
			{source: "file", pods: []*v1.Pod{tpod("a/1b", image("x:2"))}, want: []string{"REMOVE file 1", "ADD file 1b"}},
		}},
		{"one snapshot with every kind of change, in upstream's order", []step{
			{source: "api", pods: []*v1.Pod{tpod("a/1"), tpod("b/2"), tpod("c/3"), tpod("d/4")}, want: []string{"ADD api 1,2,3,4"}},
			{source: "api", pods: []*v1.Pod{tpod("b/2", image("x:2")), tpod("c/3", deleted), tpod("d/4", phase(v1.PodRunning)), tpod("e/5")},
				want: []string{"REMOVE api 1", "ADD api 5", "UPDATE api 2", "DELETE api 3", "RECONCILE api 4"}},
		}},
		{"sources are independent", []step{
			{source: "file", pods: []*v1.Pod{tpod("a/1")}, want: []string{"ADD file 1"}},
			{source: "http", pods: []*v1.Pod{tpod("b/2")}, want: []string{"ADD http 2"}},
			{source: "file", pods: nil, want: []string{"REMOVE file 1"}},
			{source: "http", pods: []*v1.Pod{tpod("b/2")}, want: nil},
		}},
		{"restored pods run; the source's first listing replaces them", []step{
			{restore: true, source: "api", pods: []*v1.Pod{tpod("a/1"), tpod("b/2")}, want: []string{"ADD api 1,2"}},
			{source: "api", pods: []*v1.Pod{tpod("b/2"), tpod("c/3")}, want: []string{"REMOVE api 1", "ADD api 3"}},
		}},
		{"an empty first listing after a restore removes the restored pods", []step{
			{restore: true, source: "api", pods: []*v1.Pod{tpod("a/1")}, want: []string{"ADD api 1"}},
			{source: "api", pods: nil, want: []string{"REMOVE api 1", "ADD api "}},
		}},
		{"a first listing equal to the restored pods marks the source with an empty ADD", []step{
			{restore: true, source: "api", pods: []*v1.Pod{tpod("a/1")}, want: []string{"ADD api 1"}},
			{source: "api", pods: []*v1.Pod{tpod("a/1")}, want: []string{"ADD api "}},
		}},
		{"duplicate names within a source: the first wins", []step{
			{source: "http", pods: []*v1.Pod{tpod("a/1"), tpod("a/2")}, want: []string{"ADD http 1"}, reject: []string{"a_default"}},
		}},
		{"the same full name from two sources: the first source wins; freed names are retried", []step{
			{source: "file", pods: []*v1.Pod{tpod("a/1")}, want: []string{"ADD file 1"}},
			{source: "http", pods: []*v1.Pod{tpod("a/9"), tpod("b/2")}, want: []string{"ADD http 2"}, reject: []string{"a_default"}},
			{source: "http", pods: []*v1.Pod{tpod("a/9"), tpod("b/2")}, want: nil, reject: []string{"a_default"}},
			{source: "file", pods: nil, want: []string{"REMOVE file 1", "ADD http 9"}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewState()
			for i, st := range tc.steps {
				merge := s.Merge
				if st.restore {
					merge = s.Restore
				}
				got, rej := merge(st.source, st.pods, t0)
				if g, w := strings.Join(describe(got), " | "), strings.Join(st.want, " | "); g != w {
					t.Fatalf("step %d: updates\n got: %s\nwant: %s", i, g, w)
				}
				var names []string
				for _, r := range rej {
					names = append(names, FullName(r.Pod))
				}
				if g, w := strings.Join(names, ","), strings.Join(st.reject, ","); g != w {
					t.Fatalf("step %d: rejected %q, want %q", i, g, w)
				}
			}
		})
	}
}

func TestMergeAnnotatesAndCopies(t *testing.T) {
	s := NewState()
	in := tpod("a/1")
	got, _ := s.Merge("file", []*v1.Pod{in}, t0)
	p := got[0].Pods[0]
	if p.Annotations[ConfigSourceAnnotationKey] != "file" {
		t.Errorf("config.source = %q, want file", p.Annotations[ConfigSourceAnnotationKey])
	}
	if p.Annotations[ConfigFirstSeenAnnotationKey] != t0.Format(time.RFC3339Nano) {
		t.Errorf("config.seen = %q", p.Annotations[ConfigFirstSeenAnnotationKey])
	}
	if in.Annotations != nil {
		t.Errorf("the source's pod was mutated: %v", in.Annotations)
	}
	p.Labels = map[string]string{"mutated": "yes"}
	got, _ = s.Merge("file", []*v1.Pod{tpod("a/1")}, t0.Add(time.Second))
	if len(got) != 0 {
		t.Fatalf("mutating an emitted pod leaked into the state: %v", describe(got))
	}
	// config.seen keeps the first-seen time across updates.
	got, _ = s.Merge("file", []*v1.Pod{tpod("a/1", image("x:2"))}, t0.Add(time.Hour))
	if v := got[0].Pods[0].Annotations[ConfigFirstSeenAnnotationKey]; v != t0.Format(time.RFC3339Nano) {
		t.Errorf("config.seen after update = %q, want the first time", v)
	}
}

func TestSeen(t *testing.T) {
	s := NewState()
	if s.Seen("file") {
		t.Fatal("seen before any listing")
	}
	s.Merge("file", nil, t0)
	if !s.Seen("file") || s.Seen("file", "http") {
		t.Fatal("Seen wrong after the file listing")
	}
	s.Restore("api", []*v1.Pod{tpod("a/1")}, t0)
	if s.Seen("api") {
		t.Fatal("restored pods count as the api source's listing: housekeeping would remove pods it does not know")
	}
	s.Merge("api", nil, t0)
	if !s.Seen("file", "api") {
		t.Fatal("not seen after the api listing")
	}
}
