package kubeclient

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// object is a typed API object: what the clients below get and send.
type object interface {
	runtime.Object
	GetName() string
}

// resource is the typed client of one resource in one namespace ("" for every namespace, or
// for a cluster-scoped resource), making the requests client-go's gentype.Client makes (JSON,
// the options as query parameters). It is written here because the gentype package also
// carries client-go's fake clients (client-go/testing and the structured-merge-diff tree they
// need: 12 packages linked into every node for none of nodelet's code).
type resource[T object, L runtime.Object] struct {
	rc      rest.Interface
	params  runtime.ParameterCodec
	ns      string
	name    string // the resource, e.g. "pods"
	newObj  func() T
	newList func() L
}

func newResource[T object, L runtime.Object](rc rest.Interface, params runtime.ParameterCodec, ns, name string, newObj func() T, newList func() L) resource[T, L] {
	return resource[T, L]{rc: rc, params: params, ns: ns, name: name, newObj: newObj, newList: newList}
}

// req starts a request on the resource.
func (r resource[T, L]) req(verb *rest.Request) *rest.Request {
	return verb.NamespaceIfScoped(r.ns, r.ns != "").Resource(r.name)
}

// timeout is the request timeout a list or watch asks for (none: the client's).
func timeout(opts metav1.ListOptions) time.Duration {
	if opts.TimeoutSeconds == nil {
		return 0
	}
	return time.Duration(*opts.TimeoutSeconds) * time.Second
}

func (r resource[T, L]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	out := r.newObj()
	err := r.req(r.rc.Get()).Name(name).VersionedParams(&opts, r.params).Do(ctx).Into(out)
	return out, err
}

func (r resource[T, L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	out := r.newList()
	err := r.req(r.rc.Get()).VersionedParams(&opts, r.params).Timeout(timeout(opts)).Do(ctx).Into(out)
	return out, err
}

func (r resource[T, L]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return r.req(r.rc.Get()).VersionedParams(&opts, r.params).Timeout(timeout(opts)).Watch(ctx)
}

func (r resource[T, L]) Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	out := r.newObj()
	err := r.req(r.rc.Post()).VersionedParams(&opts, r.params).Body(obj).Do(ctx).Into(out)
	return out, err
}

func (r resource[T, L]) Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	out := r.newObj()
	err := r.req(r.rc.Put()).Name(obj.GetName()).VersionedParams(&opts, r.params).Body(obj).Do(ctx).Into(out)
	return out, err
}

func (r resource[T, L]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return r.req(r.rc.Delete()).Name(name).Body(&opts).Do(ctx).Error()
}

func (r resource[T, L]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error) {
	out := r.newObj()
	err := r.req(r.rc.Patch(pt)).Name(name).SubResource(subresources...).VersionedParams(&opts, r.params).Body(data).Do(ctx).Into(out)
	return out, err
}
