package metrics

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/container"
)

func TestOperationType(t *testing.T) {
	for method, want := range map[string]string{
		"/runtime.v1.RuntimeService/Version":                   "version",
		"/runtime.v1.RuntimeService/RunPodSandbox":             "run_podsandbox",
		"/runtime.v1.RuntimeService/PodSandboxStatus":          "podsandbox_status",
		"/runtime.v1.RuntimeService/ListPodSandbox":            "list_podsandbox",
		"/runtime.v1.RuntimeService/ListPodSandboxStats":       "list_podsandbox_stats",
		"/runtime.v1.RuntimeService/ListContainers":            "list_containers",
		"/runtime.v1.RuntimeService/ExecSync":                  "exec_sync",
		"/runtime.v1.RuntimeService/PortForward":               "port_forward",
		"/runtime.v1.RuntimeService/UpdateContainerResources":  "update_container",
		"/runtime.v1.RuntimeService/ReopenContainerLog":        "reopen_container_log",
		"/runtime.v1.RuntimeService/GetContainerEvents":        "get_container_events",
		"/runtime.v1.RuntimeService/ListPodSandboxMetrics":     "list_podsandbox_metrics",
		"/runtime.v1.RuntimeService/UpdatePodSandboxResources": "update_podsandbox_resources",
		"/runtime.v1.ImageService/PullImage":                   "pull_image",
		"/runtime.v1.ImageService/ImageFsInfo":                 "image_fs_info",
	} {
		if got := OperationType(method); got != want {
			t.Errorf("OperationType(%s) = %q, want %q", method, got, want)
		}
	}
}

func TestRuntimeInterceptorRecordsOperations(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	k := New(clk)
	intercept := k.UnaryClientInterceptor()
	ok := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		clk.Step(30 * time.Millisecond)
		return nil
	}
	failing := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		return errors.New("boom")
	}
	for range 2 {
		_ = intercept(context.Background(), "/runtime.v1.RuntimeService/ListContainers", nil, nil, nil, ok)
	}
	if err := intercept(context.Background(), "/runtime.v1.ImageService/PullImage", nil, nil, nil, failing); err == nil {
		t.Error("the interceptor must return the call's error")
	}
	want := `
# HELP kubelet_runtime_operations_errors_total [ALPHA] Cumulative number of runtime operation errors by operation type.
# TYPE kubelet_runtime_operations_errors_total counter
kubelet_runtime_operations_errors_total{operation_type="pull_image"} 1
# HELP kubelet_runtime_operations_total [ALPHA] Cumulative number of runtime operations by operation type.
# TYPE kubelet_runtime_operations_total counter
kubelet_runtime_operations_total{operation_type="list_containers"} 2
kubelet_runtime_operations_total{operation_type="pull_image"} 1
`
	if err := testutil.GatherAndCompare(k.Registry(), strings.NewReader(want),
		"kubelet_runtime_operations_total", "kubelet_runtime_operations_errors_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(k.runtimeOpsDur); n != 2 {
		t.Errorf("duration series: %d, want 2", n)
	}
	if got := testutil.ToFloat64(k.runtimeOpsErrs.WithLabelValues("pull_image")); got != 1 {
		t.Errorf("errors = %v", got)
	}
}

type fakeLister struct {
	pods []*container.Pod
	err  error
}

var _ RuntimeLister = (*fakeLister)(nil)

func (f *fakeLister) GetPods(context.Context) ([]*container.Pod, error) { return f.pods, f.err }

func TestRunningPodsAndContainers(t *testing.T) {
	k := New(testingclock.NewFakeClock(time.Unix(0, 0)))
	k.WatchRuntime(&fakeLister{pods: []*container.Pod{
		{ID: "a", Sandboxes: []*container.Container{{State: container.StateExited}, {State: container.StateRunning}},
			Containers: []*container.Container{{State: container.StateRunning}, {State: container.StateExited}, {State: container.StateCreated}}},
		{ID: "b", Sandboxes: []*container.Container{{State: container.StateExited}},
			Containers: []*container.Container{{State: container.StateExited}, {State: container.StateUnknown}}},
	}})
	want := `
# HELP kubelet_running_containers [ALPHA] Number of containers currently running
# TYPE kubelet_running_containers gauge
kubelet_running_containers{container_state="created"} 1
kubelet_running_containers{container_state="exited"} 2
kubelet_running_containers{container_state="running"} 1
kubelet_running_containers{container_state="unknown"} 1
# HELP kubelet_running_pods [ALPHA] Number of pods that have a running pod sandbox
# TYPE kubelet_running_pods gauge
kubelet_running_pods 1
`
	if err := testutil.GatherAndCompare(k.Registry(), strings.NewReader(want), "kubelet_running_pods", "kubelet_running_containers"); err != nil {
		t.Error(err)
	}
}

