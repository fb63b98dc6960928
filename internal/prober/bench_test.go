package prober

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// benchProbedPod is a pod of three containers with a readiness and a liveness probe each, and
// its status: all running and started since t0.
func benchProbedPod() (*v1.Pod, v1.PodStatus) {
	var containers []v1.Container
	st := v1.PodStatus{Phase: v1.PodRunning, PodIP: "10.0.0.1"}
	for _, name := range []string{"app", "log", "metrics"} {
		containers = append(containers, v1.Container{Name: name, Image: name + ":1",
			ReadinessProbe: execProbeOf("ready", 10, 1, 3, 0), LivenessProbe: execProbeOf("alive", 10, 1, 3, 0)})
		st.ContainerStatuses = append(st.ContainerStatuses, v1.ContainerStatus{Name: name, ContainerID: "containerd://" + name,
			Started: ptr.To(true), Ready: true,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}})
	}
	return newPod(containers...), st
}

// BenchmarkTick measures the decisions of one probe worker tick (every probe, every period) for
// a healthy container: observe the status, step before probing, step with the outcome.
func BenchmarkTick(b *testing.B) {
	pod, st := benchProbedPod()
	c := &pod.Spec.Containers[2]
	s := held(readiness, success, 1, func(s *state) { s.ContainerID = "containerd://metrics" })
	at := t0.Add(time.Minute)
	out := &outcome{Result: probeSuccess}
	b.ReportAllocs()
	for b.Loop() {
		o := observe(at, t0, pod, c, false, st, true)
		next, v := step(s, o)
		if !v.Probe {
			b.Fatalf("no probe asked: %+v", v)
		}
		o.Probe = out
		next, v = step(s, o)
		if v.Changed || next.Result != success {
			b.Fatalf("result changed: %+v", next)
		}
	}
}

// BenchmarkResults measures the probe results the pod syncer asks for on every sync (once):
// a pod with three containers with two probes each.
func BenchmarkResults(b *testing.B) {
	pod, _ := benchProbedPod()
	m := NewManager(Config{}, Deps{Statuses: &fakeStatuses{}})
	b.Cleanup(m.Stop)
	ids := map[string]string{}
	m.mu.Lock()
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		id := fmt.Sprintf("containerd://%s", c.Name)
		ids[c.Name] = id
		for _, k := range []kind{readiness, liveness} {
			w := newWorker(m, k, pod, c, false)
			w.pub = published{containerID: id, has: true, result: success}
			m.workers[w.key] = w
		}
	}
	m.mu.Unlock()
	b.ReportAllocs()
	for b.Loop() {
		if r := m.Results(pod, ids); len(r.Ready) != 3 {
			b.Fatalf("results: %+v", r)
		}
	}
}
