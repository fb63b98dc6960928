// Package fakekube gives unit tests nodelet's API clients (internal/kubeclient) backed by
// client-go's fake clientset. Only tests import it.
//
// The fake clientset cannot stream an informer's initial list (watch-list); the clientset says
// so to the reflector, its typed clients do not. The clients returned here say so too, so that
// reflectors and informers over them list and watch as they do over the fake clientset.
package fakekube

import (
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/nodelet/nodelet/internal/kubeclient"
)

// Clients are c's clients as kubeclient.New returns them.
func Clients(c *fake.Clientset) *kubeclient.Clients {
	return &kubeclient.Clients{Core: Core(c), Leases: Leases(c), RuntimeClasses: RuntimeClasses(c),
		TokenReviews: c.AuthenticationV1().TokenReviews(), SubjectAccessReviews: c.AuthorizationV1().SubjectAccessReviews(),
		Events: &corev1client.EventSinkImpl{Interface: c.CoreV1().Events("")}, Scheme: kubeclient.NewScheme()}
}

// Core is c's core/v1 client.
func Core(c *fake.Clientset) kubeclient.CoreV1 { return core{c.CoreV1()} }

// Leases is c's coordination.k8s.io/v1 leases.
func Leases(c *fake.Clientset) kubeclient.LeasesGetter { return leases{c} }

// RuntimeClasses is c's node.k8s.io/v1 RuntimeClasses.
func RuntimeClasses(c *fake.Clientset) kubeclient.RuntimeClassesGetter { return runtimeClasses{c} }

type core struct{ c corev1client.CoreV1Interface }

func (core) IsWatchListSemanticsUnSupported() bool { return true }

func (f core) Pods(ns string) kubeclient.PodInterface       { return f.c.Pods(ns) }
func (f core) Nodes() kubeclient.NodeInterface              { return f.c.Nodes() }
func (f core) Secrets(ns string) kubeclient.SecretInterface { return f.c.Secrets(ns) }
func (f core) ConfigMaps(ns string) kubeclient.ConfigMapInterface {
	return f.c.ConfigMaps(ns)
}
func (f core) Services(ns string) kubeclient.ServiceInterface { return f.c.Services(ns) }
func (f core) ServiceAccounts(ns string) kubeclient.ServiceAccountInterface {
	return f.c.ServiceAccounts(ns)
}

type leases struct{ c *fake.Clientset }

func (leases) IsWatchListSemanticsUnSupported() bool { return true }

func (f leases) Leases(ns string) kubeclient.LeaseInterface {
	return f.c.CoordinationV1().Leases(ns)
}

type runtimeClasses struct{ c *fake.Clientset }

func (runtimeClasses) IsWatchListSemanticsUnSupported() bool { return true }

func (f runtimeClasses) RuntimeClasses() kubeclient.RuntimeClassInterface {
	return f.c.NodeV1().RuntimeClasses()
}
