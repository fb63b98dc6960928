package podfields

// controlPlaneTest shows that admission lets the control plane's fields through.
const controlPlaneTest = "TestChecksAdmitControlPlaneFields"

// podFields are the pod spec's own fields (containers, volumes and the security context apart).
func podFields() []Field {
	return []Field{
		honoured("spec.initContainers", "TestInitContainersAndSidecar",
			"run one at a time, in order, before the app; restartPolicy Always makes a sidecar that starts before and stops after the app. Their fields are spec.containers[]'s."),
		honoured("spec.restartPolicy", "TestRestartPolicies", "Always, OnFailure, Never, with upstream's CrashLoopBackOff timings (TestCrashLoopBackOff)."),
		honoured("spec.terminationGracePeriodSeconds", "TestDeleteManifestTerminatesWithGrace", "SIGTERM, then SIGKILL when the grace period ends; preStop hooks run within it."),
		honoured("spec.activeDeadlineSeconds", "TestPastActiveDeadline", "past the deadline the pod is Failed with reason DeadlineExceeded and its containers are stopped."),
		honoured("spec.dnsPolicy", "TestDNSConfig", "ClusterFirst, ClusterFirstWithHostNet, Default and None give upstream's resolv.conf (clusterDNS, clusterDomain, resolvConf)."),
		honoured("spec.nodeSelector", "TestAdmit", "checked at admission against the node's labels (NodeAffinity), as upstream."),
		honoured("spec.serviceAccountName", "TestClusterConfigMapSecretTokenDownwardVolumes",
			"its tokens (TokenRequest, bound to the pod) fill projected volumes; static pods may not name one (upstream's rule)."),
		honoured("spec.serviceAccount", "TestValidate", "the deprecated alias of serviceAccountName, copied to it as the API server's defaults do."),
		controlPlane("spec.automountServiceAccountToken", "API server", controlPlaneTest,
			"the ServiceAccount admission plugin adds the token volume, or not; nodelet mounts the volumes the pod has."),
		honoured("spec.nodeName", "TestAdmit", "a pod for another node is refused (NodeName); cluster mode watches the pods with spec.nodeName=<node>."),
		honoured("spec.hostNetwork", "TestSyncPodHostNetwork", "the node's network namespace, no hostname of its own; the sandbox is recreated if it changes."),
		honoured("spec.hostPID", "TestSandbox", "the node's PID namespace."),
		honoured("spec.hostIPC", "TestSandbox", "the node's IPC namespace."),
		honoured("spec.shareProcessNamespace", "TestSandbox", "one PID namespace for all the pod's containers."),
		honoured("spec.imagePullSecrets", "TestClusterImagePullSecrets", "docker config secrets, matched to each image's registry as upstream; static pods may not use them."),
		honoured("spec.hostname", "TestSandbox", "the pod's hostname (truncated to 63 characters, as upstream), also in the managed /etc/hosts."),
		honoured("spec.subdomain", "TestHostnameAndDomain", "the pod's FQDN <hostname>.<subdomain>.<namespace>.svc.<clusterDomain> in the managed /etc/hosts."),
		honoured("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution", "TestAdmit", "checked at admission (NodeAffinity), as upstream."),
		controlPlane("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution", "scheduler", controlPlaneTest, "a preference for the scheduler."),
		controlPlane("spec.affinity.podAffinity", "scheduler", controlPlaneTest, "the kubelet does not check inter-pod affinity."),
		controlPlane("spec.affinity.podAntiAffinity", "scheduler", controlPlaneTest, "the kubelet does not check inter-pod anti-affinity."),
		controlPlane("spec.schedulerName", "scheduler", controlPlaneTest, ""),
		honoured("spec.tolerations", "TestAdmit",
			"the node's NoExecute taints must be tolerated at admission (static pods excepted), as upstream; the other effects are the scheduler's, tolerationSeconds the taint-eviction controller's."),
		honoured("spec.hostAliases", "TestHostsFileContent", "added to the managed /etc/hosts."),
		controlPlane("spec.priorityClassName", "API server", controlPlaneTest, "the Priority admission plugin turns it into spec.priority."),
		controlPlane("spec.priority", "scheduler", controlPlaneTest,
			"the scheduler preempts by it. The eviction manager ranks pods by it under pressure (TestRankMemoryPressure) and never evicts system-critical ones; upstream's kubelet also preempts pods to make room for critical pods, nodelet does not yet."),
		honoured("spec.dnsConfig.nameservers", "TestDNSConfig", "merged into the dnsPolicy's resolv.conf, as upstream."),
		honoured("spec.dnsConfig.searches", "TestDNSConfig", "merged into the dnsPolicy's resolv.conf, as upstream."),
		honoured("spec.dnsConfig.options", "TestDNSConfig", "merged into the dnsPolicy's resolv.conf, a pod's option overriding the same one."),
		honoured("spec.readinessGates", "TestGenerateMoreCases", "Ready waits for each gate's condition, with upstream's reason ReadinessGatesNotReady."),
		partly("spec.runtimeClassName", "TestClusterRuntimeClass", "standalone mode: `UnsupportedPodSpec` (no API server holds RuntimeClasses)",
			"cluster mode: the sandbox runs with the class's handler (CRI runtime_handler), as upstream; an unknown class or handler fails the sandbox with FailedCreatePodSandBox."),
		honoured("spec.enableServiceLinks", "TestClusterServiceEnvironmentVariables", "the namespace's service variables, as upstream's getServiceEnvVarMap."),
		controlPlane("spec.preemptionPolicy", "scheduler", controlPlaneTest, ""),
		honoured("spec.overhead", "TestSandboxResourcesAndOverhead",
			"counted at admission and in a memory emptyDir's size, sent in the sandbox's CRI overhead and resources as upstream. Upstream also adds it to the pod cgroup's limits; nodelet sets no pod cgroup limits for any pod yet."),
		controlPlane("spec.topologySpreadConstraints", "scheduler", controlPlaneTest, ""),
		partly("spec.setHostnameAsFQDN", "TestUnsupported", Unsupported, "false, or true without a subdomain or on the host network, changes nothing, as upstream."),
		honoured("spec.os.name", "TestAdmit", "linux runs; another OS is refused with upstream's reason PodOSNotSupported."),
		partly("spec.hostUsers", "TestUserNamespaces", Unsupported, "true or unset: the host's user namespace. On a runtime whose "+
			"handler reports no user-namespace support (CRI RuntimeStatus), false is refused in upstream's words: "+
			"`can't set spec.hostUsers: false, runtime does not support user namespaces`."),
		controlPlane("spec.schedulingGates", "scheduler", controlPlaneTest, "a gated pod is not bound to a node."),
		refused("spec.resourceClaims", Unsupported, "static pods may not reference resource claims (upstream's rule)."),
		partly("spec.resources", "TestQOSClass", Unsupported,
			"pod-level requests count at admission (TestAdmit) and decide the QoS class; its fields are spec.containers[].resources'."),
		refused("spec.hostnameOverride", Unsupported, ""),
		controlPlane("spec.schedulingGroup", "scheduler", controlPlaneTest, "group scheduling (GenericWorkload, beta, off by default)."),
		controlPlane("spec.evictionResponders", "controllers", controlPlaneTest, "who handles the pod's eviction requests (EvictionRequestAPI, alpha)."),
	}
}

