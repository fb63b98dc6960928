package criconfig

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// masterService is the service of the API server in the default namespace, whose variables
// (KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT...) every pod gets: client-go's in-cluster
// config reads them.
const masterService = "kubernetes"

// ServiceEnv is upstream's getServiceEnvVarMap: the variables that tell a pod of namespace ns
// where the services it may use are. The master service of the default namespace always
// counts; the services of ns (which win over it by name) only with enableServiceLinks.
// Services without a cluster IP (headless, ExternalName) are left out.
func ServiceEnv(services []*v1.Service, ns string, enableServiceLinks bool) map[string]string {
	chosen := map[string]*v1.Service{}
	for _, s := range services {
		if !hasClusterIP(s) {
			continue
		}
		switch {
		case s.Namespace == ns && enableServiceLinks:
			chosen[s.Name] = s
		case s.Namespace == metav1.NamespaceDefault && s.Name == masterService:
			if _, taken := chosen[s.Name]; !taken {
				chosen[s.Name] = s
			}
		}
	}
	names := make([]string, 0, len(chosen))
	for name := range chosen {
		names = append(names, name)
	}
	sort.Strings(names) // upstream's order is a map's: any order is upstream's
	env := map[string]string{}
	for _, name := range names {
		serviceVariables(chosen[name], env)
	}
	return env
}

func hasClusterIP(s *v1.Service) bool {
	return s.Spec.ClusterIP != "" && s.Spec.ClusterIP != v1.ClusterIPNone
}

// serviceVariables adds one service's variables, as upstream's envvars.FromServices: the host,
// the first port, each named port, and Docker's link variables for every port.
func serviceVariables(s *v1.Service, env map[string]string) {
	prefix := envVariableName(s.Name)
	ip := s.Spec.ClusterIP
	env[prefix+"_SERVICE_HOST"] = ip
	if len(s.Spec.Ports) == 0 {
		return // validation forbids it; never index an empty list
	}
	portVar := prefix + "_SERVICE_PORT"
	env[portVar] = strconv.Itoa(int(s.Spec.Ports[0].Port))
	for _, p := range s.Spec.Ports {
		if p.Name != "" {
			env[portVar+"_"+envVariableName(p.Name)] = strconv.Itoa(int(p.Port))
		}
	}
	for i, p := range s.Spec.Ports {
		protocol := string(v1.ProtocolTCP)
		if p.Protocol != "" {
			protocol = string(p.Protocol)
		}
		lower := strings.ToLower(protocol)
		url := fmt.Sprintf("%s://%s", lower, net.JoinHostPort(ip, strconv.Itoa(int(p.Port))))
		if i == 0 {
			env[prefix+"_PORT"] = url // Docker special-cases the first port
		}
		pp := fmt.Sprintf("%s_PORT_%d_%s", prefix, p.Port, strings.ToUpper(protocol))
		env[pp] = url
		env[pp+"_PROTO"] = lower
		env[pp+"_PORT"] = strconv.Itoa(int(p.Port))
		env[pp+"_ADDR"] = ip
	}
}

// envVariableName is upstream's makeEnvVariableName: upper case, dashes as underscores.
func envVariableName(s string) string {
	return strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
}
