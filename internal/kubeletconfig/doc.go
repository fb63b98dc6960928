// Package kubeletconfig resolves nodelet's configuration the way the upstream
// kubelet does: built-in defaults, then the KubeletConfiguration file named by
// --config, then command-line flags that were explicitly set.
//
// Command line. Flags use the upstream kubelet names and meanings
// (cmd/kubelet/app/options). Only the flags nodelet implements are registered;
// any other flag is an error. The klog flags -v/--v and --vmodule are klog's
// own flags (registered through klog.InitFlags into a private flag.FlagSet),
// so parsing them sets klog's verbosity immediately.
//
// Config file. The file must be a kubelet.config.k8s.io/v1beta1
// KubeletConfiguration in YAML or JSON. It is decoded strictly: unknown
// fields, duplicate fields, case-mismatched field names and a wrong
// kind/apiVersion are errors that name the file and the field. (Upstream
// v1beta1 falls back to lenient decoding with a warning; nodelet refuses
// instead so typos are not silently ignored.) After decoding, upstream's
// v1beta1 defaults are applied (defaults.go mirrors
// pkg/kubelet/apis/config/v1beta1/defaults.go), evictionHard gets upstream's
// Linux default when unset, and relative paths are resolved against the file's
// directory, exactly as the kubelet's file loader does.
//
// Precedence. As in the upstream kubelet (kubeletConfigFlagPrecedence), a flag
// that appears on the command line overrides the file; a flag that does not
// appear leaves the file's value alone. Without --config the baseline is the
// kubelet's flags-only configuration: the v1beta1 defaults plus the legacy
// command-line defaults (readOnlyPort 10255, anonymous authentication on,
// webhook authentication off, AlwaysAllow authorization).
//
// Ignored fields. Every valid upstream file loads. Top-level fields that are
// set to non-default values but are not implemented by nodelet yet (see
// implemented.go) are reported in Config.Ignored and logged once by Load.
//
// Usage:
//
//	cfg, err := kubeletconfig.Load(os.Args[1:], os.Hostname)
//	if errors.Is(err, pflag.ErrHelp) { ... print usage ... }
//
// or, to print usage or inspect the flags:
//
//	l := kubeletconfig.NewFlagSet("nodelet")
//	cfg, err := l.Load(os.Args[1:], os.Hostname)
//	fmt.Fprint(os.Stderr, l.FlagSet().FlagUsages())
package kubeletconfig
