package criconfig

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ResolvConf is what a resolv.conf says.
type ResolvConf struct {
	Nameservers, Searches, Options []string
}

// ParseResolvConf reads nameserver, search/domain and options lines, as upstream's parser.
func ParseResolvConf(data []byte) ResolvConf {
	var rc ResolvConf
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "nameserver":
			rc.Nameservers = append(rc.Nameservers, f[1])
		case "domain":
			rc.Searches = []string{f[1]}
		case "search":
			rc.Searches = append([]string(nil), f[1:]...)
		case "options":
			rc.Options = append(rc.Options, f[1:]...)
		}
	}
	return rc
}

// ClusterDNS is the node's cluster DNS settings (clusterDNS, clusterDomain).
type ClusterDNS struct {
	Servers []string
	Domain  string
}

// DNSConfig resolves the pod's DNS as upstream's GetPodDNS. warning is non-empty when
// ClusterFirst falls back to the host's resolv.conf because no cluster DNS is configured.
func DNSConfig(pod *v1.Pod, host ResolvConf, cluster ClusterDNS) (cfg *runtimeapi.DNSConfig, warning string) {
	policy := pod.Spec.DNSPolicy
	useCluster := false
	switch policy {
	case v1.DNSClusterFirstWithHostNet:
		useCluster = true
	case v1.DNSClusterFirst, "":
		useCluster = !pod.Spec.HostNetwork
	}
	cfg = &runtimeapi.DNSConfig{}
	switch {
	case policy == v1.DNSNone:
	case useCluster && len(cluster.Servers) == 0:
		warning = fmt.Sprintf("pod %q has DNS policy %s but the node has no cluster DNS (clusterDNS); falling back to the host's resolv.conf", pod.Name, policy)
		fillHost(cfg, host)
	case useCluster:
		cfg.Servers = append([]string(nil), cluster.Servers...)
		if cluster.Domain != "" {
			cfg.Searches = []string{pod.Namespace + ".svc." + cluster.Domain, "svc." + cluster.Domain, cluster.Domain}
		}
		cfg.Searches = append(cfg.Searches, host.Searches...)
		cfg.Options = []string{"ndots:5"}
	default: // Default, or ClusterFirst on the host's network
		fillHost(cfg, host)
	}
	if dc := pod.Spec.DNSConfig; dc != nil {
		cfg.Servers = appendUnique(cfg.Servers, dc.Nameservers...)
		cfg.Searches = appendUnique(cfg.Searches, dc.Searches...)
		cfg.Options = mergeOptions(cfg.Options, dc.Options)
	}
	return cfg, warning
}

func fillHost(cfg *runtimeapi.DNSConfig, host ResolvConf) {
	cfg.Servers = append([]string(nil), host.Nameservers...)
	cfg.Searches = append([]string(nil), host.Searches...)
	cfg.Options = append([]string(nil), host.Options...)
}

func appendUnique(list []string, more ...string) []string {
	seen := map[string]bool{}
	for _, s := range list {
		seen[s] = true
	}
	for _, s := range more {
		if !seen[s] {
			list = append(list, s)
			seen[s] = true
		}
	}
	return list
}

// mergeOptions overrides options by name (ndots:5 replaced by ndots:2), as upstream.
func mergeOptions(base []string, extra []v1.PodDNSConfigOption) []string {
	idx := map[string]int{}
	out := append([]string(nil), base...)
	for i, o := range out {
		idx[strings.SplitN(o, ":", 2)[0]] = i
	}
	for _, o := range extra {
		s := o.Name
		if o.Value != nil {
			s += ":" + *o.Value
		}
		if i, ok := idx[o.Name]; ok {
			out[i] = s
			continue
		}
		idx[o.Name] = len(out)
		out = append(out, s)
	}
	return out
}
