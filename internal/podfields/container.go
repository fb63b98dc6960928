package podfields

// containerFields are the fields of spec.containers[], which are also spec.initContainers[]'s
// (probes and lifecycle apart, the API server's validation has those on sidecars only).
func containerFields() []Field {
	return []Field{
		honoured("spec.containers[].name", "TestStaticPodRuns", ""),
		honoured("spec.containers[].image", "TestStaticPodRuns", "pulled by the runtime with the pod's pull secrets; ErrImagePull, then ImagePullBackOff."),
		honoured("spec.containers[].command", "TestContainerConfig", "with upstream's $(VAR) expansion."),
		honoured("spec.containers[].args", "TestContainerConfig", "with upstream's $(VAR) expansion."),
		honoured("spec.containers[].workingDir", "TestContainerAndSandboxPassThrough", ""),
		honoured("spec.containers[].ports[].name", "TestProbeKinds", "probes and hooks may name a port."),
		honoured("spec.containers[].ports[].hostPort", "TestStaticPodRuns", "a port mapping of the sandbox; conflicts are refused at admission (NodePorts), as upstream."),
		honoured("spec.containers[].ports[].containerPort", "TestStaticPodRuns", ""),
		honoured("spec.containers[].ports[].protocol", "TestContainerAndSandboxPassThrough", "TCP, UDP or SCTP host port mappings."),
		honoured("spec.containers[].ports[].hostIP", "TestContainerAndSandboxPassThrough", "the host port mapping's address."),
		honoured("spec.containers[].envFrom[].prefix", "TestEnvFromAPIObjects", ""),
		honoured("spec.containers[].envFrom[].configMapRef", "TestEnvFromAPIObjects", "cluster mode; a missing object is CreateContainerConfigError until it exists, as upstream."),
		honoured("spec.containers[].envFrom[].secretRef", "TestEnvFromAPIObjects", "cluster mode; a missing object is CreateContainerConfigError until it exists, as upstream."),
		honoured("spec.containers[].env[].name", "TestContainerConfig", ""),
		honoured("spec.containers[].env[].value", "TestContainerConfig", "with upstream's $(VAR) expansion, service variables included."),
		honoured("spec.containers[].env[].valueFrom.fieldRef", "TestStaticPodRuns", "the downward API's pod and node fields, as upstream."),
		honoured("spec.containers[].env[].valueFrom.resourceFieldRef", "TestContainerConfig", "limits and requests, the node's allocatable for a limit not set, as upstream."),
		honoured("spec.containers[].env[].valueFrom.configMapKeyRef", "TestEnvFromAPIObjects", "cluster mode."),
		honoured("spec.containers[].env[].valueFrom.secretKeyRef", "TestClusterMissingSecretThenCreated", "cluster mode."),
		refused("spec.containers[].env[].valueFrom.fileKeyRef", Unsupported, ""),
		partly("spec.containers[].resources.limits", "TestResources", Unsupported,
			"cpu and memory become the container's CFS quota and memory limit (OOMKilled beyond it), resized in place through the resize subresource (TestClusterInPlaceResize); ephemeral-storage: a container writing beyond it is evicted (TestClusterLocalStorageEviction); extended resources as upstream."),
		honoured("spec.containers[].resources.requests", "TestResources",
			"admission (OutOfcpu...), the QoS class, cpu.shares and the OOM score, as upstream; the Burstable QoS cgroup's cpu shares are its pods' requests, the BestEffort one's 2, and each pod's cgroup gets its shares and, when declared, its limits (TestQoSCgroups), as upstream's cgroup manager."),
		refused("spec.containers[].resources.claims", Unsupported, ""),
		honoured("spec.containers[].resizePolicy", "TestClusterInPlaceResize",
			"a resize of cpu or memory updates the running container (CRI UpdateContainerResources) with NotRequired, restarts it with RestartContainer, as upstream; the pod's cgroup grows before its containers and shrinks after them."),
		partly("spec.containers[].restartPolicy", "TestInitContainersAndSidecar",
			"static pods only: the manifest is rejected unless it is Always on an init container (\"spec.containers[0].restartPolicy: Forbidden: only init containers may set restartPolicy\"); upstream v1.37 also accepts OnFailure and Never, on app containers too",
			"Always makes an init container a sidecar; otherwise it overrides the pod's policy for the container (TestContainerShouldRestartRules)."),
		partly("spec.containers[].restartPolicyRules", "TestContainerShouldRestartRules", Unsupported, "the action Restart on exit codes, as upstream."),
		honoured("spec.containers[].volumeMounts[].name", "TestVolumes", ""),
		honoured("spec.containers[].volumeMounts[].readOnly", "TestVolumes", ""),
		honoured("spec.containers[].volumeMounts[].recursiveReadOnly", "TestMountsRecursiveReadOnly", "Enabled and IfPossible as the runtime handler supports them, as upstream."),
		honoured("spec.containers[].volumeMounts[].mountPath", "TestVolumes", ""),
		honoured("spec.containers[].volumeMounts[].subPath", "TestImageVolume", "symlinks must stay inside the volume."),
		honoured("spec.containers[].volumeMounts[].mountPropagation", "TestMountsReadOnlyAndPropagation", "None, HostToContainer and Bidirectional, as upstream."),
		honoured("spec.containers[].volumeMounts[].subPathExpr", "TestMountsSubPathExpr", "expanded from the container's environment."),
		refused("spec.containers[].volumeMounts[].bindMountOptions", Unsupported, ""),
		refused("spec.containers[].volumeDevices", Unsupported, ""),
		honoured("spec.containers[].lifecycle.postStart.exec", "TestLifecycleHooks", "a failed postStart kills the container (PostStartHookError), as upstream."),
		honoured("spec.containers[].lifecycle.postStart.httpGet", "TestRunHTTPGet", "as upstream's hooks: same-host redirects, no TLS verification."),
		honoured("spec.containers[].lifecycle.postStart.tcpSocket", "TestRunInvalidHandlers",
			"deprecated and never supported as a hook: the hook fails, as upstream."),
		honoured("spec.containers[].lifecycle.postStart.sleep", "TestPreStopSleep", "bounded by the grace period in preStop."),
		honoured("spec.containers[].lifecycle.preStop", "TestLifecycleHooks", "runs before SIGTERM, within the grace period; its handlers are postStart's."),
		refused("spec.containers[].lifecycle.stopSignal", Unsupported, "containers stop with their image's stop signal."),
		honoured("spec.containers[].terminationMessagePath", "TestMountsTerminationMessage", "a file per container instance, read into the terminated state's message."),
		honoured("spec.containers[].terminationMessagePolicy", "TestFallbackToLogsOnError", "File, and FallbackToLogsOnError with upstream's bounds."),
		honoured("spec.containers[].imagePullPolicy", "TestImagePullPolicies", "Always, IfNotPresent, Never (ErrImageNeverPull)."),
		honoured("spec.containers[].securityContext.capabilities", "TestContainerConfig", ""),
		honoured("spec.containers[].securityContext.privileged", "TestSecurity", "the sandbox is privileged too, as upstream."),
		honoured("spec.containers[].securityContext.seLinuxOptions", "TestSecurity", "given to the runtime."),
		honoured("spec.containers[].securityContext.windowsOptions", "TestSecurity", "Windows only: a Linux node ignores it, as upstream."),
		honoured("spec.containers[].securityContext.runAsUser", "TestSecurity", ""),
		honoured("spec.containers[].securityContext.runAsGroup", "TestSecurity", ""),
		honoured("spec.containers[].securityContext.runAsNonRoot", "TestRunAsNonRoot", "checked against the image's user, with upstream's messages."),
		honoured("spec.containers[].securityContext.readOnlyRootFilesystem", "TestContainerConfig", ""),
		honoured("spec.containers[].securityContext.allowPrivilegeEscalation", "TestContainerConfig", "false sets no_new_privs, as upstream."),
		partly("spec.containers[].securityContext.procMount", "TestSecurity", Unsupported,
			"Default (or unset) masks upstream's /proc and /sys paths and makes /proc/sys and others read-only."),
		honoured("spec.containers[].securityContext.seccompProfile", "TestSeccompProfiles", "over the pod's, as upstream."),
		honoured("spec.containers[].securityContext.appArmorProfile", "TestSysctlsAndAppArmorAdmission", "over the pod's, as upstream."),
		honoured("spec.containers[].stdin", "TestClusterKubectlExecAttachPortForward", "kubectl attach writes to it."),
		honoured("spec.containers[].stdinOnce", "TestContainerAndSandboxPassThrough", ""),
		honoured("spec.containers[].tty", "TestContainerAndSandboxPassThrough", ""),
	}
}

