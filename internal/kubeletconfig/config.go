package kubeletconfig

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/component-base/featuregate"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// DefaultRootDir is the default of --root-dir. (Upstream: /var/lib/kubelet.)
const DefaultRootDir = "/var/lib/nodelet"

// Config is nodelet's resolved configuration: upstream defaults, then the
// --config file, then flags.
type Config struct {
	// KubeletConfiguration is the effective configuration, defaulted as
	// upstream does. Fields nodelet does not implement keep their (defaulted)
	// file values.
	KubeletConfiguration kubeletconfigv1beta1.KubeletConfiguration
	// ConfigFile is --config as given; empty when no file was loaded.
	ConfigFile string
	// ConfigDir is --config-dir as given; DropIns, the files of it merged, in order;
	// SkippedDropIns, the other files in it (not ending in .conf).
	ConfigDir      string
	DropIns        []string
	SkippedDropIns []string
	// ImageCredentialProviderConfig and ImageCredentialProviderBinDir are
	// --image-credential-provider-config and --image-credential-provider-bin-dir: the
	// credential provider plugins' configuration (a file or a directory) and binaries.
	ImageCredentialProviderConfig string
	ImageCredentialProviderBinDir string
	// Kubeconfig is --kubeconfig: set, nodelet joins the cluster as a node (API-server mode).
	Kubeconfig string
	// BootstrapKubeconfig is --bootstrap-kubeconfig: credentials (a bootstrap token) to request
	// the node's client certificate with when Kubeconfig is missing or its certificate expired.
	BootstrapKubeconfig string
	// CertDir is --cert-dir, default <RootDir>/pki: the client and serving certificates.
	CertDir string
	// RootDir is --root-dir, default DefaultRootDir.
	RootDir string
	// HostnameOverride is --hostname-override as given.
	HostnameOverride string
	// NodeName is resolved as upstream: --hostname-override if set, else the
	// host name, trimmed and lower-cased.
	NodeName string
	// NodeIP is --node-ip: the node's InternalIP(s), comma separated.
	NodeIP string
	// NodeLabels is --node-labels: labels added to the Node when it registers.
	NodeLabels map[string]string
	// ImageGCPeriod is --image-gc-period (nodelet only): how often images are garbage
	// collected; upstream's fixed 5 minutes by default.
	ImageGCPeriod time.Duration
	// ContainerGC is the container garbage collection policy and period (flags only).
	ContainerGC ContainerGC
	// EvictionPeriod is --eviction-monitoring-period (nodelet only): how often the eviction
	// manager observes the signals; upstream's fixed 10 seconds by default.
	EvictionPeriod time.Duration
	// Ignored are the JSON paths of file fields set to non-default values
	// that nodelet does not implement yet, sorted.
	Ignored []string
}

// HostnameFunc returns the machine's host name; os.Hostname in production.
type HostnameFunc func() (string, error)

// resolveNodeName mirrors k8s.io/component-helpers/node/util.GetHostname.
func resolveNodeName(override string, hostname HostnameFunc) (string, error) {
	name := override
	if name == "" {
		if hostname == nil {
			hostname = os.Hostname
		}
		h, err := hostname()
		if err != nil {
			return "", fmt.Errorf("couldn't determine hostname: %w", err)
		}
		name = h
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return "", errors.New("empty hostname is invalid")
	}
	return strings.ToLower(name), nil
}

// FeatureEnabled tells whether a feature gate nodelet reads is on: featureGates in the file,
// else nodelet's default: upstream's (GracefulNodeShutdown GA, GracefulNodeShutdownBasedOnPodPriority
// beta: on), except EventedPLEG: alpha and off upstream, on in nodelet (which falls back to
// relisting when the runtime has no event stream).
func FeatureEnabled(kc kubeletconfigv1beta1.KubeletConfiguration, gate string) bool {
	if on, ok := kc.FeatureGates[gate]; ok {
		return on
	}
	switch gate {
	case "EventedPLEG", "GracefulNodeShutdown", "GracefulNodeShutdownBasedOnPodPriority":
		return true
	}
	return upstreamFeatureGates[featuregate.Feature(gate)].Default // unknown: false
}
