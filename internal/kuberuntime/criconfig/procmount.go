package criconfig

import v1 "k8s.io/api/core/v1"

// DefaultMaskedPaths are the paths upstream masks in every container whose procMount is
// Default (pkg/securitycontext, kept in sync with moby): the runtime mounts nothing over them
// otherwise, and containerd, unlike Docker, masks nothing by itself.
func DefaultMaskedPaths() []string {
	return []string{
		"/proc/asound",
		"/proc/acpi",
		"/proc/interrupts",
		"/proc/kcore",
		"/proc/keys",
		"/proc/latency_stats",
		"/proc/timer_list",
		"/proc/timer_stats",
		"/proc/sched_debug",
		"/proc/scsi",
		"/sys/firmware",
		"/sys/devices/virtual/powercap",
	}
}

// DefaultReadonlyPaths are the paths upstream makes read-only in every container whose
// procMount is Default.
func DefaultReadonlyPaths() []string {
	return []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
}

// ProcPaths are the container's masked and read-only paths for its procMount, as upstream's
// ConvertToRuntimeMaskedPaths and ConvertToRuntimeReadonlyPaths: the defaults, with hostMasked
// (the host's per-CPU thermal_throttle directories, which upstream masks too), unless procMount
// is Unmasked, which gets none (admission refuses Unmasked: it needs user namespaces). Empty
// slices, not nil, so the runtime applies exactly these; containerd drops them for privileged
// containers.
func ProcPaths(procMount *v1.ProcMountType, hostMasked []string) (masked, readonly []string) {
	if procMount != nil && *procMount == v1.UnmaskedProcMount {
		return []string{}, []string{}
	}
	return append(DefaultMaskedPaths(), hostMasked...), DefaultReadonlyPaths()
}
