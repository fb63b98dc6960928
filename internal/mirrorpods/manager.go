package mirrorpods

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/kubeclient"
	"github.com/nodelet/nodelet/internal/podconfig"
)

// CreatedTTL bounds how long a mirror pod this Manager created is trusted before the watch
// shows it: after that, only the watch's view counts.
const CreatedTTL = time.Minute

// Config configures the Manager.
type Config struct {
	NodeName string
	// OnChange, when set, is called with the namespaced names of static pods to
	// sync again: their mirror pod disappeared, appeared or changed (UID, mirror annotation,
	// deletion), or its creation waited for the first view of the API server's pods or for the
	// Node's UID. It runs on the API watch and must not block.
	OnChange func(pods []types.NamespacedName)
}

// Deps are the Manager's collaborators.
type Deps struct {
	Client kubeclient.PodsGetter
	// NodeUID returns the UID of this node's Node object, or "" while it is not known (not
	// registered yet, or being deleted): mirror pods are created only with it.
	NodeUID func() types.UID
	Clock   clock.PassiveClock
}

type created struct {
	pod *v1.Pod
	at  time.Time
}

// Manager keeps the mirror pods of static pods. It is safe for concurrent use.
type Manager struct {
	cfg  Config
	deps Deps

	mu sync.Mutex
	// watched is the API source's last view, by namespaced name; nil until the first one.
	watched map[types.NamespacedName]*v1.Pod
	// created holds the mirror pods created here that the watch has not shown yet, so that a
	// sync in between neither creates a second one nor takes the old one for current.
	created map[types.NamespacedName]created
	// pending are static pods whose mirror pod creation waited; OnChange reports them later.
	pending sets.Set[types.NamespacedName]
}

var _ podconfig.MirrorSink = (*Manager)(nil)

// New returns a Manager.
func New(cfg Config, deps Deps) (*Manager, error) {
	if cfg.NodeName == "" || deps.Client == nil || deps.NodeUID == nil || deps.Clock == nil {
		return nil, errors.New("mirror pods: NodeName, Client, NodeUID and Clock are required")
	}
	return &Manager{cfg: cfg, deps: deps, created: map[types.NamespacedName]created{}, pending: sets.New[types.NamespacedName]()}, nil
}

// SetMirrorPods takes the API server's mirror pods for this node (podconfig.MirrorSink) and
// reports, through OnChange, the static pods whose mirror pod changed.
func (m *Manager) SetMirrorPods(pods []*v1.Pod) {
	next := make(map[types.NamespacedName]*v1.Pod, len(pods))
	for _, p := range pods {
		next[keyOf(p)] = p.DeepCopy()
	}
	m.mu.Lock()
	before := m.effective()
	first := m.watched == nil
	m.watched = next
	now := m.deps.Clock.Now()
	for name, c := range m.created {
		if w, ok := next[name]; (ok && w.UID == c.pod.UID) || now.Sub(c.at) > CreatedTTL {
			delete(m.created, name)
		}
	}
	changed := sets.New(Changed(before, m.effective())...)
	if first {
		changed = changed.Union(m.pending)
		m.pending.Clear()
	}
	m.mu.Unlock()
	if len(changed) > 0 {
		klog.V(2).InfoS("Mirror pods changed; syncing their static pods again", "pods", sortedKeys(changed))
		m.notify(sortedKeys(changed))
	}
}

// RetryPending reports, through OnChange, the static pods whose mirror pod creation waited (for
// the Node's UID) or failed (the API server unreachable): the composition root calls it every
// 2 s once the node is registered, as upstream's fastStaticPodsRegistration.
func (m *Manager) RetryPending() {
	m.mu.Lock()
	names := sortedKeys(m.pending)
	m.pending.Clear()
	m.mu.Unlock()
	if len(names) > 0 {
		m.notify(names)
	}
}

func (m *Manager) notify(names []types.NamespacedName) {
	if m.cfg.OnChange != nil {
		m.cfg.OnChange(names)
	}
}

// effective is the watched view with the mirror pods created since laid over it. Call with mu
// held.
func (m *Manager) effective() map[types.NamespacedName]*v1.Pod {
	out := make(map[types.NamespacedName]*v1.Pod, len(m.watched)+len(m.created))
	for name, p := range m.watched {
		out[name] = p
	}
	for name, c := range m.created {
		out[name] = c.pod
	}
	return out
}

func (m *Manager) lookup(key types.NamespacedName) (*v1.Pod, bool) {
	if c, ok := m.created[key]; ok {
		return c.pod, true
	}
	p, ok := m.watched[key]
	return p, ok
}

// MirrorFor returns the mirror pod of a static pod, found by full name. It must not be
// modified.
func (m *Manager) MirrorFor(static *v1.Pod) (*v1.Pod, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lookup(keyOf(static))
}

