package kubeletconfig

import (
	"strings"
	"testing"
)

func TestValidateFileValues(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string // "" means valid
	}{
		{"readOnlyPort too large", "readOnlyPort: 70000", "readOnlyPort: Invalid value: 70000: must be between 0 and 65535"},
		{"readOnlyPort negative", "readOnlyPort: -1", "readOnlyPort: Invalid value: -1"},
		{"readOnlyPort zero disables", "readOnlyPort: 0", ""},
		{"port too large", "port: 65536", "port: Invalid value: 65536: must be between 1 and 65535"},
		{"negative fileCheckFrequency", "fileCheckFrequency: -20s", `fileCheckFrequency: Invalid value: "-20s": must be greater than 0`},
		{"negative httpCheckFrequency", "httpCheckFrequency: -1m", `httpCheckFrequency: Invalid value: "-1m0s"`},
		{"negative syncFrequency", "syncFrequency: -1s", `syncFrequency: Invalid value: "-1s"`},
		{"negative nodeStatusUpdateFrequency", "nodeStatusUpdateFrequency: -10s", `nodeStatusUpdateFrequency: Invalid value: "-10s"`},
		{"negative nodeStatusReportFrequency", "nodeStatusReportFrequency: -1s", `nodeStatusReportFrequency: Invalid value: "-1s"`},
		{"negative runtimeRequestTimeout", "runtimeRequestTimeout: -1s", `runtimeRequestTimeout: Invalid value: "-1s"`},
		{"negative nodeLeaseDurationSeconds", "nodeLeaseDurationSeconds: -40", "nodeLeaseDurationSeconds: Invalid value: -40: must be greater than 0"},
		{"negative maxPods", "maxPods: -1", "maxPods: Invalid value: -1: must not be negative"},
		{"zero maxPods defaults", "maxPods: 0", ""},
		{"address not an IP", "address: localhost", `address: Invalid value: "localhost": must be a valid IP address`},
		{"IPv6 address", `address: "::"`, ""},
		{"runtime endpoint bare path", "containerRuntimeEndpoint: /run/containerd/containerd.sock", ""},
		{"runtime endpoint unix:/path", "containerRuntimeEndpoint: unix:/run/crio/crio.sock", ""},
		{"runtime endpoint relative path", "containerRuntimeEndpoint: run/x.sock", `containerRuntimeEndpoint: Invalid value: "run/x.sock": must be a unix:// URL or an absolute path`},
		{"runtime endpoint with host", "containerRuntimeEndpoint: unix://run/x.sock", "containerRuntimeEndpoint: Invalid value: \"unix://run/x.sock\": must be unix:// followed by an absolute socket path"},
		{"runtime endpoint npipe", "containerRuntimeEndpoint: npipe:////./pipe/containerd", `scheme "npipe" is not supported`},
		{"staticPodURL without scheme", "staticPodURL: example.com/pods", `staticPodURL: Invalid value: "example.com/pods": must be an absolute http:// or https:// URL`},
		{"staticPodURL http", "staticPodURL: http://10.0.0.1:8080/pods", ""},
		{"header name with space", "staticPodURLHeader:\n  'X Bad': [a]", `staticPodURLHeader[X Bad]: Invalid value: "X Bad": must be a valid HTTP header name`},
		{"header value with newline", "staticPodURLHeader:\n  X-Ok: [\"a\", \"b\\nc\"]", `staticPodURLHeader[X-Ok][1]: Invalid value: "b\nc": must be a valid HTTP header value`},
		{"several errors, all reported", "port: 70000\nmaxPods: -3\n", "[maxPods: Invalid value: -3: must not be negative, port: Invalid value: 70000: must be between 1 and 65535]"},
		{"imageGCHighThresholdPercent over 100", "imageGCHighThresholdPercent: 101", "imageGCHighThresholdPercent: Invalid value: 101: must be between 0 and 100, inclusive"},
		{"imageGCLowThresholdPercent negative", "imageGCLowThresholdPercent: -1", "imageGCLowThresholdPercent: Invalid value: -1: must be between 0 and 100, inclusive"},
		{"imageGCLowThresholdPercent not below high", "imageGCHighThresholdPercent: 70\nimageGCLowThresholdPercent: 70", "imageGCLowThresholdPercent: Invalid value: 70: must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) 70"},
		{"imageMaximumGCAge under the minimum", "imageMinimumGCAge: 10m\nimageMaximumGCAge: 5m", `imageMaximumGCAge: Invalid value: "5m0s": must be greater than imageMinimumGCAge 10m0s`},
		{"imageMaximumGCAge negative", "imageMaximumGCAge: -1s", `imageMaximumGCAge: Invalid value: "-1s": must not be negative`},
		{"image GC disabled, and by age", "imageGCHighThresholdPercent: 100\nimageGCLowThresholdPercent: 0\nimageMaximumGCAge: 1h", ""},
		{"evictionHard unknown signal", "evictionHard:\n  memory.free: 1Gi", `evictionHard: Invalid value: unsupported eviction signal "memory.free"`},
		{"evictionHard negative", "evictionHard:\n  memory.available: -1Gi", "evictionHard[memory.available]: Invalid value: eviction threshold must be positive: -1Gi"},
		{"evictionHard over 100%", "evictionHard:\n  nodefs.available: 101%", "evictionHard[nodefs.available]: Invalid value: eviction percentage threshold must be <= 100%: 101%"},
		{"evictionHard not a quantity", "evictionHard:\n  nodefs.available: lots", `evictionHard[nodefs.available]: Invalid value: "lots" is neither a quantity nor a percentage`},
		{"evictionSoft without grace period", "evictionSoft:\n  memory.available: 1Gi", "evictionSoftGracePeriod: Invalid value: grace period must be specified for the soft eviction threshold memory.available"},
		{"evictionSoftGracePeriod negative", "evictionSoft:\n  memory.available: 1Gi\nevictionSoftGracePeriod:\n  memory.available: -1s", "evictionSoftGracePeriod[memory.available]: Invalid value: invalid eviction grace period -1s"},
		{"evictionMinimumReclaim unknown signal", "evictionMinimumReclaim:\n  disk.available: 1Gi", `evictionMinimumReclaim: Invalid value: unsupported eviction signal "disk.available"`},
		{"evictionMinimumReclaim negative", "evictionMinimumReclaim:\n  nodefs.available: -1Gi", "evictionMinimumReclaim[nodefs.available]: Invalid value: negative eviction minimum reclaim -1Gi"},
		{"evictionPressureTransitionPeriod negative", "evictionPressureTransitionPeriod: -1s", `evictionPressureTransitionPeriod: Invalid value: "-1s": must not be negative`},
		{"evictionMaxPodGracePeriod negative", "evictionMaxPodGracePeriod: -1", "evictionMaxPodGracePeriod: Invalid value: -1: must not be negative"},
		{"eviction thresholds valid", "evictionHard:\n  memory.available: 5%\n  pid.available: \"100\"\nevictionSoft:\n  nodefs.available: 15%\nevictionSoftGracePeriod:\n  nodefs.available: 1m\nevictionMinimumReclaim:\n  nodefs.available: 1Gi", ""},
		{"shutdown budgets", "shutdownGracePeriod: 30s\nshutdownGracePeriodCriticalPods: 10s", ""},
		{"shutdownGracePeriod under a second", "shutdownGracePeriod: 500ms", `shutdownGracePeriod: Invalid value: "500ms": must be either zero or otherwise >= 1 sec`},
		{"critical pods' budget over the whole", "shutdownGracePeriod: 10s\nshutdownGracePeriodCriticalPods: 20s", `shutdownGracePeriodCriticalPods: Invalid value: "20s": must be <= shutdownGracePeriod 10s`},
		{"negative shutdownGracePeriodCriticalPods", "shutdownGracePeriodCriticalPods: -1s", `shutdownGracePeriodCriticalPods: Invalid value: "-1s"`},
		{"enforceNodeAllocatable: system-reserved without its cgroup", "enforceNodeAllocatable: [pods, system-reserved]",
			`systemReservedCgroup: Required value: must be specified when "system-reserved" or "system-reserved-compressible" is in enforceNodeAllocatable`},
		{"enforceNodeAllocatable: kube-reserved-compressible without its cgroup", "enforceNodeAllocatable: [kube-reserved-compressible]",
			`kubeReservedCgroup: Required value`},
		{"enforceNodeAllocatable: none with others", "enforceNodeAllocatable: [none, pods]", `may not contain additional enforcements when "none" is specified`},
		{"enforceNodeAllocatable: an unknown value", "enforceNodeAllocatable: [pods, all]", `enforceNodeAllocatable[1]: Unsupported value: "all"`},
		{"enforceNodeAllocatable: a duplicate", "enforceNodeAllocatable: [pods, pods]", `enforceNodeAllocatable[1]: Duplicate value: "pods"`},
		{"enforceNodeAllocatable: a reservation and its compressible variant", "enforceNodeAllocatable: [system-reserved, system-reserved-compressible]\nsystemReservedCgroup: /system.slice",
			`cannot be specified together`},
		{"enforceNodeAllocatable: a relative reserved cgroup", "enforceNodeAllocatable: [kube-reserved]\nkubeReservedCgroup: kube.slice", `kubeReservedCgroup: Invalid value: "kube.slice"`},
		{"enforceNodeAllocatable: reservations on their cgroups", "enforceNodeAllocatable: [pods, system-reserved, kube-reserved-compressible]\nsystemReservedCgroup: /system.slice\nkubeReservedCgroup: /kube.slice", ""},
		{"shutdownGracePeriod with its feature gate off", "shutdownGracePeriod: 30s\nfeatureGates: {GracefulNodeShutdown: false}",
			"requires feature gate GracefulNodeShutdown"},
		{"budgets by priority with their feature gate off", "shutdownGracePeriodByPodPriority:\n- {priority: 0, shutdownGracePeriodSeconds: 10}\nfeatureGates: {GracefulNodeShutdownBasedOnPodPriority: false}",
			"requires feature gate GracefulNodeShutdownBasedOnPodPriority"},
		{"budgets by priority with the periods", "shutdownGracePeriod: 30s\nshutdownGracePeriodByPodPriority:\n- {priority: 0, shutdownGracePeriodSeconds: 10}", "shutdownGracePeriodByPodPriority: Invalid value: 1: cannot be specified with shutdownGracePeriod or shutdownGracePeriodCriticalPods"},
		{"cgroupDriver systemd", "cgroupDriver: systemd", ""},
		{"cgroupDriver unknown", "cgroupDriver: cgroupv2", `cgroupDriver: Unsupported value: "cgroupv2": supported values: "cgroupfs", "systemd"`},
		{"cgroupRoot /", "cgroupRoot: /", ""},
		{"cgroupRoot nested", "cgroupRoot: /nodelet/pods", ""},
		{"cgroupRoot relative", "cgroupRoot: nodelet", `cgroupRoot: Invalid value: "nodelet": must be an absolute cgroup path, such as / or /nodelet, without a trailing slash`},
		{"cgroupRoot trailing slash", "cgroupRoot: /nodelet/", `cgroupRoot: Invalid value: "/nodelet/"`},
		{"cgroupRoot with ..", "cgroupRoot: /a/../b", `cgroupRoot: Invalid value: "/a/../b"`},
		{"cgroupsPerQOS false", "cgroupsPerQOS: false", "cgroupsPerQOS: Invalid value: false: nodelet always runs pods in the QoS cgroups under <cgroupRoot>/kubepods; false is not supported"},
		{"logging.verbosity out of klog's range", "logging:\n  verbosity: 4294967295", "logging.verbosity: Invalid value: 4294967295"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			restoreKlog(t)
			path := writeConfig(t, header+tt.body+"\n")
			_, err := Load([]string{"--config", path}, fixedHostname("n"))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Load succeeded, want error containing %q", tt.want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "load "+path+": ") || !strings.Contains(msg, tt.want) {
				t.Errorf("err = %q, want \"load %s: ...%s...\"", msg, path, tt.want)
			}
		})
	}
}

func TestValidateNodeIP(t *testing.T) {
	tests := []struct {
		in    string
		valid bool
	}{
		{"", true},
		{"10.0.0.1", true},
		{"fd00::1", true},
		{"::", true},
		{"10.0.0.1,fd00::1", true},
		{"fd00::1, 10.0.0.1", true},
		{"10.0.0.1,10.0.0.2", false},
		{"fd00::1,fd00::2", false},
		{"10.0.0.1,fd00::1,10.0.0.2", false},
		{"node.example", false},
	}
	for _, tt := range tests {
		if err := validateNodeIP(tt.in); (err == nil) != tt.valid {
			t.Errorf("validateNodeIP(%q) = %v, want valid=%v", tt.in, err, tt.valid)
		}
	}
}
