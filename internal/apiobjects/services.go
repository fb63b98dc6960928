package apiobjects

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/kubeclient"
)

// Services is the cluster's services with a cluster IP, listed and watched in every namespace
// (the Node authorizer lets nodes do it), for the service environment variables of pods, as
// upstream's service informer: headless services are not watched (kubernetes#122394).
type Services struct {
	w *watchedAll
}

// NewServices returns the watch; Run starts it.
func NewServices(client kubeclient.CoreV1, clk clock.Clock) (*Services, error) {
	if client == nil || clk == nil {
		return nil, errors.New("apiobjects: services: Client and Clock are required")
	}
	selector := fields.OneTermNotEqualSelector("spec.clusterIP", v1.ClusterIPNone).String()
	services := client.Services(metav1.NamespaceAll)
	return &Services{w: newWatchedAll("services", client, clk, &v1.Service{}, cache.MetaNamespaceKeyFunc, listWatchFuncs{
		list: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = selector
			return services.List(ctx, opts)
		},
		watch: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			return services.Watch(ctx, opts)
		},
	})}, nil
}

// Run lists and watches services until ctx ends, retrying with back-off.
func (s *Services) Run(ctx context.Context) { s.w.run(ctx) }

// Services returns the services known now, and whether they were listed at least once. The
// services are shared and must not be modified.
func (s *Services) Services() ([]*v1.Service, bool) {
	objs := s.w.store.List()
	out := make([]*v1.Service, 0, len(objs))
	for _, o := range objs {
		if svc, ok := o.(*v1.Service); ok {
			out = append(out, svc)
		}
	}
	return out, s.w.store.synced.Load()
}

// Restore puts services from the checkpoint in place until the first list (which replaces
// them): after a restart while the API server is unreachable, restored pods get the service
// environment variables they had. It does nothing once services were listed.
func (s *Services) Restore(services []*v1.Service) {
	if s.w.store.synced.Load() {
		return
	}
	objs := make([]any, len(services))
	for i, svc := range services {
		objs[i] = svc
	}
	_ = s.w.store.Replace(objs, "")
}
