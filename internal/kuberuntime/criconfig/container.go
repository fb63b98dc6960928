package criconfig

import (
	"encoding/json"
	"strconv"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
)

// ContainerOptions is what the container config needs beyond the pod and the container.
type ContainerOptions struct {
	RestartCount int
	Identity     PodIdentity
	QOS          v1.PodQOSClass
	// MemoryCapacity is the node's memory in bytes, for the OOM score of burstable pods.
	MemoryCapacity int64
	// OOMGroup sets memory.oom.group on the container's cgroup (see Resources).
	OOMGroup bool
	// Mounts are the resolved mounts: volumes, /etc/hosts, the termination message file.
	Mounts []*runtimeapi.Mount
	// TargetID is the runtime ID of the container whose process namespace an ephemeral
	// container shares (targetContainerName); empty for none.
	TargetID string
	// Seccomp is the node's seccomp settings (seccompDefault, the Localhost profiles' root).
	Seccomp Seccomp
	// AppArmor is the container's AppArmor profile (admission.AppArmorProfile), nil for none.
	AppArmor *v1.AppArmorProfile
	// HostMaskedPaths are masked in the container besides DefaultMaskedPaths: the host's
	// per-CPU thermal_throttle directories, which upstream masks too (see ProcPaths).
	HostMaskedPaths []string
}

// ContainerLabels identify the container's pod and name.
func ContainerLabels(pod *v1.Pod, name string) map[string]string {
	return map[string]string{
		container.PodNameLabel:       pod.Name,
		container.PodNamespaceLabel:  pod.Namespace,
		container.PodUIDLabel:        string(pod.UID),
		container.ContainerNameLabel: name,
	}
}

// ContainerAnnotations carry what upstream's newContainerAnnotations carries: the spec hash,
// the restart count, termination settings, the preStop handler and ports, and the pod's grace
// periods, so a restarted nodelet knows all it needs from the runtime alone.
func ContainerAnnotations(pod *v1.Pod, c *v1.Container, restartCount int) map[string]string {
	a := map[string]string{
		container.ContainerHashAnnotation:                     strconv.FormatUint(container.HashContainer(c), 16),
		container.ContainerRestartCountAnnotation:             strconv.Itoa(restartCount),
		container.ContainerTerminationMessagePathAnnotation:   c.TerminationMessagePath,
		container.ContainerTerminationMessagePolicyAnnotation: string(c.TerminationMessagePolicy),
	}
	if pod.DeletionGracePeriodSeconds != nil {
		a[container.PodDeletionGracePeriodAnnotation] = strconv.FormatInt(*pod.DeletionGracePeriodSeconds, 10)
	}
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		a[container.PodTerminationGracePeriodAnnotation] = strconv.FormatInt(*pod.Spec.TerminationGracePeriodSeconds, 10)
	}
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
		if js, err := json.Marshal(c.Lifecycle.PreStop); err == nil {
			a[container.ContainerPreStopHandlerAnnotation] = string(js)
		}
	}
	if len(c.Ports) > 0 {
		if js, err := json.Marshal(c.Ports); err == nil {
			a[container.ContainerPortsAnnotation] = string(js)
		}
	}
	return a
}

// Container builds the ContainerConfig as upstream's generateContainerConfig.
func Container(pod *v1.Pod, c *v1.Container, o ContainerOptions) (*runtimeapi.ContainerConfig, error) {
	env, err := Env(pod, c, o.Identity)
	if err != nil {
		return nil, err // upstream's message, as the status shows it
	}
	lookup := EnvMap(env)
	expand := func(in []string) []string {
		if in == nil {
			return nil
		}
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = Expand(s, lookup)
		}
		return out
	}
	sc := Security(pod, c, o.HostMaskedPaths)
	if sc.Seccomp, err = SeccompProfile(pod, c, o.Seccomp); err != nil {
		return nil, err
	}
	if sc.Apparmor, sc.ApparmorProfile, err = AppArmorProfile(o.AppArmor); err != nil {
		return nil, err
	}
	// As upstream's generateLinuxContainerConfig: an ephemeral container with a target joins the
	// target's process namespace, unless the pod shares one namespace among all its containers.
	if o.TargetID != "" && sc.NamespaceOptions.GetPid() == runtimeapi.NamespaceMode_CONTAINER {
		sc.NamespaceOptions.Pid = runtimeapi.NamespaceMode_TARGET
		sc.NamespaceOptions.TargetId = o.TargetID
	}
	return &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: uint32(o.RestartCount)},
		Image:       &runtimeapi.ImageSpec{Image: c.Image, UserSpecifiedImage: c.Image},
		Command:     expand(c.Command),
		Args:        expand(c.Args),
		WorkingDir:  c.WorkingDir,
		Envs:        env,
		Mounts:      o.Mounts,
		Labels:      ContainerLabels(pod, c.Name),
		Annotations: ContainerAnnotations(pod, c, o.RestartCount),
		LogPath:     ContainerLogPath(c.Name, o.RestartCount),
		Stdin:       c.Stdin,
		StdinOnce:   c.StdinOnce,
		Tty:         c.TTY,
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources:       Resources(o.QOS, c, o.MemoryCapacity, o.OOMGroup),
			SecurityContext: sc,
		},
	}, nil
}
