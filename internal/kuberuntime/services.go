package kuberuntime

import (
	"errors"

	v1 "k8s.io/api/core/v1"

	"github.com/nodelet/nodelet/internal/kuberuntime/criconfig"
	"github.com/nodelet/nodelet/internal/podconfig"
)

// ServiceLister lists the cluster's services (apiobjects.Services in cluster mode), and says
// whether they were listed at least once.
type ServiceLister interface {
	Services() (services []*v1.Service, synced bool)
}

// errServicesNotSynced is upstream's: an API pod waits for the first list of services, so a
// restarted node never starts a container without KUBERNETES_SERVICE_HOST.
var errServicesNotSynced = errors.New("services have not yet been read at least once, cannot construct envvars")

// ServiceEnv is the pod's service environment variables (criconfig.ServiceEnv) from services,
// as upstream's makeEnvironmentVariables: none without a lister (standalone mode); an error for
// an API pod before the first list (static pods go on with what is known).
func ServiceEnv(pod *v1.Pod, services ServiceLister) (map[string]string, error) {
	if services == nil {
		return nil, nil
	}
	list, synced := services.Services()
	if !synced && !podconfig.IsStaticPod(pod) {
		return nil, errServicesNotSynced
	}
	links := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks // the API default is true
	return criconfig.ServiceEnv(list, pod.Namespace, links), nil
}