// probeFields are a probe's fields: spec.containers[].livenessProbe's, which readinessProbe and
// startupProbe share.
func probeFields() []Field {
	return []Field{
		honoured("spec.containers[].livenessProbe.exec", "TestProbeKinds", "run through the runtime, with the probe's timeout."),
		honoured("spec.containers[].livenessProbe.httpGet.path", "TestNewRequest", ""),
		honoured("spec.containers[].livenessProbe.httpGet.port", "TestNewRequest", "a number or a port's name."),
		honoured("spec.containers[].livenessProbe.httpGet.host", "TestNewRequest", "the pod's IP when unset."),
		honoured("spec.containers[].livenessProbe.httpGet.scheme", "TestNewRequest", "HTTPS does not verify the certificate, as upstream."),
		honoured("spec.containers[].livenessProbe.httpGet.httpHeaders", "TestNewRequest", "a Host header sets the request's host, as upstream."),
		refused("spec.containers[].livenessProbe.httpGet.protocol", Unsupported, "also in postStart and preStop hooks."),
		honoured("spec.containers[].livenessProbe.tcpSocket.port", "TestTCPProbe", ""),
		honoured("spec.containers[].livenessProbe.tcpSocket.host", "TestTCPProbe", "the pod's IP when unset."),
		honoured("spec.containers[].livenessProbe.grpc.port", "TestGRPCProbe", "grpc.health.v1."),
		honoured("spec.containers[].livenessProbe.grpc.service", "TestGRPCProbe", ""),
		refused("spec.containers[].livenessProbe.grpc.mode", Unsupported, ""),
		honoured("spec.containers[].livenessProbe.initialDelaySeconds", "TestInitialDelayAndJitter", "with upstream's jitter of the first run."),
		honoured("spec.containers[].livenessProbe.timeoutSeconds", "TestExecProbe", ""),
		honoured("spec.containers[].livenessProbe.periodSeconds", "TestLivenessRestarts", ""),
		honoured("spec.containers[].livenessProbe.successThreshold", "TestReadinessSuccessThreshold", ""),
		honoured("spec.containers[].livenessProbe.failureThreshold", "TestLivenessRestarts", ""),
		honoured("spec.containers[].livenessProbe.terminationGracePeriodSeconds", "TestLivenessKillUsesProbeGracePeriod", "the kill after a failed liveness or startup probe."),
		honoured("spec.containers[].readinessProbe", "TestReadinessFlips", "drives the Ready and ContainersReady conditions; its fields are livenessProbe's."),
		honoured("spec.containers[].startupProbe", "TestStartupProbeGatesLiveness", "holds liveness and readiness off until it succeeds; its fields are livenessProbe's."),
	}
}

