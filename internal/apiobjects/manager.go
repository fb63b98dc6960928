package apiobjects

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/kubeclient"
)

// Defaults of Config.
const (
	// DefaultSyncTimeout is how long a read waits for a new reflector's first list, as upstream
	// (it polls for one second, then fails and the pod's sync is retried).
	DefaultSyncTimeout = time.Second
	// DefaultRequestTimeout bounds a direct GET and a TokenRequest.
	DefaultRequestTimeout = 30 * time.Second
)

// Config is what the Manager needs.
type Config struct {
	// Client is the node's client (system:node:<name>). Required.
	Client kubeclient.CoreV1
	// Clock drives the sync timeout, token refreshes and the reflectors' back-off. Required.
	Clock clock.Clock
	// OnChange, when set, is called with the UIDs of the registered pods that reference a
	// configMap or secret when it is added, updated or deleted after its reflector's first list,
	// so that their volumes and containers are synced again. It runs on the reflector's goroutine:
	// it should only queue work.
	OnChange func(podUIDs []types.UID)
	// SyncTimeout bounds how long GetConfigMap and GetSecret wait for a reflector's first list
	// (DefaultSyncTimeout when zero).
	SyncTimeout time.Duration
	// RequestTimeout bounds direct GETs and TokenRequests (DefaultRequestTimeout when zero).
	RequestTimeout time.Duration
}

// Manager serves the configMaps, secrets and service account tokens of the pods bound to the
// node. Its methods are safe for concurrent use; the objects it returns are shared and must not
// be modified.
type Manager struct {
	cfg    Config
	ctx    context.Context // ends at shutdown: reflectors, GETs and TokenRequests
	cancel context.CancelFunc
	wg     sync.WaitGroup // the reflectors' goroutines
	jitter func() time.Duration

	mu       sync.Mutex
	stopped  bool
	pods     map[types.UID]*v1.Pod // registered pods
	items    map[objectKey]*item
	tokensMu sync.Mutex
	tokens   map[string]cachedToken // by tokenKey
}

// New returns a Manager; Run stops it.
func New(cfg Config) (*Manager, error) {
	if cfg.Client == nil || cfg.Clock == nil {
		return nil, errors.New("apiobjects: Client and Clock are required")
	}
	if cfg.SyncTimeout <= 0 {
		cfg.SyncTimeout = DefaultSyncTimeout
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{cfg: cfg, ctx: ctx, cancel: cancel,
		jitter: func() time.Duration { return rand.N(maxTokenJitter) },
		pods:   map[types.UID]*v1.Pod{}, items: map[objectKey]*item{},
		tokens: map[string]cachedToken{},
	}, nil
}

// Run drops expired tokens every minute until ctx ends, then stops every reflector and waits
// for them to end. After Run, reads of objects not yet listed fail and new references start no
// reflector.
func (m *Manager) Run(ctx context.Context) {
	defer m.shutdown()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.cfg.Clock.After(tokenGCPeriod):
			m.dropExpiredTokens()
		}
	}
}

func (m *Manager) shutdown() {
	m.mu.Lock()
	m.stopped = true
	for _, it := range m.items {
		it.stopWatching()
	}
	m.mu.Unlock()
	m.cancel()
	m.wg.Wait()
}

// RegisterPod records the configMaps and secrets the pod references (volumes, projected
// sources, env, envFrom, imagePullSecrets) and starts watching those no other registered pod
// references. Registering a pod again (an update) applies the difference.
func (m *Manager) RegisterPod(pod *v1.Pod) {
	refs := referencedObjects(pod)
	m.mu.Lock()
	defer m.mu.Unlock()
	prev := m.pods[pod.UID]
	m.pods[pod.UID] = pod
	var prevRefs map[kind]sets.Set[string] // nil sets: nothing referenced before
	if prev != nil {
		prevRefs = referencedObjects(prev)
	}
	for k, names := range refs {
		for name := range names.Difference(prevRefs[k]) {
			m.addRefLocked(objectKey{k, pod.Namespace, name}, pod.UID)
		}
		for name := range prevRefs[k].Difference(names) {
			m.deleteRefLocked(objectKey{k, pod.Namespace, name}, pod.UID)
		}
	}
}

// UnregisterPod forgets the pod: objects no registered pod references any more stop being
// watched, and the pod's tokens are dropped.
func (m *Manager) UnregisterPod(pod *v1.Pod) {
	m.mu.Lock()
	if prev := m.pods[pod.UID]; prev != nil {
		delete(m.pods, pod.UID)
		for k, names := range referencedObjects(prev) {
			for name := range names {
				m.deleteRefLocked(objectKey{k, prev.Namespace, name}, pod.UID)
			}
		}
	}
	m.mu.Unlock()
	m.dropPodTokens(pod.UID)
}

