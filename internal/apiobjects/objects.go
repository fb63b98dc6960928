package apiobjects

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/kubeclient"
)

// kind is the kind of a watched object.
type kind int

const (
	configMaps kind = iota
	secrets
)

// resource names the kind in errors as upstream's managers do (`configmap "x" not found`).
func (k kind) resource() schema.GroupResource {
	if k == secrets {
		return v1.Resource("secret")
	}
	return v1.Resource("configmap")
}

func (k kind) newObject() runtime.Object {
	if k == secrets {
		return &v1.Secret{}
	}
	return &v1.ConfigMap{}
}

func (k kind) list(ctx context.Context, c kubeclient.CoreV1, ns string, opts metav1.ListOptions) (runtime.Object, error) {
	if k == secrets {
		return c.Secrets(ns).List(ctx, opts)
	}
	return c.ConfigMaps(ns).List(ctx, opts)
}

func (k kind) watch(ctx context.Context, c kubeclient.CoreV1, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	if k == secrets {
		return c.Secrets(ns).Watch(ctx, opts)
	}
	return c.ConfigMaps(ns).Watch(ctx, opts)
}

func (k kind) get(ctx context.Context, c kubeclient.CoreV1, ns, name string) (runtime.Object, error) {
	if k == secrets {
		return c.Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	}
	return c.ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
}

// isImmutable reports whether the object is marked immutable: it cannot change any more, so it
// need not be watched.
func isImmutable(obj runtime.Object) bool {
	switch o := obj.(type) {
	case *v1.ConfigMap:
		return o.Immutable != nil && *o.Immutable
	case *v1.Secret:
		return o.Immutable != nil && *o.Immutable
	}
	return false
}

// objectKey identifies a watched object.
type objectKey struct {
	kind            kind
	namespace, name string
}

// item is a watched object: the pods that reference it, its store and its reflector.
type item struct {
	refs  sets.Set[types.UID]
	store *objectStore
	// stop ends the reflector; nil once it ended (unreferenced, immutable or shut down).
	stop context.CancelFunc
}

func (it *item) stopWatching() bool {
	if it.stop == nil {
		return false
	}
	it.stop()
	it.stop = nil
	return true
}

// startReflector runs a reflector that lists and watches the one object with the field selector
// metadata.name=<name>, the only list the Node authorizer grants a node, into store. It retries
// on its own, with back-off, until ctx ends.
func startReflector(ctx context.Context, wg *sync.WaitGroup, c kubeclient.CoreV1, clk clock.Clock, key objectKey, store *objectStore) {
	selector := fields.OneTermEqualSelector("metadata.name", key.name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = selector
			return key.kind.list(ctx, c, key.namespace, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			return key.kind.watch(ctx, c, key.namespace, opts)
		},
	}
	r := cache.NewReflectorWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, c), key.kind.newObject(), store,
		cache.ReflectorOptions{
			Name: fmt.Sprintf("%s-%q/%q", key.kind.resource().Resource, key.namespace, key.name),
			// As upstream: long watches, so that many watched objects do not reconnect often.
			MinWatchTimeout: 30 * time.Minute,
			Clock:           clk,
		})
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.RunWithContext(ctx)
	}()
}

// objectStore is the reflector's store of one object. It knows when the first list arrived
// (synced) and calls onChange when the object is added, updated or deleted after that.
type objectStore struct {
	name     string
	onChange func()

	mu       sync.Mutex
	obj      runtime.Object // nil when the object does not exist
	synced   bool
	syncedCh chan struct{} // closed once synced
}

var _ cache.ReflectorStore = (*objectStore)(nil)

func newObjectStore(name string, onChange func()) *objectStore {
	return &objectStore{name: name, onChange: onChange, syncedCh: make(chan struct{})}
}

// mine reports whether obj is the store's object: the API server filters by name already, and
// this keeps anything else (a fake, a misbehaving proxy) out.
func (s *objectStore) mine(obj any) (runtime.Object, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	o, ok := obj.(runtime.Object)
	if !ok {
		return nil, false
	}
	m, err := meta.Accessor(o)
	return o, err == nil && m.GetName() == s.name
}

// Add implements cache.ReflectorStore.
func (s *objectStore) Add(obj any) error { return s.Update(obj) }

// Update implements cache.ReflectorStore.
func (s *objectStore) Update(obj any) error {
	if o, ok := s.mine(obj); ok {
		s.put(o, false)
	}
	return nil
}

// Delete implements cache.ReflectorStore.
func (s *objectStore) Delete(obj any) error {
	if _, ok := s.mine(obj); ok {
		s.put(nil, false)
	}
	return nil
}

// Replace implements cache.ReflectorStore: the result of a list.
func (s *objectStore) Replace(list []any, _ string) error {
	var found runtime.Object
	for _, obj := range list {
		if o, ok := s.mine(obj); ok {
			found = o
		}
	}
	s.put(found, true)
	return nil
}

// Resync implements cache.ReflectorStore; there is nothing to resync.
func (s *objectStore) Resync() error { return nil }

// put stores the object of a list (listed) or a watch event. After the first list, every watch
// event is a change (the API server sends one only when the object changed); a relist is one
// when it finds another version.
func (s *objectStore) put(obj runtime.Object, listed bool) {
	s.mu.Lock()
	changed := s.synced && (!listed || !sameVersion(s.obj, obj))
	s.obj = obj
	if listed && !s.synced {
		s.synced = true
		close(s.syncedCh)
	}
	s.mu.Unlock()
	if changed && s.onChange != nil {
		s.onChange()
	}
}

// sameVersion reports whether a and b are the same version of the object (or both absent): the
// same resourceVersion, or equal when there is none.
func sameVersion(a, b runtime.Object) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ma, errA := meta.Accessor(a)
	mb, errB := meta.Accessor(b)
	if errA != nil || errB != nil {
		return false
	}
	if ma.GetResourceVersion() == "" {
		return equality.Semantic.DeepEqual(a, b)
	}
	return ma.GetUID() == mb.GetUID() && ma.GetResourceVersion() == mb.GetResourceVersion()
}

// wait returns the object (nil when it does not exist) once the first list arrived, or false
// when it did not within timeout.
func (s *objectStore) wait(clk clock.Clock, timeout time.Duration) (runtime.Object, bool) {
	select {
	case <-s.syncedCh:
	default:
		t := clk.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-s.syncedCh:
		case <-t.C():
			return nil, false
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.obj, true
}
