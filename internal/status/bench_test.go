package status

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/nodelet/nodelet/internal/prober/probeview"
)

// benchInput is a running pod with an init container (completed), a sidecar and three main
// containers with resources, volume mounts and a readiness probe; "log" restarted once.
func benchInput() Input {
	probe := &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
	pod := withInit(podOf(v1.RestartPolicyAlways, "app", "log", "metrics"), initC("setup"), sidecar("proxy"))
	pod.Spec.InitContainers[1].ReadinessProbe = probe
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		c.Resources = resources("100m", "500m", "64Mi", "128Mi")
		c.VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "config", MountPath: "/etc/app", ReadOnly: true}}
		c.ReadinessProbe = probe
	}
	rt := rtOf(readySandbox(),
		running("metrics", "c-metrics", at(5), 0),
		running("log", "c-log-1", at(20), 1),
		running("app", "c-app", at(4), 0),
		running("proxy", "c-proxy", at(3), 0),
		exited("log", "c-log-0", at(4), at(19), 1, "Error", 0),
		exited("setup", "c-setup", at(1), at(2), 0, "Completed", 0))
	return Input{Pod: pod, Runtime: rt, HostIPs: []string{"192.168.1.10"}, Now: now,
		Probes: probeview.View{Ready: map[string]bool{"app": true, "log": true, "metrics": true, "proxy": true}}}
}

// BenchmarkGenerate measures the API status generation every pod sync runs (once, and
// again when the runtime reports a new waiting reason): phase, conditions and container statuses.
func BenchmarkGenerate(b *testing.B) {
	first := benchInput()
	steady := benchInput()
	steady.Old = Generate(steady)
	crash := benchInput()
	crash.Old = Generate(crash)
	crash.Runtime.ContainerStatuses[1] = exited("log", "c-log-1", at(20), at(50), 2, "Error", 1)
	crash.Waiting = map[string]WaitingReason{"log": {"CrashLoopBackOff", "back-off 20s restarting failed container=log pod=web_default(uid-1)"}}
	for _, c := range []struct {
		name  string
		in    Input
		check func(v1.PodStatus) bool
	}{
		{"first sync", first, func(s v1.PodStatus) bool { return s.Phase == v1.PodRunning }},
		{"steady", steady, func(s v1.PodStatus) bool {
			c := findCondition(s.Conditions, v1.PodReady)
			return s.Phase == v1.PodRunning && c != nil && c.Status == v1.ConditionTrue
		}},
		{"crash loop", crash, func(s v1.PodStatus) bool {
			c := findCondition(s.Conditions, v1.PodReady)
			return s.Phase == v1.PodRunning && c != nil && c.Status == v1.ConditionFalse
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			if s := Generate(c.in); !c.check(s) {
				b.Fatalf("unexpected status: phase %s, conditions %+v", s.Phase, s.Conditions)
			}
			b.ReportAllocs()
			for b.Loop() {
				Generate(c.in)
			}
		})
	}
}

// BenchmarkCheckTransition measures the check the status manager runs on every status it is
// given.
func BenchmarkCheckTransition(b *testing.B) {
	in := benchInput()
	old := Generate(in)
	in.Old = old
	cur := Generate(in)
	b.ReportAllocs()
	for b.Loop() {
		if err := CheckTransition(&old, &cur, &in.Pod.Spec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkQOSClass measures the QoS class computed with every status.
func BenchmarkQOSClass(b *testing.B) {
	pod := benchInput().Pod
	b.ReportAllocs()
	for b.Loop() {
		QOSClass(pod)
	}
}
