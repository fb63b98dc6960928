package mirrorpods

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodelet/nodelet/internal/podconfig"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// static is a static pod as the file source makes it.
func static(name, hash string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", UID: types.UID(hash),
		Labels: map[string]string{"tier": "control-plane"},
		Annotations: map[string]string{podconfig.ConfigSourceAnnotationKey: podconfig.FileSource,
			podconfig.ConfigHashAnnotationKey: hash, podconfig.ConfigFirstSeenAnnotationKey: "2026-11-23T10:00:00Z"}},
		Spec:   v1.PodSpec{NodeName: "n1", Containers: []v1.Container{{Name: "c", Image: "busybox"}}},
		Status: v1.PodStatus{Phase: v1.PodRunning}}
}

// mirror is a mirror pod as the API server holds it.
func mirror(name, hash string, uid types.UID, mods ...func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", UID: uid,
		Annotations: map[string]string{podconfig.ConfigMirrorAnnotationKey: hash, podconfig.ConfigHashAnnotationKey: hash}},
		Spec: v1.PodSpec{NodeName: "n1"}}
	for _, m := range mods {
		m(p)
	}
	return p
}

func deleting(p *v1.Pod) {
	now := metav1.NewTime(t0)
	p.DeletionTimestamp = &now
}

func TestDecide(t *testing.T) {
	s := static("etcd-n1", "h1")
	for _, tc := range []struct {
		name   string
		mirror *v1.Pod
		want   Action
	}{
		{"no mirror", nil, Create},
		{"current", mirror("etcd-n1", "h1", "m1"), Keep},
		{"outdated", mirror("etcd-n1", "h0", "m1"), Recreate},
		{"no mirror annotation", mirror("etcd-n1", "h1", "m1", func(p *v1.Pod) { delete(p.Annotations, podconfig.ConfigMirrorAnnotationKey) }), Recreate},
		{"being deleted", mirror("etcd-n1", "h1", "m1", deleting), Recreate},
		{"another name", mirror("etcd-n2", "h1", "m1"), Recreate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(s, tc.mirror); got != tc.want {
				t.Errorf("Decide = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestMirrorOf(t *testing.T) {
	s := static("etcd-n1", "h1")
	s.ResourceVersion, s.Generation = "7", 2
	m := MirrorOf(s, "n1", "node-uid")
	if m.Name != "etcd-n1" || m.Namespace != "kube-system" || m.Spec.NodeName != "n1" || m.Labels["tier"] != "control-plane" {
		t.Errorf("identity or spec not copied: %+v", m.ObjectMeta)
	}
	if m.Annotations[podconfig.ConfigMirrorAnnotationKey] != "h1" || m.Annotations[podconfig.ConfigSourceAnnotationKey] != podconfig.FileSource {
		t.Errorf("annotations %v", m.Annotations)
	}
	if m.UID != "" || m.ResourceVersion != "" || m.Generation != 0 || m.Status.Phase != "" {
		t.Errorf("server-set fields kept: uid %q rv %q gen %d phase %q", m.UID, m.ResourceVersion, m.Generation, m.Status.Phase)
	}
	if len(m.OwnerReferences) != 1 {
		t.Fatalf("owner references %+v", m.OwnerReferences)
	}
	o := m.OwnerReferences[0]
	if o.APIVersion != "v1" || o.Kind != "Node" || o.Name != "n1" || o.UID != "node-uid" ||
		o.Controller == nil || !*o.Controller || o.BlockOwnerDeletion != nil {
		t.Errorf("owner reference %+v: NodeRestriction wants a controller reference to this Node without blockOwnerDeletion", o)
	}
	if _, ok := s.Annotations[podconfig.ConfigMirrorAnnotationKey]; ok || s.UID == "" {
		t.Error("MirrorOf modified the static pod")
	}
}

func TestChanged(t *testing.T) {
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	base := map[types.NamespacedName]*v1.Pod{key("a"): mirror("a", "h1", "m1"), key("b"): mirror("b", "h1", "m2")}
	with := func(name types.NamespacedName, p *v1.Pod) map[types.NamespacedName]*v1.Pod {
		out := map[types.NamespacedName]*v1.Pod{}
		for k, v := range base {
			out[k] = v
		}
		if p == nil {
			delete(out, name)
		} else {
			out[name] = p
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		after map[types.NamespacedName]*v1.Pod
		want  string // the namespaced name
	}{
		{"same", with(key("a"), mirror("a", "h1", "m1")), ""},
		{"status only", with(key("a"), mirror("a", "h1", "m1", func(p *v1.Pod) { p.Status.Phase = v1.PodRunning })), ""},
		{"disappeared", with(key("a"), nil), "ns/a"},
		{"appeared", with(key("c"), mirror("c", "h1", "m3")), "ns/c"},
		{"recreated", with(key("b"), mirror("b", "h1", "m9")), "ns/b"},
		{"new hash", with(key("b"), mirror("b", "h2", "m2")), "ns/b"},
		{"being deleted", with(key("a"), mirror("a", "h1", "m1", deleting)), "ns/a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Changed(base, tc.after)
			s := ""
			if len(got) > 0 {
				s = got[0].String()
			}
			if len(got) > 1 || s != tc.want {
				t.Errorf("Changed = %v, want [%s]", got, tc.want)
			}
		})
	}
}
