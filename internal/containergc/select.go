package containergc

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
)

// Policy is upstream's GCPolicy (pkg/kubelet/container/container_gc.go).
type Policy struct {
	// MinAge spares dead containers created less than MinAge ago
	// (--minimum-container-ttl-duration; 0: no minimum).
	MinAge time.Duration
	// MaxPerPodContainer is how many dead instances each container of a pod keeps
	// (--maximum-dead-containers-per-container); negative: no limit.
	MaxPerPodContainer int
	// MaxContainers is how many dead containers the node keeps in all
	// (--maximum-dead-containers); negative: no limit.
	MaxContainers int
}

// DefaultPolicy is the kubelet's flag defaults: no minimum age, one dead instance per container,
// no node-wide limit.
func DefaultPolicy() Policy { return Policy{MinAge: 0, MaxPerPodContainer: 1, MaxContainers: -1} }

// Validate returns upstream's error for a negative minimum age (NewContainerGC); negative counts
// mean no limit.
func (p Policy) Validate() error {
	if p.MinAge < 0 {
		return fmt.Errorf("invalid minimum garbage collection age: %v", p.MinAge)
	}
	return nil
}

// PodState is upstream's podStateProvider: what the pod workers know of a pod (an unknown pod
// counts as gone once the workers have been told every pod the sources want).
type PodState interface {
	// ShouldPodContentBeRemoved: the pod was evicted, or deleted and terminated, or is unknown.
	ShouldPodContentBeRemoved(uid types.UID) bool
	// ShouldPodRuntimeBeRemoved: the pod is terminated (deleted or not), or is unknown.
	ShouldPodRuntimeBeRemoved(uid types.UID) bool
}

// Scope says which pods lose all their dead containers and sandboxes.
type Scope struct {
	// AllSourcesReady: every pod source has been read, so a pod no source wants is really gone.
	// Without it no pod loses all its containers and no log directory is removed.
	AllSourcesReady bool
	// EvictNonDeletedPods also empties terminated pods that are not deleted (upstream's
	// DeleteAllUnusedContainers, for the eviction manager's node-level reclaim).
	EvictNonDeletedPods bool
}

func (s Scope) removeAll(pods PodState, uid types.UID) bool {
	return pods.ShouldPodContentBeRemoved(uid) || (s.EvictNonDeletedPods && pods.ShouldPodRuntimeBeRemoved(uid))
}

// Why a dead container is removed.
const (
	ReasonPodGone       = "pod removed"
	ReasonPerContainer  = "over maximum-dead-containers-per-container"
	ReasonNodeWideLimit = "over maximum-dead-containers"
)

// Container is a dead container chosen for removal.
type Container struct {
	ID           string
	PodUID       types.UID
	PodName      string
	PodNamespace string
	Name         string // the container's name in the pod
	CreatedAt    time.Time
	// Unknown: the runtime does not know the container's state; it is stopped first, as upstream.
	Unknown bool
	Reason  string
}

// unit is upstream's evictUnit: the instances of one container of one pod.
type unit struct {
	uid  types.UID
	name string
}

// byNewest sorts newest first; equal creation times by ID, so that the choice is deterministic.
func byNewest(a, b Container) int {
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// trim keeps the newest len(cs)-n of cs and returns them, and the n others, oldest first.
func trim(cs []Container, n int, reason string) (kept, removed []Container) {
	if n <= 0 {
		return cs, nil
	}
	n = min(n, len(cs))
	slices.SortFunc(cs, byNewest)
	keep := len(cs) - n
	for i := len(cs) - 1; i >= keep; i-- {
		c := cs[i]
		c.Reason = reason
		removed = append(removed, c)
	}
	return cs[:keep], removed
}

// DeadContainers is upstream's evictContainers: the dead (not running) containers created at
// least MinAge before now, grouped by pod and container name. When every source is ready, those
// of pods that are gone (and, with EvictNonDeletedPods, terminated) all go; then each container
// of a pod keeps its MaxPerPodContainer newest; then, over MaxContainers on the node, each keeps
// an even share (at least one) and the oldest of the rest go. The result is in removal order,
// oldest first within each step. Containers without nodelet's pod UID label are not nodelet's
// and are left alone.
func DeadContainers(all []*runtimeapi.Container, pods PodState, p Policy, s Scope, now time.Time) []Container {
	units := map[unit][]Container{}
	newest := now.Add(-p.MinAge)
	for _, c := range all {
		if c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		labels := c.GetLabels()
		uid := types.UID(labels[container.PodUIDLabel])
		created := time.Unix(0, c.GetCreatedAt())
		if uid == "" || newest.Before(created) {
			continue
		}
		name := c.GetMetadata().GetName()
		if name == "" {
			name = labels[container.ContainerNameLabel]
		}
		k := unit{uid: uid, name: name}
		units[k] = append(units[k], Container{ID: c.GetId(), PodUID: uid, PodName: labels[container.PodNameLabel],
			PodNamespace: labels[container.PodNamespaceLabel], Name: name, CreatedAt: created,
			Unknown: c.GetState() == runtimeapi.ContainerState_CONTAINER_UNKNOWN})
	}
	keys := sortedUnits(units)
	var out []Container
	if s.AllSourcesReady {
		var kept []unit
		for _, k := range keys {
			if !s.removeAll(pods, k.uid) {
				kept = append(kept, k)
				continue
			}
			_, removed := trim(units[k], len(units[k]), ReasonPodGone)
			out = append(out, removed...)
			delete(units, k)
		}
		keys = kept
	}
	if p.MaxPerPodContainer >= 0 {
		out = append(out, perUnit(units, keys, p.MaxPerPodContainer, ReasonPerContainer)...)
	}
	if p.MaxContainers < 0 || count(units) <= p.MaxContainers {
		return out
	}
	// Leave an equal number of containers per unit (at least one), then the oldest go.
	out = append(out, perUnit(units, keys, max(p.MaxContainers/len(units), 1), ReasonNodeWideLimit)...)
	if n := count(units); n > p.MaxContainers {
		var flat []Container
		for _, k := range keys {
			flat = append(flat, units[k]...)
		}
		_, removed := trim(flat, n-p.MaxContainers, ReasonNodeWideLimit)
		out = append(out, removed...)
	}
	return out
}

// perUnit is upstream's enforceMaxContainersPerEvictUnit: each unit keeps its max newest.
func perUnit(units map[unit][]Container, keys []unit, max int, reason string) []Container {
	var out []Container
	for _, k := range keys {
		kept, removed := trim(units[k], len(units[k])-max, reason)
		units[k] = kept
		out = append(out, removed...)
	}
	return out
}

func count(units map[unit][]Container) int {
	n := 0
	for _, cs := range units {
		n += len(cs)
	}
	return n
}

func sortedUnits(units map[unit][]Container) []unit {
	keys := make([]unit, 0, len(units))
	for k := range units {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b unit) int {
		return cmp.Or(cmp.Compare(a.uid, b.uid), cmp.Compare(a.name, b.name))
	})
	return keys
}

