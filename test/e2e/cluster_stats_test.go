package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// nodeProxy GETs a path of the node's kubelet API through the API server (nodes/proxy), as
// metrics-server and `kubectl get --raw` do.
func (cn *clusterNode) nodeProxy(t *testing.T, path string) string {
	t.Helper()
	return cn.cp.kubectl(t, "get", "--raw", "/api/v1/nodes/"+cn.name+"/proxy"+path)
}

// parseMetrics reads Prometheus text with the Prometheus parser.
func parseMetrics(t *testing.T, what, text string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("%s does not parse as Prometheus text: %v\n%s", what, err, text)
	}
	return families
}

// sample returns the value of the family's sample whose labels include want, or -1.
func sample(f *dto.MetricFamily, want map[string]string) float64 {
	if f == nil {
		return -1
	}
next:
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Untyped != nil:
			return m.GetUntyped().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return -1
}

// Issue 6, acceptance 4: through the API server, /stats/summary and /metrics/resource return
// well-formed data with non-zero CPU and memory for a running pod, and /metrics (and
// /metrics/probes) parse with the Prometheus text parser.
func TestClusterStatsSummaryAndMetrics(t *testing.T) {
	cn := startClusterNode(t, "--node-ip", hostIP(t))
	cn.waitNodeReady(60 * time.Second)
	name := cn.applyPod(t, "busy", `  containers:
  - name: spin
    image: docker.io/library/busybox:1.35
    command: ["sh", "-c", "while true; do i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; sleep 0.5; done"]
    readinessProbe:
      exec: {command: ["true"]}
      periodSeconds: 1
`)
	cn.waitAPIPod("default", name, 90*time.Second, "running", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodRunning })

	// CPU rates need two samples: poll until the pod's shows.
	var summary statsapi.Summary
	var pod *statsapi.PodStats
	deadline := time.Now().Add(60 * time.Second)
	for {
		raw := cn.nodeProxy(t, "/stats/summary")
		summary = statsapi.Summary{}
		if err := json.Unmarshal([]byte(raw), &summary); err != nil {
			t.Fatalf("/stats/summary is not a Summary: %v\n%s", err, raw)
		}
		pod = nil
		for i := range summary.Pods {
			if summary.Pods[i].PodRef.Name == name {
				pod = &summary.Pods[i]
			}
		}
		if pod != nil && pod.CPU != nil && pod.CPU.UsageNanoCores != nil && *pod.CPU.UsageNanoCores > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no CPU rate for pod %s in /stats/summary after 60 s:\n%s", name, raw)
		}
		time.Sleep(2 * time.Second)
	}
	js, _ := json.MarshalIndent(summary, "", "  ")
	n := summary.Node
	if n.NodeName != cn.name || n.CPU == nil || n.CPU.UsageCoreNanoSeconds == nil || *n.CPU.UsageCoreNanoSeconds == 0 ||
		n.Memory == nil || n.Memory.WorkingSetBytes == nil || *n.Memory.WorkingSetBytes == 0 {
		t.Errorf("node stats lack CPU or memory:\n%s", js)
	}
	if pod.Memory == nil || pod.Memory.WorkingSetBytes == nil || *pod.Memory.WorkingSetBytes == 0 ||
		pod.CPU.UsageCoreNanoSeconds == nil || *pod.CPU.UsageCoreNanoSeconds == 0 {
		t.Errorf("pod stats lack CPU or memory:\n%s", js)
	}
	if len(pod.Containers) != 1 || pod.Containers[0].Name != "spin" || pod.Containers[0].CPU == nil ||
		pod.Containers[0].CPU.UsageCoreNanoSeconds == nil || *pod.Containers[0].CPU.UsageCoreNanoSeconds == 0 ||
		pod.Containers[0].Memory == nil || pod.Containers[0].Memory.WorkingSetBytes == nil || *pod.Containers[0].Memory.WorkingSetBytes == 0 {
		t.Errorf("container stats lack CPU or memory:\n%s", js)
	}

	res := parseMetrics(t, "/metrics/resource", cn.nodeProxy(t, "/metrics/resource"))
	for _, m := range []struct {
		family string
		labels map[string]string
	}{
		{"node_cpu_usage_seconds_total", nil},
		{"node_memory_working_set_bytes", nil},
		{"pod_cpu_usage_seconds_total", map[string]string{"pod": name, "namespace": "default"}},
		{"pod_memory_working_set_bytes", map[string]string{"pod": name, "namespace": "default"}},
		{"container_cpu_usage_seconds_total", map[string]string{"pod": name, "namespace": "default", "container": "spin"}},
		{"container_memory_working_set_bytes", map[string]string{"pod": name, "namespace": "default", "container": "spin"}},
	} {
		if v := sample(res[m.family], m.labels); v <= 0 {
			t.Errorf("/metrics/resource: %s%v = %v, want > 0", m.family, m.labels, v)
		}
	}

	met := parseMetrics(t, "/metrics", cn.nodeProxy(t, "/metrics"))
	for _, m := range []struct {
		family string
		labels map[string]string
	}{
		{"kubelet_running_pods", nil},
		{"kubelet_running_containers", map[string]string{"container_state": "running"}},
		{"kubelet_pod_start_duration_seconds", nil},
		{"kubelet_pod_worker_duration_seconds", map[string]string{"operation_type": "create"}},
		{"kubelet_pleg_relist_duration_seconds", nil},
		{"kubelet_pleg_relist_interval_seconds", nil},
		{"kubelet_runtime_operations_total", map[string]string{"operation_type": "create_container"}},
		{"kubelet_runtime_operations_duration_seconds", map[string]string{"operation_type": "run_podsandbox"}},
		{"process_resident_memory_bytes", nil},
		{"process_cpu_seconds_total", nil},
	} {
		if v := sample(met[m.family], m.labels); v <= 0 {
			t.Errorf("/metrics: %s%v = %v, want > 0", m.family, m.labels, v)
		}
	}
	probes := parseMetrics(t, "/metrics/probes", cn.nodeProxy(t, "/metrics/probes"))
	if v := sample(probes["prober_probe_total"], map[string]string{"pod": name, "probe_type": "Readiness", "result": "successful"}); v <= 0 {
		t.Errorf("/metrics/probes: successful readiness probes of %s = %v", name, v)
	}
	if running := cn.nodeProxy(t, "/runningpods/"); !strings.Contains(running, `"name":"`+name+`"`) {
		t.Errorf("/runningpods/ lacks %s: %s", name, running)
	}
}
