package plan

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// benchPod is a typical pod: one init container, one sidecar with a startup and a liveness probe,
// and three main containers.
func benchPod() *v1.Pod {
	return newPod(inits("init"), sidecar("proxy", "startup", "liveness"), mains("app", "log", "metrics"))
}

// BenchmarkComputePodActions measures the decision SyncPod makes for every pod on every sync.
func BenchmarkComputePodActions(b *testing.B) {
	steady := []ctr{running("metrics"), running("log"), running("app"), running("proxy"), exited("init", 0)}
	cases := []struct {
		name string
		tc   tc
		want func(Plan) bool
	}{
		{
			// Everything runs: the plan is empty. This is what nearly every sync computes.
			name: "steady",
			tc:   tc{pod: benchPod(), ctrs: steady, startupOK: []string{"proxy"}},
			want: Plan.IsEmpty,
		},
		{
			name: "main container exited",
			tc: tc{pod: benchPod(), startupOK: []string{"proxy"},
				ctrs: []ctr{running("metrics"), exited("log", 1), running("app"), running("proxy"), exited("init", 0)}},
			want: func(p Plan) bool { return len(p.ContainersToStart) == 1 && p.ContainersToKill == nil },
		},
		{
			name: "liveness failed",
			tc:   tc{pod: benchPod(), ctrs: steady, startupOK: []string{"proxy"}, liveFailed: []string{"app"}},
			want: func(p Plan) bool { return len(p.ContainersToStart) == 1 && len(p.ContainersToKill) == 1 },
		},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			in := c.tc.input()
			if p := ComputePodActions(in); !c.want(p) {
				b.Fatalf("unexpected plan: %v", p)
			}
			b.ReportAllocs()
			for b.Loop() {
				ComputePodActions(in)
			}
		})
	}
}

// BenchmarkSandboxChanged measures the sandbox check run by every sync and every status
// generation.
func BenchmarkSandboxChanged(b *testing.B) {
	in := tc{pod: benchPod()}.input()
	if sc := SandboxChanged(in.Pod, in.Status); sc.Changed {
		b.Fatalf("unexpected check: %+v", sc)
	}
	b.ReportAllocs()
	for b.Loop() {
		SandboxChanged(in.Pod, in.Status)
	}
}
