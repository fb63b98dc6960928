package statusmanager

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// benchPod is pod i with an init container, a sidecar and three main containers with resources.
func benchPod(i int) *v1.Pod {
	name := fmt.Sprintf("web-%03d", i)
	res := v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("128Mi")},
	}
	always := v1.ContainerRestartPolicyAlways
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name),
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"kubernetes.io/config.source": "api"}},
		Spec: v1.PodSpec{
			RestartPolicy:  v1.RestartPolicyAlways,
			InitContainers: []v1.Container{{Name: "setup", Image: "busybox:1.36"}, {Name: "proxy", Image: "envoy:1", RestartPolicy: &always}},
		},
	}
	for _, c := range []string{"app", "log", "metrics"} {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: c, Image: "registry.local/" + c + ":1", Resources: res})
	}
	return p
}

// benchStatus is a Running, Ready status of benchPod: five container statuses, five conditions.
func benchStatus(p *v1.Pod) v1.PodStatus {
	s := running(cond(v1.PodReadyToStartContainers, v1.ConditionTrue), cond(v1.PodInitialized, v1.ConditionTrue),
		cond(v1.PodReady, v1.ConditionTrue), cond(v1.ContainersReady, v1.ConditionTrue), cond(v1.PodScheduled, v1.ConditionTrue))
	s.HostIP, s.HostIPs = "192.168.1.10", []v1.HostIP{{IP: "192.168.1.10"}}
	s.PodIPs = []v1.PodIP{{IP: s.PodIP}}
	s.QOSClass = v1.PodQOSBurstable
	s.StartTime = &metav1.Time{Time: t0}
	yes := true
	cs := func(c v1.Container, st v1.ContainerState, ready bool) v1.ContainerStatus {
		return v1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "sha256:aaa", ContainerID: "containerd://" + string(p.UID) + "-" + c.Name,
			State: st, Ready: ready, Started: &yes, Resources: c.Resources.DeepCopy(), AllocatedResources: c.Resources.Requests.DeepCopy()}
	}
	runningSince := v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}
	s.InitContainerStatuses = []v1.ContainerStatus{
		cs(p.Spec.InitContainers[0], v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: "Completed",
			StartedAt: metav1.NewTime(t0), FinishedAt: metav1.NewTime(t0)}}, true),
		cs(p.Spec.InitContainers[1], runningSince, true),
	}
	for _, c := range p.Spec.Containers {
		s.ContainerStatuses = append(s.ContainerStatuses, cs(c, runningSince, true))
	}
	return s
}

// benchManager is a Manager holding a status for each of n desired pods.
func benchManager(n int) (*Manager, desired) {
	var pods desired
	for i := range n {
		pods = append(pods, benchPod(i))
	}
	m := New(pods)
	for _, p := range pods {
		m.SetPodStatus(p, benchStatus(p))
	}
	return m, pods
}

// BenchmarkManager measures the status manager's operations: SetPodStatus and GetPodStatus run
// on every pod sync (GetPodStatus also on every probe tick), Pods on every GET /pods, Versioned
// on every status change and every API sync period. 100 pods are held.
func BenchmarkManager(b *testing.B) {
	m, pods := benchManager(100)
	p := pods[42]
	st := benchStatus(p)
	b.Run("SetPodStatus/unchanged", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.SetPodStatus(p, st)
		}
	})
	b.Run("GetPodStatus", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := m.GetPodStatus(p.UID); !ok {
				b.Fatal("no status")
			}
		}
	})
	b.Run("Pods/100pods", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if len(m.Pods()) != 100 {
				b.Fatal("pods missing")
			}
		}
	})
	b.Run("Versioned/100pods", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if len(m.Versioned()) != 100 {
				b.Fatal("statuses missing")
			}
		}
	})
}

// BenchmarkEqualByKubelet measures the comparison run by every SetPodStatus, and for every pod
// on every API sync period.
func BenchmarkEqualByKubelet(b *testing.B) {
	p := benchPod(0)
	old, cur := benchStatus(p), benchStatus(p)
	b.ReportAllocs()
	for b.Loop() {
		if !equalByKubelet(&old, &cur) {
			b.Fatal("not equal")
		}
	}
}

// BenchmarkStatusWrite measures what the API syncer computes for each status it writes: the merge
// with the API server's status and the patch, unchanged and with a container not ready.
func BenchmarkStatusWrite(b *testing.B) {
	p := benchPod(0)
	api := benchStatus(p)
	notReady := benchStatus(p)
	notReady.ContainerStatuses[1].Ready = false
	notReady.Conditions[2] = cond(v1.PodReady, v1.ConditionFalse, reason("ContainersNotReady"), at(t1))
	notReady.Conditions[3] = cond(v1.ContainersReady, v1.ConditionFalse, reason("ContainersNotReady"), at(t1))
	for _, c := range []struct {
		name          string
		cur           v1.PodStatus
		wantUnchanged bool
	}{
		{"unchanged", benchStatus(p), true},
		{"container not ready", notReady, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				merged := mergeStatus(p, api, c.cur, true, t1)
				_, unchanged, err := statusPatch(p.UID, api, merged)
				if err != nil || unchanged != c.wantUnchanged {
					b.Fatalf("unchanged %v, err %v", unchanged, err)
				}
			}
		})
	}
}