// securityFields are the pod's security context.
func securityFields() []Field {
	return []Field{
		honoured("spec.securityContext.seLinuxOptions", "TestSecurity",
			"given to the runtime for each container (the container's own win). nodelet does not relabel volumes: it targets hosts without SELinux."),
		honoured("spec.securityContext.windowsOptions", "TestSecurity", "Windows only: a Linux node ignores it, as upstream."),
		honoured("spec.securityContext.runAsUser", "TestContainerConfig", "the user of every container without its own, and of the sandbox."),
		honoured("spec.securityContext.runAsGroup", "TestSecurity", "the group of every container without its own, and of the sandbox."),
		honoured("spec.securityContext.runAsNonRoot", "TestRunAsNonRoot", "checked against the image's user before start, with upstream's CreateContainerConfigError messages."),
		honoured("spec.securityContext.supplementalGroups", "TestSecurity", "supplemental groups of every container and of the sandbox."),
		partly("spec.securityContext.supplementalGroupsPolicy", "TestSetRuntimeFeatures",
			"Strict on a runtime that does not report the feature (CRI RuntimeStatus, e.g. containerd 1.x): upstream's reason SupplementalGroupsPolicyNotSupported",
			"Merge (the default) merges the image's groups; Strict goes to the runtime, which then uses the pod's groups alone; "+
				"the node declares status.features.supplementalGroupsPolicy from the runtime's answer, as upstream."),
		honoured("spec.securityContext.fsGroup", "TestEmptyDirFSGroup",
			"a supplemental group of every container; the volumes nodelet creates or writes are given to it (setgid), as upstream."),
		honoured("spec.securityContext.sysctls", "TestSysctlsAndAppArmorAdmission",
			"set in the sandbox; a sysctl outside upstream's safe set and allowedUnsafeSysctls is refused with upstream's reason SysctlForbidden."),
		honoured("spec.securityContext.fsGroupChangePolicy", "TestEmptyDirFSGroup",
			"OnRootMismatch and Always come to the same: nodelet only gives fsGroup to volumes it has just created or written."),
		honoured("spec.securityContext.seccompProfile", "TestSeccompProfiles", "RuntimeDefault, Unconfined and Localhost (under <root-dir>/seccomp), with seccompDefault, as upstream."),
		honoured("spec.securityContext.appArmorProfile", "TestSysctlsAndAppArmorAdmission",
			"given to the runtime where the host enforces AppArmor; elsewhere a profile other than Unconfined is refused with upstream's reason AppArmor."),
		honoured("spec.securityContext.seLinuxChangePolicy", controlPlaneTest,
			"how upstream relabels volumes on SELinux hosts: nothing to do on hosts without SELinux, which nodelet targets."),
	}
}
