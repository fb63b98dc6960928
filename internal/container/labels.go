package container

import (
	kubelettypes "k8s.io/kubelet/pkg/types"
)

// The labels and annotations the upstream kubelet puts on CRI sandboxes and containers; nodelet
// sets the same ones, so that the runtime alone says which pod and container each object is.
const (
	PodNameLabel       = kubelettypes.KubernetesPodNameLabel       // io.kubernetes.pod.name
	PodNamespaceLabel  = kubelettypes.KubernetesPodNamespaceLabel  // io.kubernetes.pod.namespace
	PodUIDLabel        = kubelettypes.KubernetesPodUIDLabel        // io.kubernetes.pod.uid
	ContainerNameLabel = kubelettypes.KubernetesContainerNameLabel // io.kubernetes.container.name
	// ManagedLabel marks sandboxes created by the kubelet (value "true").
	ManagedLabel = "io.kubernetes.container.managed"

	PodDeletionGracePeriodAnnotation            = "io.kubernetes.pod.deletionGracePeriod"
	PodTerminationGracePeriodAnnotation         = "io.kubernetes.pod.terminationGracePeriod"
	ContainerHashAnnotation                     = "io.kubernetes.container.hash"
	ContainerRestartCountAnnotation             = "io.kubernetes.container.restartCount"
	ContainerTerminationMessagePathAnnotation   = "io.kubernetes.container.terminationMessagePath"
	ContainerTerminationMessagePolicyAnnotation = "io.kubernetes.container.terminationMessagePolicy"
	ContainerPreStopHandlerAnnotation           = "io.kubernetes.container.preStopHandler"
	ContainerPortsAnnotation                    = "io.kubernetes.container.ports"
)
