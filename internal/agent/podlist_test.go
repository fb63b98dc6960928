package agent

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodelet/nodelet/internal/podworkers"
)

func TestWithTerminating(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	pod := func(uid string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p" + uid, Namespace: "default", UID: types.UID(uid)}}
	}
	deleted := pod("api")
	apiDeletion := metav1.NewTime(t0.Add(-time.Minute))
	deleted.DeletionTimestamp = &apiDeletion
	statuses := map[types.UID]v1.PodStatus{"gone": {Phase: v1.PodRunning}}
	status := func(uid types.UID) (v1.PodStatus, bool) { s, ok := statuses[uid]; return s, ok }

	got := withTerminating([]*v1.Pod{pod("kept"), deleted}, []podworkers.Terminating{
		{Pod: pod("kept"), Since: t0, GracePeriod: 30},       // still desired (an eviction): listed once, untouched
		{Pod: pod("gone"), Since: t0, GracePeriod: 20},       // a removed static pod: added, Terminating
		{Pod: deleted.DeepCopy(), Since: t0, GracePeriod: 5}, // an API deletion, still desired
	}, status)
	if len(got) != 3 {
		t.Fatalf("%d pods, want 3", len(got))
	}
	if got[0].DeletionTimestamp != nil {
		t.Errorf("a desired pod got a deletionTimestamp")
	}
	if !got[1].DeletionTimestamp.Equal(&apiDeletion) {
		t.Errorf("the API's deletionTimestamp was replaced")
	}
	g := got[2]
	if g.UID != "gone" || g.DeletionTimestamp == nil || !g.DeletionTimestamp.Time.Equal(t0) || *g.DeletionGracePeriodSeconds != 20 || g.Status.Phase != v1.PodRunning {
		t.Errorf("removed pod = %+v, want deletionTimestamp %s, grace 20 and its Running status", g, t0)
	}
}
