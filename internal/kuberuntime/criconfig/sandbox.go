package criconfig

import (
	"fmt"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
)

// SandboxOptions is what the sandbox config needs beyond the pod.
type SandboxOptions struct {
	Attempt uint32
	// PodLogsDir is the root of pod log directories (podLogsDir, /var/log/pods).
	PodLogsDir string
	// CgroupParent is the pod's cgroup (cgroups.PodCgroup).
	CgroupParent string
	// DNS is the resolved DNS config (see DNSConfig).
	DNS *runtimeapi.DNSConfig
}

// PodLogDir is <podLogsDir>/<namespace>_<name>_<uid>, upstream's layout.
func PodLogDir(podLogsDir string, pod *v1.Pod) string {
	return filepath.Join(podLogsDir, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
}

// ContainerLogPath is relative to the pod log dir: <container>/<restartCount>.log.
func ContainerLogPath(name string, restartCount int) string {
	return filepath.Join(name, fmt.Sprintf("%d.log", restartCount))
}

// SandboxLabels are the pod's labels plus the pod identity labels.
func SandboxLabels(pod *v1.Pod) map[string]string {
	labels := make(map[string]string, len(pod.Labels)+3)
	for k, v := range pod.Labels {
		labels[k] = v
	}
	labels[container.PodNameLabel] = pod.Name
	labels[container.PodNamespaceLabel] = pod.Namespace
	labels[container.PodUIDLabel] = string(pod.UID)
	return labels
}

// Sandbox builds the PodSandboxConfig as upstream's generatePodSandboxConfig.
func Sandbox(pod *v1.Pod, o SandboxOptions) (*runtimeapi.PodSandboxConfig, error) {
	annotations := make(map[string]string, len(pod.Annotations))
	for k, v := range pod.Annotations {
		annotations[k] = v
	}
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: o.Attempt,
		},
		Labels:       SandboxLabels(pod),
		Annotations:  annotations,
		LogDirectory: PodLogDir(o.PodLogsDir, pod),
		DnsConfig:    o.DNS,
	}
	if !pod.Spec.HostNetwork {
		hostname, err := Hostname(pod)
		if err != nil {
			return nil, err
		}
		cfg.Hostname = hostname
	}
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			cfg.PortMappings = append(cfg.PortMappings, &runtimeapi.PortMapping{
				Protocol: protocol(p.Protocol), ContainerPort: p.ContainerPort, HostPort: p.HostPort, HostIp: p.HostIP,
			})
		}
	}
	cfg.Linux = &runtimeapi.LinuxPodSandboxConfig{
		CgroupParent: o.CgroupParent,
		Resources:    SandboxResources(pod),
		Overhead:     OverheadResources(pod),
		SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: NamespaceOptions(pod),
			Privileged:       anyPrivileged(pod),
			// As upstream: the least privileged profile for the pause container (kubernetes#84623).
			Seccomp: &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
		},
	}
	if sc := pod.Spec.SecurityContext; sc != nil {
		lsc := cfg.Linux.SecurityContext
		if sc.RunAsUser != nil {
			lsc.RunAsUser = &runtimeapi.Int64Value{Value: *sc.RunAsUser}
		}
		if sc.RunAsGroup != nil {
			lsc.RunAsGroup = &runtimeapi.Int64Value{Value: *sc.RunAsGroup}
		}
		lsc.SupplementalGroups = append(lsc.SupplementalGroups, sc.SupplementalGroups...)
		if sc.FSGroup != nil {
			lsc.SupplementalGroups = append(lsc.SupplementalGroups, *sc.FSGroup)
		}
		for _, s := range sc.Sysctls {
			if cfg.Linux.Sysctls == nil {
				cfg.Linux.Sysctls = map[string]string{}
			}
			cfg.Linux.Sysctls[s.Name] = s.Value
		}
	}
	return cfg, nil
}

// Hostname is the pod's hostname as upstream's GeneratePodHostNameAndDomain: spec.hostname or
// the pod name, truncated to 63 characters without a trailing '-' or '.'.
func Hostname(pod *v1.Pod) (string, error) {
	h := pod.Name
	if pod.Spec.Hostname != "" {
		h = pod.Spec.Hostname
	}
	if len(h) > 63 {
		h = strings.TrimRight(h[:63], "-.")
		if h == "" {
			return "", fmt.Errorf("hostname for pod %q was invalid after truncation", pod.Name)
		}
	}
	return h, nil
}

// NamespaceOptions maps hostNetwork, hostPID, hostIPC and shareProcessNamespace.
func NamespaceOptions(pod *v1.Pod) *runtimeapi.NamespaceOption {
	ns := &runtimeapi.NamespaceOption{
		Network: runtimeapi.NamespaceMode_POD,
		Pid:     runtimeapi.NamespaceMode_CONTAINER,
		Ipc:     runtimeapi.NamespaceMode_POD,
	}
	if pod.Spec.HostNetwork {
		ns.Network = runtimeapi.NamespaceMode_NODE
	}
	if pod.Spec.HostIPC {
		ns.Ipc = runtimeapi.NamespaceMode_NODE
	}
	switch {
	case pod.Spec.HostPID:
		ns.Pid = runtimeapi.NamespaceMode_NODE
	case pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace:
		ns.Pid = runtimeapi.NamespaceMode_POD
	}
	return ns
}

func anyPrivileged(pod *v1.Pod) bool {
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
				return true
			}
		}
	}
	return false
}

func protocol(p v1.Protocol) runtimeapi.Protocol {
	switch p {
	case v1.ProtocolUDP:
		return runtimeapi.Protocol_UDP
	case v1.ProtocolSCTP:
		return runtimeapi.Protocol_SCTP
	}
	return runtimeapi.Protocol_TCP
}
