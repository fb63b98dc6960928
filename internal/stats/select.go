package stats

import (
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// latestSandboxes is upstream's removeTerminatedPods: of the sandboxes of one pod (same name
// and namespace: sandboxes are recreated, pods are recreated under the same name) it keeps the
// ready ones, or the newest when none is ready. It returns the kept sandboxes by ID.
func latestSandboxes(sandboxes []*runtimeapi.PodSandbox) map[string]*runtimeapi.PodSandbox {
	type podKey struct{ namespace, name string }
	byPod := make(map[podKey][]*runtimeapi.PodSandbox)
	for _, s := range sandboxes {
		k := podKey{s.GetMetadata().GetNamespace(), s.GetMetadata().GetName()}
		byPod[k] = append(byPod[k], s)
	}
	out := make(map[string]*runtimeapi.PodSandbox, len(byPod))
	for _, group := range byPod {
		var newest *runtimeapi.PodSandbox
		ready := false
		for _, s := range group {
			if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
				out[s.GetId()] = s
				ready = true
			}
			if newest == nil || s.GetCreatedAt() > newest.GetCreatedAt() {
				newest = s
			}
		}
		if !ready {
			out[newest.GetId()] = newest
		}
	}
	return out
}

// runningContainers is upstream's removeTerminatedContainers: only running containers count
// (an exited attempt of a restarted container must not be summed with the running one). Should
// a sandbox have two running containers of one name, the newest attempt is kept. It returns
// the kept containers by ID.
func runningContainers(containers []*runtimeapi.Container) map[string]*runtimeapi.Container {
	type ctrKey struct{ sandbox, name string }
	latest := make(map[ctrKey]*runtimeapi.Container)
	for _, c := range containers {
		if c.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		k := ctrKey{c.GetPodSandboxId(), c.GetMetadata().GetName()}
		if prev, ok := latest[k]; !ok || newerAttempt(c, prev) {
			latest[k] = c
		}
	}
	out := make(map[string]*runtimeapi.Container, len(latest))
	for _, c := range latest {
		out[c.GetId()] = c
	}
	return out
}

func newerAttempt(a, b *runtimeapi.Container) bool {
	if a.GetMetadata().GetAttempt() != b.GetMetadata().GetAttempt() {
		return a.GetMetadata().GetAttempt() > b.GetMetadata().GetAttempt()
	}
	return a.GetCreatedAt() > b.GetCreatedAt()
}