// Sync makes sure the static pod has an up-to-date mirror pod, as upstream's
// tryReconcileMirrorPods: an outdated one or one being deleted is deleted (UID precondition)
// and a fresh one created. Creation waits, without error, for the first view of the API
// server's pods and for the Node's UID; OnChange or RetryPending report the pod when it can
// go on. A pod that is not static is left alone.
func (m *Manager) Sync(ctx context.Context, static *v1.Pod) error {
	if !podconfig.IsStaticPod(static) {
		return nil
	}
	name := keyOf(static)
	m.mu.Lock()
	if m.watched == nil {
		m.pending.Insert(name)
		m.mu.Unlock()
		klog.V(2).InfoS("Mirror pod waits for the first listing of the API server's pods", "pod", klog.KObj(static), "podUID", static.UID)
		return nil
	}
	mirror, _ := m.lookup(name)
	m.mu.Unlock()

	switch Decide(static, mirror) {
	case Keep:
		return nil
	case Recreate:
		klog.InfoS("Deleting the mirror pod as it does not match the static pod", "pod", klog.KObj(mirror), "podUID", mirror.UID,
			"deleting", mirror.DeletionTimestamp != nil)
		gone, err := m.delete(ctx, mirror)
		if err != nil {
			m.mu.Lock()
			m.pending.Insert(name)
			m.mu.Unlock()
			return fmt.Errorf("delete outdated mirror pod %s (UID %s): %w", klog.KObj(mirror), mirror.UID, err)
		}
		if !gone {
			return nil // another mirror pod took the name; the watch shows it and OnChange follows
		}
	}
	return m.create(ctx, static)
}

func (m *Manager) create(ctx context.Context, static *v1.Pod) error {
	name := keyOf(static)
	nodeUID := m.deps.NodeUID()
	if nodeUID == "" {
		m.mu.Lock()
		m.pending.Insert(name)
		m.mu.Unlock()
		klog.V(2).InfoS("Mirror pod waits until the node is registered", "pod", klog.KObj(static), "node", m.cfg.NodeName)
		return nil
	}
	klog.InfoS("Creating a mirror pod for static pod", "pod", klog.KObj(static), "podUID", static.UID)
	out, err := m.deps.Client.Pods(static.Namespace).Create(ctx, MirrorOf(static, m.cfg.NodeName, nodeUID), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		klog.V(2).InfoS("A mirror pod exists already; it is checked once the watch shows it", "pod", klog.KObj(static))
		return nil
	}
	if err != nil {
		// A transient failure (the API server unreachable) is retried by RetryPending (every 2 s),
		// not only at the pod's next periodic sync: after an outage the mirror pods of static
		// pods added meanwhile appear within seconds. A refusal waits for the next sync.
		if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
			m.mu.Lock()
			m.pending.Insert(name)
			m.mu.Unlock()
		}
		return fmt.Errorf("create mirror pod %s: %w", klog.KObj(static), err)
	}
	m.mu.Lock()
	m.created[name] = created{pod: out, at: m.deps.Clock.Now()}
	m.mu.Unlock()
	return nil
}

// delete deletes a mirror pod at once, if it still has its UID. gone is false when another pod
// has the name now (the precondition failed).
func (m *Manager) delete(ctx context.Context, mirror *v1.Pod) (gone bool, err error) {
	err = m.deps.Client.Pods(mirror.Namespace).Delete(ctx, mirror.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: metav1.NewUIDPreconditions(string(mirror.UID))})
	name := keyOf(mirror)
	switch {
	case err == nil, apierrors.IsNotFound(err):
		m.mu.Lock()
		if c, ok := m.created[name]; ok && c.pod.UID == mirror.UID {
			delete(m.created, name)
		}
		m.mu.Unlock()
		return true, nil
	case apierrors.IsConflict(err):
		return false, nil
	}
	return false, err
}

// DeleteOrphans deletes the mirror pods whose namespaced name is not in wanted: their static pod is
// gone (upstream's HandlePodCleanups). Failures are returned together; each is retried on the
// next call.
func (m *Manager) DeleteOrphans(ctx context.Context, wanted map[types.NamespacedName]bool) error {
	m.mu.Lock()
	var orphans []*v1.Pod
	for name, p := range m.effective() {
		if !wanted[name] {
			orphans = append(orphans, p)
		}
	}
	m.mu.Unlock()
	var errs []error
	for _, p := range orphans {
		klog.InfoS("Deleting the mirror pod of a static pod that is gone", "pod", klog.KObj(p), "podUID", p.UID)
		if _, err := m.delete(ctx, p); err != nil {
			errs = append(errs, fmt.Errorf("delete orphaned mirror pod %s (UID %s): %w", klog.KObj(p), p.UID, err))
		}
	}
	return errors.Join(errs...)
}

// Housekeep deletes the mirror pods of static pods no longer desired (syncloop.Housekeeper).
func (m *Manager) Housekeep(ctx context.Context, desired func() []*v1.Pod) {
	wanted := map[types.NamespacedName]bool{}
	for _, p := range desired() {
		if podconfig.IsStaticPod(p) {
			wanted[keyOf(p)] = true
		}
	}
	if err := m.DeleteOrphans(ctx, wanted); err != nil {
		klog.ErrorS(err, "Failed to delete orphaned mirror pods; retrying at the next housekeeping. Check that the API server is reachable")
	}
}
