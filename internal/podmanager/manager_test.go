package podmanager

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func pod(name, uid string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(uid)}}
}

func TestManager(t *testing.T) {
	m := New()
	a, b := pod("a", "1"), pod("b", "2")
	m.AddOrUpdate(b)
	m.AddOrUpdate(a)
	if got := m.Pods(); len(got) != 2 || got[0] != a || got[1] != b {
		t.Fatalf("Pods() = %v", got)
	}
	a2 := pod("a", "1")
	a2.Labels = map[string]string{"v": "2"}
	m.AddOrUpdate(a2)
	if p, _ := m.ByUID("1"); p != a2 {
		t.Error("update not kept by UID")
	}
	if p, _ := m.ByFullName("a", "default"); p != a2 {
		t.Error("update not kept by name")
	}
	renamed := pod("c", "1")
	m.AddOrUpdate(renamed)
	if _, ok := m.ByFullName("a", "default"); ok {
		t.Error("the old name of a renamed pod is still known")
	}
	// A new pod with the same name (a replaced static pod) and then the removal of the old one.
	c2 := pod("c", "3")
	m.AddOrUpdate(c2)
	m.Remove(renamed)
	if p, ok := m.ByFullName("c", "default"); !ok || p != c2 {
		t.Error("removing the old UID dropped the new pod's name")
	}
	if _, ok := m.ByUID("1"); ok {
		t.Error("removed pod still known")
	}
}
