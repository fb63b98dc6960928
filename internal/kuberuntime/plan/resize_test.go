package plan

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func res(cpuReq, cpuLim, memReq, memLim string) v1.ResourceRequirements {
	r := v1.ResourceRequirements{Requests: v1.ResourceList{}, Limits: v1.ResourceList{}}
	for _, x := range []struct {
		l    v1.ResourceList
		name v1.ResourceName
		v    string
	}{{r.Requests, v1.ResourceCPU, cpuReq}, {r.Limits, v1.ResourceCPU, cpuLim}, {r.Requests, v1.ResourceMemory, memReq}, {r.Limits, v1.ResourceMemory, memLim}} {
		if x.v != "" {
			x.l[x.name] = resource.MustParse(x.v)
		}
	}
	return r
}

func withResources(name string, r v1.ResourceRequirements, policies ...v1.ContainerResizePolicy) podOpt {
	return func(p *v1.Pod) {
		c := findSpec(p, name)
		c.Resources = r
		c.ResizePolicy = policies
	}
}

// The resize part of upstream's computePodActions (computePodResizeAction): a running
// container whose allocated resources differ from the actuated ones is updated in place, in
// upstream's order (per resource, decreases first), or restarted when its resizePolicy says so.
func TestComputePodActionsResize(t *testing.T) {
	base := res("100m", "200m", "32Mi", "64Mi")
	restartMem := v1.ContainerResizePolicy{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer}
	for _, rc := range []struct {
		name      string
		pod       *v1.Pod
		actuated  map[string]v1.ResourceRequirements
		ctrs      []ctr
		updates   map[v1.ResourceName][]string // container names, in order
		kill      []string
		start     []int
		initStart []int
	}{
		{name: "no actuated record given: nothing resizes",
			pod: newPod(mains("a"), withResources("a", res("1", "1", "", ""))), actuated: nil, ctrs: []ctr{running("a")}},
		{name: "actuated equals allocated: nothing",
			pod: newPod(mains("a"), withResources("a", base)), actuated: map[string]v1.ResourceRequirements{"a": base}, ctrs: []ctr{running("a")}},
		{name: "cpu and memory grow in place",
			pod:      newPod(mains("a"), withResources("a", res("200m", "400m", "64Mi", "128Mi"))),
			actuated: map[string]v1.ResourceRequirements{"a": base}, ctrs: []ctr{running("a")},
			updates: map[v1.ResourceName][]string{v1.ResourceCPU: {"a"}, v1.ResourceMemory: {"a"}}},
		{name: "a request alone changes: updated",
			pod:      newPod(mains("a"), withResources("a", res("150m", "200m", "32Mi", "64Mi"))),
			actuated: map[string]v1.ResourceRequirements{"a": base}, ctrs: []ctr{running("a")},
			updates: map[v1.ResourceName][]string{v1.ResourceCPU: {"a"}}},
		{name: "decreases before increases",
			pod: newPod(mains("up", "down"), withResources("up", res("200m", "400m", "32Mi", "64Mi")),
				withResources("down", res("50m", "100m", "32Mi", "64Mi"))),
			actuated: map[string]v1.ResourceRequirements{"up": base, "down": base}, ctrs: []ctr{running("up"), running("down")},
			updates: map[v1.ResourceName][]string{v1.ResourceCPU: {"down", "up"}}},
		{name: "RestartContainer for memory: killed and started again",
			pod:      newPod(mains("a"), withResources("a", res("100m", "200m", "64Mi", "128Mi"), restartMem)),
			actuated: map[string]v1.ResourceRequirements{"a": base}, ctrs: []ctr{running("a")},
			kill: []string{"a"}, start: []int{0}},
		{name: "RestartContainer for memory, only cpu changed: in place",
			pod:      newPod(mains("a"), withResources("a", res("200m", "400m", "32Mi", "64Mi"), restartMem)),
			actuated: map[string]v1.ResourceRequirements{"a": base}, ctrs: []ctr{running("a")},
			updates: map[v1.ResourceName][]string{v1.ResourceCPU: {"a"}}},
		{name: "a container that does not run is sized when it starts",
			pod:      newPod(mains("a"), withResources("a", res("200m", "400m", "32Mi", "64Mi")), policy(v1.RestartPolicyNever)),
			actuated: map[string]v1.ResourceRequirements{"a": base}, ctrs: []ctr{exited("a", 0)}},
		{name: "a sidecar resizes; RestartContainer restarts it",
			pod: newPod(sidecar("s"), mains("a"), withResources("s", res("100m", "200m", "64Mi", "128Mi"), restartMem),
				withResources("a", res("200m", "400m", "32Mi", "64Mi"))),
			actuated: map[string]v1.ResourceRequirements{"s": base, "a": base}, ctrs: []ctr{running("a"), running("s")},
			updates: map[v1.ResourceName][]string{v1.ResourceCPU: {"a"}}, kill: []string{"s"}, initStart: []int{0}},
	} {
		t.Run(rc.name, func(t *testing.T) {
			in := (tc{pod: rc.pod, ctrs: rc.ctrs}).input()
			in.Actuated = rc.actuated
			p := ComputePodActions(in)
			got := map[v1.ResourceName][]string{}
			for name, us := range p.ContainersToUpdate {
				for _, u := range us {
					got[name] = append(got[name], u.Container.Name)
					if u.ID != "id-"+u.Container.Name || !equalReq(u.Current, rc.actuated[u.Container.Name]) {
						t.Errorf("update %+v: wrong ID or current resources", u)
					}
				}
			}
			if !equalUpdates(got, rc.updates) {
				t.Errorf("ContainersToUpdate %v, want %v", got, rc.updates)
			}
			var kills []string
			for _, k := range p.ContainersToKill {
				kills = append(kills, k.Name)
				if k.Reason != ReasonResize || k.Message != "Container "+k.Name+" resize requires restart" {
					t.Errorf("kill %+v", k)
				}
			}
			if !slices.Equal(kills, rc.kill) || !slices.Equal(p.ContainersToStart, rc.start) || !slices.Equal(p.InitContainersToStart, rc.initStart) {
				t.Errorf("kill %v start %v initStart %v; want %v %v %v", kills, p.ContainersToStart, p.InitContainersToStart, rc.kill, rc.start, rc.initStart)
			}
		})
	}
}

func equalReq(a, b v1.ResourceRequirements) bool {
	return quantities(a) == quantities(b)
}

func equalUpdates(a, b map[v1.ResourceName][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}
