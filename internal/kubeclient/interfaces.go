package kubeclient

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// The methods nodelet calls, with client-go's typed clients' signatures.

// PodInterface is what nodelet does with pods: the API source lists and watches them, the
// status manager reads, patches and deletes them, the mirror pod manager creates and deletes
// mirror pods.
type PodInterface interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Pod, error)
	List(ctx context.Context, opts metav1.ListOptions) (*corev1.PodList, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	Create(ctx context.Context, pod *corev1.Pod, opts metav1.CreateOptions) (*corev1.Pod, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*corev1.Pod, error)
}

// NodeInterface registers the node, keeps its status and watches it.
type NodeInterface interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Node, error)
	List(ctx context.Context, opts metav1.ListOptions) (*corev1.NodeList, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	Create(ctx context.Context, node *corev1.Node, opts metav1.CreateOptions) (*corev1.Node, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*corev1.Node, error)
}

// SecretInterface and ConfigMapInterface read the objects pods reference.
type SecretInterface interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error)
	List(ctx context.Context, opts metav1.ListOptions) (*corev1.SecretList, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

type ConfigMapInterface interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.ConfigMap, error)
	List(ctx context.Context, opts metav1.ListOptions) (*corev1.ConfigMapList, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// ServiceInterface lists and watches the cluster's services (their environment variables).
type ServiceInterface interface {
	List(ctx context.Context, opts metav1.ListOptions) (*corev1.ServiceList, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// ServiceAccountInterface requests service account tokens.
type ServiceAccountInterface interface {
	CreateToken(ctx context.Context, serviceAccountName string, tokenRequest *authenticationv1.TokenRequest, opts metav1.CreateOptions) (*authenticationv1.TokenRequest, error)
}

// CoreV1 is the core group, as nodelet uses it.
type CoreV1 interface {
	PodsGetter
	Nodes() NodeInterface
	Secrets(namespace string) SecretInterface
	ConfigMaps(namespace string) ConfigMapInterface
	Services(namespace string) ServiceInterface
	ServiceAccounts(namespace string) ServiceAccountInterface
}

// PodsGetter gives the pods of a namespace (metav1.NamespaceAll: every namespace).
type PodsGetter interface {
	Pods(namespace string) PodInterface
}

// LeaseInterface keeps the node's lease.
type LeaseInterface interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordinationv1.Lease, error)
	Create(ctx context.Context, lease *coordinationv1.Lease, opts metav1.CreateOptions) (*coordinationv1.Lease, error)
	Update(ctx context.Context, lease *coordinationv1.Lease, opts metav1.UpdateOptions) (*coordinationv1.Lease, error)
}

// LeasesGetter gives the leases of a namespace.
type LeasesGetter interface {
	Leases(namespace string) LeaseInterface
}

// RuntimeClassInterface lists and watches RuntimeClasses.
type RuntimeClassInterface interface {
	List(ctx context.Context, opts metav1.ListOptions) (*nodev1.RuntimeClassList, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// RuntimeClassesGetter gives the RuntimeClasses.
type RuntimeClassesGetter interface {
	RuntimeClasses() RuntimeClassInterface
}

// TokenReviewInterface and SubjectAccessReviewInterface are the kubelet API's webhooks.
type TokenReviewInterface interface {
	Create(ctx context.Context, review *authenticationv1.TokenReview, opts metav1.CreateOptions) (*authenticationv1.TokenReview, error)
}

type SubjectAccessReviewInterface interface {
	Create(ctx context.Context, review *authorizationv1.SubjectAccessReview, opts metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error)
}

// EventSink is where the event recorder posts events (client-go's record.EventSink).
type EventSink interface {
	Create(event *corev1.Event) (*corev1.Event, error)
	Update(event *corev1.Event) (*corev1.Event, error)
	Patch(oldEvent *corev1.Event, data []byte) (*corev1.Event, error)
}

// CSRInterface creates the node's certificate signing requests and waits for their
// certificates (TLS bootstrap and certificate rotation).
type CSRInterface interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*certificatesv1.CertificateSigningRequest, error)
	List(ctx context.Context, opts metav1.ListOptions) (*certificatesv1.CertificateSigningRequestList, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	Create(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, opts metav1.CreateOptions) (*certificatesv1.CertificateSigningRequest, error)
}
