package admission

import (
	v1 "k8s.io/api/core/v1"
)

// bindAll is the scheduler's DefaultBindAllHostIP.
const bindAll = "0.0.0.0"

// hostPort is one (protocol, port) a pod binds on the node.
type hostPort struct {
	protocol string
	port     int32
}

// usedPorts is the scheduler's HostPortInfo: host IP → the (protocol, port)s bound on it.
type usedPorts map[string]map[hostPort]bool

func sanitize(ip, protocol string) (string, string) {
	if ip == "" {
		ip = bindAll
	}
	if protocol == "" {
		protocol = string(v1.ProtocolTCP)
	}
	return ip, protocol
}

func (u usedPorts) add(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	ip, protocol = sanitize(ip, protocol)
	if u[ip] == nil {
		u[ip] = map[hostPort]bool{}
	}
	u[ip][hostPort{protocol, port}] = true
}

// conflicts is HostPortInfo.CheckConflict: 0.0.0.0 conflicts with the port on any IP; another
// IP with the port on that IP or on 0.0.0.0.
func (u usedPorts) conflicts(ip, protocol string, port int32) bool {
	if port <= 0 {
		return false
	}
	ip, protocol = sanitize(ip, protocol)
	hp := hostPort{protocol, port}
	if ip == bindAll {
		for _, ports := range u {
			if ports[hp] {
				return true
			}
		}
		return false
	}
	return u[bindAll][hp] || u[ip][hp]
}

// podHostPorts is the scheduler's GetHostPorts: the host ports of the containers and of the
// restartable (sidecar) init containers, which run as long as the pod.
func podHostPorts(pod *v1.Pod) []v1.ContainerPort {
	var out []v1.ContainerPort
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways {
			continue
		}
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				out = append(out, p)
			}
		}
	}
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				out = append(out, p)
			}
		}
	}
	return out
}

// portsFit is the scheduler's nodeports.Fits against the other pods' host ports.
func portsFit(pod *v1.Pod, others []*v1.Pod) bool {
	want := podHostPorts(pod)
	if len(want) == 0 {
		return true
	}
	used := usedPorts{}
	for _, p := range others {
		for _, cp := range podHostPorts(p) {
			used.add(cp.HostIP, string(cp.Protocol), cp.HostPort)
		}
	}
	for _, cp := range want {
		if used.conflicts(cp.HostIP, string(cp.Protocol), cp.HostPort) {
			return false
		}
	}
	return true
}
