package apiobjects

import (
	"context"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// listWatchFuncs lists and watches one kind of object with the options given.
type listWatchFuncs struct {
	list  func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	watch func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// watchedAll is every object of one kind that the node may list and watch (services,
// RuntimeClasses), kept by a reflector: a shared informer without the handlers nodelet does not
// need.
type watchedAll struct {
	name     string
	client   any // the typed client: it tells the reflector whether it can stream lists
	clock    clock.Clock
	expected runtime.Object
	lw       listWatchFuncs
	store    *syncedStore
}

func newWatchedAll(name string, client any, clk clock.Clock, expected runtime.Object, keyFunc cache.KeyFunc, lw listWatchFuncs) *watchedAll {
	return &watchedAll{name: name, client: client, clock: clk, expected: expected, lw: lw,
		store: &syncedStore{Store: cache.NewStore(keyFunc)}}
}

// run lists and watches until ctx ends, retrying with back-off.
func (w *watchedAll) run(ctx context.Context) {
	lw := &cache.ListWatch{ListWithContextFunc: w.lw.list, WatchFuncWithContext: w.lw.watch}
	r := cache.NewReflectorWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, w.client), w.expected, w.store,
		cache.ReflectorOptions{Name: w.name, MinWatchTimeout: 5 * time.Minute, Clock: w.clock})
	r.RunWithContext(ctx)
}

// syncedStore is a store that knows when the first list arrived.
type syncedStore struct {
	cache.Store
	synced atomic.Bool
}

// Replace implements cache.ReflectorStore: the result of a list.
func (s *syncedStore) Replace(list []any, rv string) error {
	err := s.Store.Replace(list, rv)
	if err == nil {
		s.synced.Store(true)
	}
	return err
}