// /metrics is Prometheus text that the Prometheus parser reads, with upstream's names.
func TestHandlerServesParsableText(t *testing.T) {
	k := New(testingclock.NewFakeClock(time.Unix(0, 0)))
	k.WatchRuntime(&fakeLister{})
	k.ObservePodStart(1500 * time.Millisecond)
	k.ObservePodWorker("create", 20*time.Millisecond)
	k.ObserveRelist(3 * time.Millisecond)
	k.ObserveRelistInterval(time.Second)
	k.StreamConnected()
	k.StreamFailed()
	k.ObserveEventLatency(2 * time.Millisecond)
	w := httptest.NewRecorder()
	k.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(w.Body.String()))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, w.Body.String())
	}
	for _, name := range []string{"kubelet_pod_start_duration_seconds", "kubelet_pod_worker_duration_seconds",
		"kubelet_pleg_relist_duration_seconds", "kubelet_pleg_relist_interval_seconds", "kubelet_running_pods",
		"kubelet_running_containers", "kubelet_evented_pleg_connection_success_count", "kubelet_evented_pleg_connection_error_count",
		"kubelet_evented_pleg_connection_latency_seconds", "process_resident_memory_bytes", "process_cpu_seconds_total", "go_goroutines"} {
		if families[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if got := families["kubelet_pod_start_duration_seconds"].GetMetric()[0].GetHistogram().GetSampleSum(); got != 1.5 {
		t.Errorf("pod start sum = %v, want 1.5", got)
	}
}

// A failing runtime listing does not break the rest of /metrics.
func TestRuntimeListingErrorKeepsOtherMetrics(t *testing.T) {
	k := New(testingclock.NewFakeClock(time.Unix(0, 0)))
	k.WatchRuntime(&fakeLister{err: errors.New("runtime down")})
	k.ObserveRelist(time.Millisecond)
	w := httptest.NewRecorder()
	k.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if w.Code != 200 || !strings.Contains(w.Body.String(), "kubelet_pleg_relist_duration_seconds_count 1") {
		t.Errorf("/metrics with a failing runtime: %d\n%s", w.Code, w.Body.String())
	}
}

func TestProbeMetrics(t *testing.T) {
	p := NewProbes()
	pod := &v1.Pod{}
	pod.Name, pod.Namespace, pod.UID = "web", "default", "u1"
	p.ObserveProbe("Readiness", pod, "app", "successful", 10*time.Millisecond)
	p.ObserveProbe("Readiness", pod, "app", "failed", 10*time.Millisecond)
	p.ObserveProbe("Readiness", pod, "app", "successful", 10*time.Millisecond)
	want := `
# HELP prober_probe_total [BETA] Cumulative number of a liveness, readiness or startup probe for a container by result.
# TYPE prober_probe_total counter
prober_probe_total{container="app",namespace="default",pod="web",pod_uid="u1",probe_type="Readiness",result="failed"} 1
prober_probe_total{container="app",namespace="default",pod="web",pod_uid="u1",probe_type="Readiness",result="successful"} 2
`
	if err := testutil.GatherAndCompare(p.registry, strings.NewReader(want), "prober_probe_total"); err != nil {
		t.Error(err)
	}
	if got := testutil.CollectAndCount(p.duration); got != 1 {
		t.Errorf("duration series %d, want 1", got)
	}
	p.ForgetProbe("Readiness", pod, "app")
	if n := testutil.CollectAndCount(p.results) + testutil.CollectAndCount(p.duration); n != 0 {
		t.Errorf("%d series left after ForgetProbe", n)
	}
}
