package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	testclock "k8s.io/utils/clock/testing"
)

func apiPod(name, uid string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: k8stypes.UID(uid),
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}},
		Spec:   v1.PodSpec{NodeName: "n1", Containers: []v1.Container{{Name: "c", Image: "busybox:1.35"}}},
		Status: v1.PodStatus{Phase: v1.PodRunning},
	}
}

func TestAPIPodsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	a := NewAPIPods(dir, 1, testclock.NewFakeClock(time.Time{}), nil)
	in := []*v1.Pod{apiPod("b", "2"), apiPod("a", "1")}
	a.Record(in)
	a.Write()
	got, _, err := LoadAPIPods(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].UID != "1" || got[1].UID != "2" {
		t.Fatalf("loaded %d pods, want a then b by UID", len(got))
	}
	if got[0].Spec.Containers[0].Image != "busybox:1.35" || got[0].Status.Phase != v1.PodRunning || got[0].Spec.NodeName != "n1" {
		t.Errorf("spec or status lost: %+v", got[0])
	}
	if len(got[0].ManagedFields) != 0 {
		t.Errorf("managedFields kept in the checkpoint")
	}
	if len(in[0].ManagedFields) == 0 {
		t.Errorf("encoding stripped managedFields from the caller's pod")
	}
}

// Write writes only a changed listing.
func TestAPIPodsWritesOnlyChanges(t *testing.T) {
	dir := t.TempDir()
	a := NewAPIPods(dir, 1, testclock.NewFakeClock(time.Time{}), nil)
	path := filepath.Join(dir, APIPodsFileName)
	a.Write()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("written before any listing: %v", err)
	}
	a.Record([]*v1.Pod{apiPod("a", "1")})
	a.Write()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	a.Write()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("written again without a new listing")
	}
	a.Record([]*v1.Pod{apiPod("a", "1")})
	a.Write()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("an identical listing was written again")
	}
	a.Record(nil)
	a.Write()
	if pods, _, err := LoadAPIPods(dir); err != nil || len(pods) != 0 {
		t.Errorf("after an empty listing: %d pods, %v", len(pods), err)
	}
}

// A corrupt file is moved aside and reported; nodelet starts without it.
func TestAPIPodsCorrupt(t *testing.T) {
	dir := t.TempDir()
	a := NewAPIPods(dir, 1, testclock.NewFakeClock(time.Time{}), nil)
	a.Record([]*v1.Pod{apiPod("a", "1")})
	a.Write()
	path := filepath.Join(dir, APIPodsFileName)
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), "busybox", "busyb0x", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	pods, _, err := LoadAPIPods(dir)
	if err == nil || !strings.Contains(err.Error(), "checksum") || pods != nil {
		t.Fatalf("corrupt checkpoint: pods %v, err %v", pods, err)
	}
	if _, err := os.Stat(path + ".corrupt"); err != nil {
		t.Errorf("not moved aside: %v", err)
	}
	if pods, _, err := LoadAPIPods(dir); err != nil || pods != nil {
		t.Errorf("after moving aside: %v %v", pods, err)
	}
}

// The services, once listed, are kept beside the pods, reduced to what environment variables
// need.
func TestAPIPodsKeepServices(t *testing.T) {
	dir := t.TempDir()
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Labels: map[string]string{"a": "b"}},
		Spec: v1.ServiceSpec{ClusterIP: "10.96.0.10", Ports: []v1.ServicePort{{Name: "http", Port: 80, Protocol: v1.ProtocolTCP}}, Selector: map[string]string{"app": "web"}}}
	listed := false
	a := NewAPIPods(dir, 1, testclock.NewFakeClock(time.Time{}), func() ([]*v1.Service, bool) { return []*v1.Service{svc}, listed })
	a.Record([]*v1.Pod{apiPod("a", "1")})
	a.Write()
	if _, svcs, err := LoadAPIPods(dir); err != nil || len(svcs) != 0 {
		t.Fatalf("services before they were listed: %v %v", svcs, err)
	}
	listed = true
	a.Record([]*v1.Pod{apiPod("a", "1"), apiPod("b", "2")})
	a.Write()
	_, svcs, err := LoadAPIPods(dir)
	if err != nil || len(svcs) != 1 {
		t.Fatalf("services: %v %v", svcs, err)
	}
	if s := svcs[0]; s.Name != "web" || s.Spec.ClusterIP != "10.96.0.10" || len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Port != 80 || s.Labels != nil || s.Spec.Selector != nil {
		t.Errorf("service kept as %+v, want name, cluster IP and ports only", s)
	}
}
