package apiobjects

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// Services is the cluster's services with a cluster IP, listed and watched in every namespace
// (the Node authorizer lets nodes do it), for the service environment variables of pods, as
// upstream's service informer: headless services are not watched (kubernetes#122394).
type Services struct {
	client kubernetes.Interface
	clock  clock.Clock
	store  *serviceStore
}

// NewServices returns the watch; Run starts it.
func NewServices(client kubernetes.Interface, clk clock.Clock) (*Services, error) {
	if client == nil || clk == nil {
		return nil, errors.New("apiobjects: services: Client and Clock are required")
	}
	return &Services{client: client, clock: clk,
		store: &serviceStore{Store: cache.NewStore(cache.MetaNamespaceKeyFunc)}}, nil
}

// Run lists and watches services until ctx ends, retrying with back-off.
func (s *Services) Run(ctx context.Context) {
	selector := fields.OneTermNotEqualSelector("spec.clusterIP", v1.ClusterIPNone).String()
	services := s.client.CoreV1().Services(metav1.NamespaceAll)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = selector
			return services.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			return services.Watch(ctx, opts)
		},
	}
	r := cache.NewReflectorWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, s.client), &v1.Service{}, s.store,
		cache.ReflectorOptions{Name: "services", MinWatchTimeout: 5 * time.Minute, Clock: s.clock})
	r.RunWithContext(ctx)
}

// Services returns the services known now, and whether they were listed at least once. The
// services are shared and must not be modified.
func (s *Services) Services() ([]*v1.Service, bool) {
	objs := s.store.List()
	out := make([]*v1.Service, 0, len(objs))
	for _, o := range objs {
		if svc, ok := o.(*v1.Service); ok {
			out = append(out, svc)
		}
	}
	return out, s.store.synced.Load()
}

// serviceStore is a store that knows when the first list arrived.
type serviceStore struct {
	cache.Store
	synced atomic.Bool
}

// Replace implements cache.ReflectorStore: the result of a list.
func (s *serviceStore) Replace(list []any, rv string) error {
	err := s.Store.Replace(list, rv)
	if err == nil {
		s.synced.Store(true)
	}
	return err
}