func (m *Manager) addRefLocked(key objectKey, uid types.UID) {
	it, ok := m.items[key]
	if !ok {
		it = &item{refs: sets.New[types.UID]()}
		it.store = newObjectStore(key.name, func() { m.changed(key, it) })
		if !m.stopped {
			ctx, cancel := context.WithCancel(m.ctx)
			it.stop = cancel
			startReflector(ctx, &m.wg, m.cfg.Client, m.cfg.Clock, key, it.store)
		}
		m.items[key] = it
	}
	it.refs.Insert(uid)
}

func (m *Manager) deleteRefLocked(key objectKey, uid types.UID) {
	it, ok := m.items[key]
	if !ok {
		return
	}
	it.refs.Delete(uid)
	if it.refs.Len() == 0 {
		it.stopWatching()
		delete(m.items, key)
	}
}

// changed tells OnChange about the pods that reference the object of it.
func (m *Manager) changed(key objectKey, it *item) {
	m.mu.Lock()
	if m.items[key] != it { // no longer referenced: a late event of a stopped reflector
		m.mu.Unlock()
		return
	}
	uids := it.refs.UnsortedList()
	m.mu.Unlock()
	slices.Sort(uids)
	klog.V(2).InfoS("Referenced object changed; syncing the pods that use it", "kind", key.kind.resource().Resource,
		"object", klog.KRef(key.namespace, key.name), "pods", len(uids))
	if m.cfg.OnChange != nil && len(uids) > 0 {
		m.cfg.OnChange(uids)
	}
}

// GetConfigMap returns the configMap; an apierrors NotFound error when it does not exist.
func (m *Manager) GetConfigMap(namespace, name string) (*v1.ConfigMap, error) {
	obj, err := m.get(objectKey{configMaps, namespace, name})
	if err != nil {
		return nil, err
	}
	cm, ok := obj.(*v1.ConfigMap)
	if !ok {
		return nil, fmt.Errorf("configmap %s/%s: unexpected object type %T", namespace, name, obj)
	}
	return cm, nil
}

// GetSecret returns the secret; an apierrors NotFound error when it does not exist.
func (m *Manager) GetSecret(namespace, name string) (*v1.Secret, error) {
	obj, err := m.get(objectKey{secrets, namespace, name})
	if err != nil {
		return nil, err
	}
	s, ok := obj.(*v1.Secret)
	if !ok {
		return nil, fmt.Errorf("secret %s/%s: unexpected object type %T", namespace, name, obj)
	}
	return s, nil
}

// get reads a watched object from its store, waiting up to SyncTimeout for the first list, and
// any other object from the API server.
func (m *Manager) get(key objectKey) (runtime.Object, error) {
	m.mu.Lock()
	it := m.items[key]
	m.mu.Unlock()
	if it == nil {
		return m.getDirect(key)
	}
	obj, synced := it.store.wait(m.cfg.Clock, m.cfg.SyncTimeout)
	if !synced {
		return nil, fmt.Errorf("failed to sync %s cache: %s/%s not listed within %v; check that the API server is reachable and that a pod bound to this node references it",
			key.kind.resource().Resource, key.namespace, key.name, m.cfg.SyncTimeout)
	}
	if obj == nil {
		return nil, apierrors.NewNotFound(key.kind.resource(), key.name)
	}
	if isImmutable(obj) {
		m.mu.Lock()
		stopped := it.stopWatching()
		m.mu.Unlock()
		if stopped {
			klog.V(4).InfoS("Stopped watching an immutable object", "kind", key.kind.resource().Resource, "object", klog.KRef(key.namespace, key.name))
		}
	}
	return obj, nil
}

// getDirect GETs an object no registered pod references.
func (m *Manager) getDirect(key objectKey) (runtime.Object, error) {
	ctx, cancel := context.WithTimeout(m.ctx, m.cfg.RequestTimeout)
	defer cancel()
	obj, err := key.kind.get(ctx, m.cfg.Client, key.namespace, key.name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, apierrors.NewNotFound(key.kind.resource(), key.name)
	case err != nil:
		return nil, fmt.Errorf("get %s %s/%s: %w", key.kind.resource().Resource, key.namespace, key.name, err)
	}
	return obj, nil
}
