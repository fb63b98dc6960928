package podsync

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/podmanager"
	"github.com/nodelet/nodelet/internal/statusmanager"
)

// BenchmarkSyncPodSteady measures the status side of one sync of a running pod of three
// containers whose runtime needs nothing (the runtime is a fake): the probe results, the step
// (one generation) and the status manager's SetPodStatus.
func BenchmarkSyncPodSteady(b *testing.B) {
	p := pod()
	p.Spec.RestartPolicy = v1.RestartPolicyAlways
	res := v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}
	p.Spec.Containers = nil
	ps := &container.PodStatus{ID: p.UID, Name: p.Name, Namespace: p.Namespace,
		SandboxStatuses: []*runtimeapi.PodSandboxStatus{{Id: "sb", State: runtimeapi.PodSandboxState_SANDBOX_READY,
			Network: &runtimeapi.PodSandboxNetworkStatus{Ip: "10.0.0.7"},
			Linux: &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{
				Options: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD}}}}}}
	for _, name := range []string{"app", "log", "metrics"} {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: name, Image: name + ":1", Resources: res})
		ps.ContainerStatuses = append(ps.ContainerStatuses, &container.Status{ID: "id-" + name, SandboxID: "sb", Name: name,
			State: container.StateRunning, Image: name + ":1", ImageRef: "sha256:aaa", StartedAt: time.Unix(10, 0), CreatedAt: time.Unix(10, 0)})
	}
	pm := podmanager.New()
	pm.AddOrUpdate(p)
	sm := statusmanager.New(pm)
	rt := &fakeRuntime{}
	s := mustNew(b, Config{HostIPs: []string{"192.0.2.1"}}, Deps{Runtime: rt, Statuses: sm, Probes: &fakeProbes{}, Clock: clocktesting.NewFakeClock(time.Unix(100, 0))})
	ctx := b.Context()
	if terminal, err := s.SyncPod(ctx, 0, p, ps); terminal || err != nil {
		b.Fatalf("first sync: terminal %v, err %v", terminal, err)
	}
	if st, _ := sm.GetPodStatus(p.UID); st.Phase != v1.PodRunning {
		b.Fatalf("phase %s", st.Phase)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.SyncPod(ctx, 0, p, ps); err != nil {
			b.Fatal(err)
		}
	}
}