// Sandbox is a sandbox chosen for removal.
type Sandbox struct {
	ID           string
	PodUID       types.UID
	PodName      string
	PodNamespace string
	CreatedAt    time.Time
}

// podUID is the sandbox's pod UID: nodelet's label, else the CRI metadata's.
func podUID(s *runtimeapi.PodSandbox) types.UID {
	if uid := s.GetLabels()[container.PodUIDLabel]; uid != "" {
		return types.UID(uid)
	}
	return types.UID(s.GetMetadata().GetUid())
}

// Sandboxes is upstream's evictSandboxes: a sandbox may go when it is not ready and no container
// (in any state) is in it. A pod that is gone (and, with EvictNonDeletedPods, a terminated one)
// loses all such sandboxes; any other pod keeps its newest sandbox, whatever its state. Oldest
// first within each pod. Sandboxes without nodelet's pod UID label are left alone.
func Sandboxes(sandboxes []*runtimeapi.PodSandbox, containers []*runtimeapi.Container, pods PodState, s Scope) []Sandbox {
	used := sets.New[string]()
	for _, c := range containers {
		used.Insert(c.GetPodSandboxId())
	}
	type info struct {
		Sandbox
		active bool
	}
	byPod := map[types.UID][]info{}
	for _, sb := range sandboxes {
		labels := sb.GetLabels()
		uid := types.UID(labels[container.PodUIDLabel])
		if uid == "" {
			continue
		}
		byPod[uid] = append(byPod[uid], info{
			Sandbox: Sandbox{ID: sb.GetId(), PodUID: uid, PodName: labels[container.PodNameLabel],
				PodNamespace: labels[container.PodNamespaceLabel], CreatedAt: time.Unix(0, sb.GetCreatedAt())},
			active: sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY || used.Has(sb.GetId()),
		})
	}
	uids := make([]types.UID, 0, len(byPod))
	for uid := range byPod {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	var out []Sandbox
	for _, uid := range uids {
		list := byPod[uid]
		slices.SortFunc(list, func(a, b info) int {
			return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(a.ID, b.ID))
		})
		keep := 1
		if s.removeAll(pods, uid) {
			keep = 0
		}
		for i := len(list) - 1; i >= keep; i-- {
			if !list[i].active {
				out = append(out, list[i].Sandbox)
			}
		}
	}
	return out
}

// LogDirUID is the pod UID of a pod log directory's name, <namespace>_<name>_<uid>, as upstream's
// parsePodUIDFromLogsDirectory.
func LogDirUID(name string) types.UID {
	return types.UID(name[strings.LastIndex(name, "_")+1:])
}

// LogDirs is upstream's evictPodLogsDirectories: once every source is ready, the entries of the
// pod log directory whose pod is gone (ShouldPodContentBeRemoved). Unlike upstream, a directory
// is also kept while any sandbox of its pod is left (the runtime may still write there).
func LogDirs(names []string, sandboxes []*runtimeapi.PodSandbox, pods PodState, allSourcesReady bool) []string {
	if !allSourcesReady {
		return nil
	}
	left := sets.New[types.UID]()
	for _, sb := range sandboxes {
		left.Insert(podUID(sb))
	}
	var out []string
	for _, name := range names {
		if uid := LogDirUID(name); !left.Has(uid) && pods.ShouldPodContentBeRemoved(uid) {
			out = append(out, name)
		}
	}
	return out
}
