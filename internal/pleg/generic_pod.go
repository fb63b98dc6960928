package pleg

import (
	"cmp"
	"context"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/container"
)

// relistPod inspects one pod at once, outside the periodic relist (upstream's relistPod, for
// on-demand relists): Evented calls it for a pod that a container event names or that a worker
// waits on. It never trusts what made it run: the pod's listing is derived from a fresh
// inspection (Runtime.GetPodStatus), the cache entry is stamped with the time taken before that
// inspection, and the events are the Diff between the pod's last delivered listing and the new
// one, exactly as a relist would compute them. A pod the runtime has nothing of is stored as an
// empty status and remembered as an empty listing until the next relist confirms it is gone.
//
// name and namespace name the pod for the runtime and for logs; when empty, the last listing's
// are used. It is serialised with Relist.
func (g *Generic) relistPod(ctx context.Context, uid types.UID, name, namespace string) {
	g.relistMu.Lock()
	defer g.relistMu.Unlock()
	logger := klog.FromContext(ctx)

	old, known := g.records[uid]
	if old != nil {
		name, namespace = cmp.Or(name, old.Name), cmp.Or(namespace, old.Namespace)
	}
	ref := klog.KRef(namespace, name)
	logger.V(5).Info("GenericPLEG: Relisting pod", "pod", ref, "podUID", uid)

	// Taken before asking the runtime, as in Relist: a worker that synced after this instant
	// waits for a newer entry, since this inspection may not show what its sync did.
	timestamp := g.clock.Now()
	status, err := g.runtime.GetPodStatus(ctx, uid, name, namespace)
	if err != nil {
		logger.Error(err, "GenericPLEG: Unable to inspect pod; the pod's worker gets the error and the next relist retries",
			"pod", ref, "podUID", uid)
		g.cache.Set(uid, status, err, timestamp)
		if known {
			g.RequestReinspect(uid)
		}
		return
	}
	if status == nil {
		status = emptyStatus(uid)
	}
	status.IPs = g.podIPs(uid, status)
	cur := podFromStatus(status)
	if cur != nil {
		// Named by the sandbox's metadata when neither the caller nor a listing knew the name.
		if status.Name == "" && status.Namespace == "" {
			status.Name, status.Namespace = cur.Name, cur.Namespace
		}
		ref = klog.KRef(cur.Namespace, cur.Name)
	}
	events, _ := Diff(map[types.UID]*container.Pod{uid: old}, map[types.UID]*container.Pod{uid: cur})
	logger.V(4).Info("GenericPLEG: Write status", "pod", ref, "podUID", uid)
	g.cache.Set(uid, status, nil, timestamp)
	if cur == nil {
		cur = &container.Pod{ID: uid, Name: name, Namespace: namespace}
	}
	g.records[uid] = cur

	g.reinspectMu.Lock()
	_, requested := g.reinspect[uid]
	delete(g.reinspect, uid)
	g.reinspectMu.Unlock()
	if len(events) == 0 && requested {
		events = []Event{{ID: uid, Type: PodSync}}
	}
	g.send(logger, ref, events, status)
}

// podOf returns the UID of the pod whose last delivered listing has the container or sandbox id.
func (g *Generic) podOf(id string) (types.UID, bool) {
	g.relistMu.Lock()
	defer g.relistMu.Unlock()
	for uid, p := range g.records {
		if p != nil && p.FindContainerByID(id) != nil {
			return uid, true
		}
	}
	return "", false
}

// podFromStatus is the listing of a pod (what Diff compares) derived from an inspection: the
// sandboxes (running when ready) and containers it reports, and the pod's name from the status or
// else from its newest sandbox's metadata. It is nil when the runtime has nothing of the pod.
func podFromStatus(s *container.PodStatus) *container.Pod {
	if s == nil {
		return nil
	}
	p := &container.Pod{ID: s.ID, Name: s.Name, Namespace: s.Namespace}
	for _, sb := range s.SandboxStatuses {
		if sb == nil {
			continue
		}
		if p.Name == "" && p.Namespace == "" {
			p.Name, p.Namespace = sb.GetMetadata().GetName(), sb.GetMetadata().GetNamespace()
		}
		state := container.StateExited
		if sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			state = container.StateRunning
		}
		p.Sandboxes = append(p.Sandboxes, &container.Container{ID: sb.GetId(), State: state, CreatedAt: sb.GetCreatedAt()})
	}
	for _, c := range s.ContainerStatuses {
		if c == nil {
			continue
		}
		var created int64
		if !c.CreatedAt.IsZero() {
			created = c.CreatedAt.UnixNano()
		}
		p.Containers = append(p.Containers, &container.Container{ID: c.ID, Name: c.Name, State: c.State,
			Hash: c.Hash, Image: c.Image, CreatedAt: created})
	}
	if isEmpty(p) {
		return nil
	}
	return p
}

// isEmpty reports whether p is a listing without sandboxes or containers (relistPod's record of a
// pod the runtime has nothing of). A nil listing (a pod whose first inspection failed) is not.
func isEmpty(p *container.Pod) bool {
	return p != nil && len(p.Sandboxes) == 0 && len(p.Containers) == 0
}
