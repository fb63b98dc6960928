package apiobjects

import (
	"context"
	"errors"
	"fmt"

	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/kubeclient"
)

// RuntimeClasses is the cluster's RuntimeClasses (node.k8s.io/v1), listed and watched as
// upstream's RuntimeClass manager (pkg/kubelet/runtimeclass) does, so that a pod's
// runtimeClassName resolves to the CRI runtime handler its sandbox runs with.
type RuntimeClasses struct {
	w *watchedAll
}

// NewRuntimeClasses returns the watch; Run starts it.
func NewRuntimeClasses(client kubeclient.RuntimeClassesGetter, clk clock.Clock) (*RuntimeClasses, error) {
	if client == nil || clk == nil {
		return nil, errors.New("apiobjects: runtime classes: Client and Clock are required")
	}
	classes := client.RuntimeClasses()
	return &RuntimeClasses{w: newWatchedAll("runtimeclasses", client, clk, &nodev1.RuntimeClass{}, cache.MetaNamespaceKeyFunc, listWatchFuncs{
		list: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return classes.List(ctx, opts)
		},
		watch: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return classes.Watch(ctx, opts)
		},
	})}, nil
}

// Run lists and watches RuntimeClasses until ctx ends, retrying with back-off.
func (r *RuntimeClasses) Run(ctx context.Context) { r.w.run(ctx) }

// LookupRuntimeHandler is upstream's: the handler of the named RuntimeClass, "" (the runtime's
// default handler) for none. A class that does not exist is a NotFound error in the API's words
// (runtimeclasses.node.k8s.io "x" not found); before the first list, an error that says so, so
// that the pod is retried rather than run with the wrong handler.
func (r *RuntimeClasses) LookupRuntimeHandler(name *string) (string, error) {
	if name == nil || *name == "" {
		return "", nil
	}
	if !r.w.store.synced.Load() {
		return "", fmt.Errorf("RuntimeClass %s: RuntimeClasses have not yet been read at least once, cannot look up the runtime handler", *name)
	}
	obj, ok, err := r.w.store.GetByKey(*name)
	if err != nil {
		return "", fmt.Errorf("failed to lookup RuntimeClass %s: %w", *name, err)
	}
	rc, isClass := obj.(*nodev1.RuntimeClass)
	if !ok || !isClass {
		return "", apierrors.NewNotFound(nodev1.Resource("runtimeclasses"), *name)
	}
	return rc.Handler, nil
}
