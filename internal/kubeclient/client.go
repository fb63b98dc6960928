package kubeclient

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// Clients are the API clients of one identity (one rest.Config), over one HTTP client.
type Clients struct {
	Core                 CoreV1
	Leases               LeasesGetter
	RuntimeClasses       RuntimeClassesGetter
	TokenReviews         TokenReviewInterface
	SubjectAccessReviews SubjectAccessReviewInterface
	// CSRs are the node's certificate signing requests (TLS bootstrap, certificate rotation).
	CSRs CSRInterface
	// Events is where the event recorder posts.
	Events EventSink
	// Scheme knows the API groups above; the event recorder takes it.
	Scheme *runtime.Scheme
}

// New builds the clients from cfg, sharing one HTTP client (its connections and their
// rotation), as client-go's NewForConfig does for a clientset.
func New(cfg *rest.Config) (*Clients, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("HTTP client for the API server: %w", err)
	}
	s := NewScheme()
	c := newCodecs(s)
	rcs := make([]rest.Interface, len(groups))
	for i, g := range groups {
		gcfg := rest.CopyConfig(cfg)
		gv := g.gv
		gcfg.GroupVersion, gcfg.APIPath = &gv, g.apiPath
		gcfg.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(s, c.factory).WithoutConversion()
		if gcfg.UserAgent == "" {
			gcfg.UserAgent = rest.DefaultKubernetesUserAgent()
		}
		if rcs[i], err = rest.RESTClientForConfigAndClient(gcfg, hc); err != nil {
			return nil, fmt.Errorf("REST client for %s: %w", gv, err)
		}
	}
	core, coordination, node, authn, authz, certs := rcs[0], rcs[1], rcs[2], rcs[3], rcs[4], rcs[5]
	p := c.parameters
	return &Clients{
		Core:           coreClient{rc: core, params: p},
		Leases:         leases{rc: coordination, params: p},
		RuntimeClasses: runtimeClasses{rc: node, params: p},
		TokenReviews: newResource(authn, p, "", "tokenreviews",
			func() *authenticationv1.TokenReview { return &authenticationv1.TokenReview{} }, func() *metav1.Status { return &metav1.Status{} }),
		SubjectAccessReviews: newResource(authz, p, "", "subjectaccessreviews",
			func() *authorizationv1.SubjectAccessReview { return &authorizationv1.SubjectAccessReview{} }, func() *metav1.Status { return &metav1.Status{} }),
		CSRs: newResource(certs, p, "", "certificatesigningrequests",
			func() *certificatesv1.CertificateSigningRequest { return &certificatesv1.CertificateSigningRequest{} },
			func() *certificatesv1.CertificateSigningRequestList {
				return &certificatesv1.CertificateSigningRequestList{}
			}),
		Events: &eventSink{rc: core},
		Scheme: s,
	}, nil
}

type coreClient struct {
	rc     rest.Interface
	params runtime.ParameterCodec
}

var _ CoreV1 = coreClient{}

func (c coreClient) Pods(ns string) PodInterface {
	return newResource(c.rc, c.params, ns, "pods",
		func() *corev1.Pod { return &corev1.Pod{} }, func() *corev1.PodList { return &corev1.PodList{} })
}

func (c coreClient) Nodes() NodeInterface {
	return newResource(c.rc, c.params, "", "nodes",
		func() *corev1.Node { return &corev1.Node{} }, func() *corev1.NodeList { return &corev1.NodeList{} })
}

func (c coreClient) Secrets(ns string) SecretInterface {
	return newResource(c.rc, c.params, ns, "secrets",
		func() *corev1.Secret { return &corev1.Secret{} }, func() *corev1.SecretList { return &corev1.SecretList{} })
}

func (c coreClient) ConfigMaps(ns string) ConfigMapInterface {
	return newResource(c.rc, c.params, ns, "configmaps",
		func() *corev1.ConfigMap { return &corev1.ConfigMap{} }, func() *corev1.ConfigMapList { return &corev1.ConfigMapList{} })
}

func (c coreClient) Services(ns string) ServiceInterface {
	return newResource(c.rc, c.params, ns, "services",
		func() *corev1.Service { return &corev1.Service{} }, func() *corev1.ServiceList { return &corev1.ServiceList{} })
}

func (c coreClient) ServiceAccounts(ns string) ServiceAccountInterface {
	return serviceAccounts{rc: c.rc, params: c.params, ns: ns}
}

// serviceAccounts requests tokens (the serviceaccounts/token subresource), as client-go's
// typed client's CreateToken.
type serviceAccounts struct {
	rc     rest.Interface
	params runtime.ParameterCodec
	ns     string
}

func (s serviceAccounts) CreateToken(ctx context.Context, name string, req *authenticationv1.TokenRequest, opts metav1.CreateOptions) (*authenticationv1.TokenRequest, error) {
	out := &authenticationv1.TokenRequest{}
	err := s.rc.Post().Namespace(s.ns).Resource("serviceaccounts").Name(name).SubResource("token").
		VersionedParams(&opts, s.params).Body(req).Do(ctx).Into(out)
	return out, err
}

type leases struct {
	rc     rest.Interface
	params runtime.ParameterCodec
}

func (l leases) Leases(ns string) LeaseInterface {
	return newResource(l.rc, l.params, ns, "leases",
		func() *coordinationv1.Lease { return &coordinationv1.Lease{} }, func() *coordinationv1.LeaseList { return &coordinationv1.LeaseList{} })
}

type runtimeClasses struct {
	rc     rest.Interface
	params runtime.ParameterCodec
}

func (r runtimeClasses) RuntimeClasses() RuntimeClassInterface {
	return newResource(r.rc, r.params, "", "runtimeclasses",
		func() *nodev1.RuntimeClass { return &nodev1.RuntimeClass{} }, func() *nodev1.RuntimeClassList { return &nodev1.RuntimeClassList{} })
}

// eventSink posts events to the namespace of each event, as client-go's EventSinkImpl over
// the events client with namespace "".
type eventSink struct {
	rc rest.Interface
}

var _ EventSink = (*eventSink)(nil)

func (e *eventSink) Create(event *corev1.Event) (*corev1.Event, error) {
	out := &corev1.Event{}
	err := e.rc.Post().NamespaceIfScoped(event.Namespace, event.Namespace != "").Resource("events").
		Body(event).Do(context.Background()).Into(out)
	return out, err
}

func (e *eventSink) Update(event *corev1.Event) (*corev1.Event, error) {
	out := &corev1.Event{}
	err := e.rc.Put().NamespaceIfScoped(event.Namespace, event.Namespace != "").Resource("events").
		Name(event.Name).Body(event).Do(context.Background()).Into(out)
	return out, err
}

func (e *eventSink) Patch(event *corev1.Event, data []byte) (*corev1.Event, error) {
	out := &corev1.Event{}
	err := e.rc.Patch(types.StrategicMergePatchType).NamespaceIfScoped(event.Namespace, event.Namespace != "").
		Resource("events").Name(event.Name).Body(data).Do(context.Background()).Into(out)
	return out, err
}
