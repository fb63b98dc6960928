package podconfig

import (
	"fmt"
	"reflect"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Rejection is a pod the mux refused, and why.
type Rejection struct {
	Source string
	Pod    *v1.Pod
	Reason string
}

type owner struct {
	source string
	uid    types.UID
}

// State is the mux's memory: every source's last snapshot as given, the pods accepted from it,
// who owns each full name, and which sources have sent a complete listing. The zero value is not
// usable; call NewState.
type State struct {
	raw      map[string][]*v1.Pod
	pods     map[string]map[types.UID]*v1.Pod
	owners   map[string]owner
	seen     sets.Set[string]
	rejected map[string]map[string]string // source → full name → reason
}

// NewState returns an empty State.
func NewState() *State {
	return &State{
		raw:      map[string][]*v1.Pod{},
		pods:     map[string]map[types.UID]*v1.Pod{},
		owners:   map[string]owner{},
		seen:     sets.New[string](),
		rejected: map[string]map[string]string{},
	}
}

// Seen reports whether every named source has sent at least one complete listing.
func (s *State) Seen(sources ...string) bool { return s.seen.HasAll(sources...) }

// Merge takes a source's complete snapshot and returns the PodUpdates it implies, in upstream's
// order (REMOVE, ADD, UPDATE, DELETE, RECONCILE; an empty ADD marks a source's first listing when
// it brings nothing else), and the pods refused. A full name already held by another source is
// refused: the first source wins. When a name is freed, pods of other sources that were refused
// for it are merged again, and their updates follow. now stamps the config.seen annotation.
func (s *State) Merge(source string, snapshot []*v1.Pod, now time.Time) ([]PodUpdate, []Rejection) {
	return s.merge(source, snapshot, now, true)
}

// Restore merges pods a source had before a restart (the checkpoint's), without counting as
// the source's complete listing: housekeeping still waits for the source itself before it
// removes pods no source wants, and the source's first listing then replaces these.
func (s *State) Restore(source string, snapshot []*v1.Pod, now time.Time) ([]PodUpdate, []Rejection) {
	return s.merge(source, snapshot, now, false)
}

func (s *State) merge(source string, snapshot []*v1.Pod, now time.Time, complete bool) ([]PodUpdate, []Rejection) {
	s.raw[source] = snapshot
	updates, rejections, freed := s.mergeOne(source, now, complete)
	if freed {
		for _, other := range sortedKeys(s.rejected) {
			if other == source || len(s.rejected[other]) == 0 {
				continue
			}
			u, r, _ := s.mergeOne(other, now, s.seen.Has(other))
			updates = append(updates, u...)
			rejections = append(rejections, r...)
		}
	}
	return updates, rejections
}

func (s *State) mergeOne(source string, now time.Time, complete bool) (updates []PodUpdate, rejections []Rejection, freed bool) {
	firstSet := complete && !s.seen.Has(source)
	if complete {
		s.seen.Insert(source)
	}
	old := s.pods[source]
	cur := make(map[types.UID]*v1.Pod, len(s.raw[source]))
	var adds, upds, dels, rems, recs []*v1.Pod
	names := sets.New[string]()
	s.rejected[source] = map[string]string{}
	for _, in := range s.raw[source] {
		name := FullName(in)
		reason := ""
		switch o, held := s.owners[name]; {
		case names.Has(name):
			reason = fmt.Sprintf("duplicate pod name %q in source %s; the first one is kept", in.Name, source)
		case held && o.source != source:
			reason = fmt.Sprintf("pod %q is already defined by source %s, which was first; this one is ignored", name, o.source)
		}
		if reason != "" {
			s.rejected[source][name] = reason
			rejections = append(rejections, Rejection{Source: source, Pod: in, Reason: reason})
			continue
		}
		names.Insert(name)
		if existing, found := old[in.UID]; found && !differSemantically(existing, in) && reflect.DeepEqual(&existing.Status, &in.Status) {
			// Unchanged, the common case of a snapshot: no copy (profiled: copying every pod of
			// every snapshot was most of a merge's cost).
			cur[in.UID] = existing
			continue
		}
		ref := in.DeepCopy()
		if ref.Annotations == nil {
			ref.Annotations = map[string]string{}
		}
		ref.Annotations[ConfigSourceAnnotationKey] = source
		if existing, found := old[ref.UID]; found {
			cur[ref.UID] = existing
			switch checkAndUpdate(existing, ref) {
			case UPDATE:
				upds = append(upds, existing)
			case DELETE:
				dels = append(dels, existing)
			case RECONCILE:
				recs = append(recs, existing)
			}
			continue
		}
		ref.Annotations[ConfigFirstSeenAnnotationKey] = now.Format(time.RFC3339Nano)
		cur[ref.UID] = ref
		adds = append(adds, ref)
	}
	for _, uid := range sortedUIDs(old) {
		if _, kept := cur[uid]; !kept {
			rems = append(rems, old[uid])
		}
	}
	s.pods[source] = cur
	freed = s.reindexOwners(source, old, cur)
	emit := func(op Op, pods []*v1.Pod) {
		if len(pods) > 0 {
			updates = append(updates, PodUpdate{Op: op, Source: source, Pods: copyPods(pods)})
		}
	}
	emit(REMOVE, rems)
	emit(ADD, adds)
	emit(UPDATE, upds)
	emit(DELETE, dels)
	if firstSet && len(adds) == 0 && len(upds) == 0 && len(dels) == 0 {
		updates = append(updates, PodUpdate{Op: ADD, Source: source, Pods: []*v1.Pod{}})
	}
	emit(RECONCILE, recs)
	return updates, rejections, freed
}

// reindexOwners drops the names the source no longer holds and records those it holds now. It
// reports whether any name was freed.
func (s *State) reindexOwners(source string, old, cur map[types.UID]*v1.Pod) bool {
	freed := false
	for _, p := range old {
		name := FullName(p)
		if o := s.owners[name]; o.source == source && o.uid == p.UID {
			if c, ok := cur[p.UID]; !ok || FullName(c) != name {
				delete(s.owners, name)
				freed = true
			}
		}
	}
	for uid, p := range cur {
		s.owners[FullName(p)] = owner{source: source, uid: uid}
	}
	return freed
}

// checkAndUpdate folds ref into existing and says which operation the change needs, as
// upstream's checkAndUpdatePod: spec, labels, annotations (but the local config.* ones) and the
// deletion fields make an UPDATE, or a DELETE when a deletionTimestamp appears; the status alone
// makes a RECONCILE; nothing makes -1.
func checkAndUpdate(existing, ref *v1.Pod) Op {
	if !differSemantically(existing, ref) {
		if !reflect.DeepEqual(&existing.Status, &ref.Status) {
			existing.Status = ref.Status
			return RECONCILE
		}
		return -1
	}
	ref.Annotations[ConfigFirstSeenAnnotationKey] = existing.Annotations[ConfigFirstSeenAnnotationKey]
	existing.Spec = ref.Spec
	existing.Labels = ref.Labels
	existing.DeletionTimestamp = ref.DeletionTimestamp
	existing.DeletionGracePeriodSeconds = ref.DeletionGracePeriodSeconds
	existing.Generation = ref.Generation
	existing.Status = ref.Status
	existing.Annotations = mergeAnnotations(existing.Annotations, ref.Annotations)
	if ref.DeletionTimestamp != nil {
		return DELETE
	}
	return UPDATE
}

var localAnnotations = []string{ConfigSourceAnnotationKey, ConfigMirrorAnnotationKey, ConfigFirstSeenAnnotationKey}

func isLocal(key string) bool {
	for _, k := range localAnnotations {
		if k == key {
			return true
		}
	}
	return false
}

func differSemantically(existing, ref *v1.Pod) bool {
	// Pointers: DeepEqual of the structs themselves would copy both to the heap first.
	return !reflect.DeepEqual(&existing.Spec, &ref.Spec) ||
		!reflect.DeepEqual(existing.Labels, ref.Labels) ||
		!reflect.DeepEqual(existing.DeletionTimestamp, ref.DeletionTimestamp) ||
		!reflect.DeepEqual(existing.DeletionGracePeriodSeconds, ref.DeletionGracePeriodSeconds) ||
		!annotationsEqual(existing.Annotations, ref.Annotations)
}

func annotationsEqual(a, b map[string]string) bool {
	for k, v := range b {
		if !isLocal(k) && a[k] != v {
			return false
		}
		if _, ok := a[k]; !ok && !isLocal(k) {
			return false
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok && !isLocal(k) {
			return false
		}
	}
	return true
}

func mergeAnnotations(existing, ref map[string]string) map[string]string {
	out := make(map[string]string, len(ref)+len(localAnnotations))
	for k, v := range ref {
		out[k] = v
	}
	for _, k := range localAnnotations {
		if v, ok := existing[k]; ok {
			out[k] = v
		}
	}
	return out
}

func copyPods(in []*v1.Pod) []*v1.Pod {
	out := make([]*v1.Pod, 0, len(in))
	for _, p := range in {
		out = append(out, p.DeepCopy())
	}
	return out
}

func sortedUIDs(m map[types.UID]*v1.Pod) []types.UID {
	out := make([]types.UID, 0, len(m))
	for uid := range m {
		out = append(out, uid)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