// ephemeralFields are the fields of spec.ephemeralContainers[] (kubectl debug), which only the
// API server's subresource adds: static pods may not have any.
func ephemeralFields() []Field {
	const (
		debug     = "TestClusterKubectlDebugTarget"
		sameCode  = "TestSyncPodStartsEphemeralContainerOnceInTheTargetsPIDNamespace"
		forbidden = "refused by the API server: upstream's validation says \"cannot be set for an Ephemeral Container\""
		asMain    = "as spec.containers[]'s, by the same code."
	)
	return []Field{
		honoured("spec.ephemeralContainers[].name", debug, ""),
		honoured("spec.ephemeralContainers[].image", debug, asMain),
		honoured("spec.ephemeralContainers[].command", debug, asMain),
		honoured("spec.ephemeralContainers[].args", debug, asMain),
		honoured("spec.ephemeralContainers[].workingDir", sameCode, asMain),
		refused("spec.ephemeralContainers[].ports", forbidden, ""),
		honoured("spec.ephemeralContainers[].envFrom", sameCode, asMain),
		honoured("spec.ephemeralContainers[].env", sameCode, asMain),
		refused("spec.ephemeralContainers[].resources", forbidden, ""),
		refused("spec.ephemeralContainers[].resizePolicy", forbidden, ""),
		refused("spec.ephemeralContainers[].restartPolicy", forbidden, "an ephemeral container is never restarted."),
		refused("spec.ephemeralContainers[].restartPolicyRules", forbidden, ""),
		honoured("spec.ephemeralContainers[].volumeMounts", sameCode, "as spec.containers[]'s, by the same code; the API server forbids subPath here."),
		refused("spec.ephemeralContainers[].volumeDevices", Unsupported, ""),
		refused("spec.ephemeralContainers[].livenessProbe", forbidden, ""),
		refused("spec.ephemeralContainers[].readinessProbe", forbidden, ""),
		refused("spec.ephemeralContainers[].startupProbe", forbidden, ""),
		refused("spec.ephemeralContainers[].lifecycle", forbidden, ""),
		honoured("spec.ephemeralContainers[].terminationMessagePath", sameCode, asMain),
		honoured("spec.ephemeralContainers[].terminationMessagePolicy", sameCode, asMain),
		honoured("spec.ephemeralContainers[].imagePullPolicy", debug, asMain),
		honoured("spec.ephemeralContainers[].securityContext", sameCode, asMain),
		honoured("spec.ephemeralContainers[].stdin", debug, "kubectl attach writes to it."),
		honoured("spec.ephemeralContainers[].stdinOnce", sameCode, asMain),
		honoured("spec.ephemeralContainers[].tty", sameCode, asMain),
		honoured("spec.ephemeralContainers[].targetContainerName", debug, "the ephemeral container joins the target's process namespace."),
	}
}
