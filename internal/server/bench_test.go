package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
)

// benchPods are n running pods of three containers, with labels, resources and a restart each.
func benchPods(n int) []*v1.Pod {
	res := v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   v1.ResourceList{v1.ResourceMemory: resource.MustParse("128Mi")},
	}
	pods := make([]*v1.Pod, 0, n)
	for i := range n {
		p := podWith(fmt.Sprintf("web-%03d", i), 1, "app", "log", "metrics")
		p.Labels = map[string]string{"app": "web", "tier": "frontend"}
		p.Status.Phase = v1.PodRunning
		p.Status.PodIP = "10.1.0.5"
		for j := range p.Spec.Containers {
			p.Spec.Containers[j].Resources = res
			p.Status.ContainerStatuses[j].Ready = true
		}
		pods = append(pods, p)
	}
	return pods
}

// BenchmarkGetPods measures serving GET /pods (the read-only API's pod list, which monitoring
// agents poll) with 100 pods, through the server's routes.
func BenchmarkGetPods(b *testing.B) {
	pods := &fakePods{pods: benchPods(100)}
	srv, err := New(Config{Address: "127.0.0.1:0", Clock: testingclock.NewFakeClock(t0)},
		Deps{Pods: pods, Logs: &fakeLogs{root: b.TempDir(), uids: map[string]types.UID{}}})
	if err != nil {
		b.Fatal(err)
	}
	h := srv.Handler()
	req := httptest.NewRequest(http.MethodGet, "/pods", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("code %d", rec.Code)
		}
	}
}

// BenchmarkEncodePods measures the JSON encoding of 100 pods alone.
func BenchmarkEncodePods(b *testing.B) {
	pods := benchPods(100)
	data, err := encodePods(pods)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodePods(pods); err != nil {
			b.Fatal(err)
		}
	}
}
