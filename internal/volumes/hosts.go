package volumes

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The headers of upstream's managed hosts files.
const (
	managedHostsHeader                            = "# Kubernetes-managed hosts file.\n"
	managedHostsHeaderWithHostNetwork             = "# Kubernetes-managed hosts file (host network).\n"
	etcHostsPath                                  = "/etc/hosts"
	hostsFilePerm                     os.FileMode = 0644
)

// ManagedHostsFileContent is upstream's managedHostsFileContent: the hosts file of a pod on the
// pod network. Each pod IP maps to "<hostname>.<domain> <hostname>" when domain is set, else to
// the hostname; hostAliases follow.
func ManagedHostsFileContent(podIPs []string, hostname, domain string, aliases []v1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeader)
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	for _, ip := range podIPs {
		if domain != "" {
			fmt.Fprintf(&b, "%s\t%s.%s\t%s\n", ip, hostname, domain, hostname)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", ip, hostname)
		}
	}
	b.Write(hostAliasesEntries(aliases))
	return b.Bytes()
}

// NodeHostsFileContent is upstream's nodeHostsFileContent: the hosts file of a hostNetwork
// pod, a copy of the node's with the pod's hostAliases appended.
func NodeHostsFileContent(nodeHosts []byte, aliases []v1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeaderWithHostNetwork)
	b.Write(nodeHosts)
	b.Write(hostAliasesEntries(aliases))
	return b.Bytes()
}

func hostAliasesEntries(aliases []v1.HostAlias) []byte {
	if len(aliases) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("\n# Entries added by HostAliases.\n")
	for _, a := range aliases {
		fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
	}
	return b.Bytes()
}

// HostnameAndDomain is upstream's GeneratePodHostNameAndDomain: spec.hostnameOverride (GA in
// v1.37) when set, with no domain; else spec.hostname or the pod name, truncated to 63
// characters, and "<subdomain>.<namespace>.svc.<clusterDomain>" when spec.subdomain is set.
// With an empty clusterDomain upstream leaves a trailing dot ("...svc."), which never matches
// a lookup in /etc/hosts; nodelet ends the domain at "svc" instead.
func HostnameAndDomain(pod *v1.Pod, clusterDomain string) (hostname, domain string, err error) {
	if o := pod.Spec.HostnameOverride; o != nil {
		if msgs := validation.IsDNS1123Subdomain(*o); len(msgs) != 0 {
			return "", "", fmt.Errorf("pod HostnameOverride %q is not a valid DNS subdomain: %s", *o, strings.Join(msgs, ";"))
		}
		h, err := truncateHostname(pod.Name, *o)
		return h, "", err
	}
	hostname = pod.Name
	if pod.Spec.Hostname != "" {
		if msgs := validation.IsDNS1123Label(pod.Spec.Hostname); len(msgs) != 0 {
			return "", "", fmt.Errorf("pod Hostname %q is not a valid DNS label: %s", pod.Spec.Hostname, strings.Join(msgs, ";"))
		}
		hostname = pod.Spec.Hostname
	}
	if hostname, err = truncateHostname(pod.Name, hostname); err != nil {
		return "", "", err
	}
	if s := pod.Spec.Subdomain; s != "" {
		if msgs := validation.IsDNS1123Label(s); len(msgs) != 0 {
			return "", "", fmt.Errorf("pod Subdomain %q is not a valid DNS label: %s", s, strings.Join(msgs, ";"))
		}
	}
	return hostname, podDomain(pod, clusterDomain), nil
}

// podDomain is the domain part of HostnameAndDomain, without validation.
func podDomain(pod *v1.Pod, clusterDomain string) string {
	if pod.Spec.HostnameOverride != nil || pod.Spec.Subdomain == "" {
		return ""
	}
	d := fmt.Sprintf("%s.%s.svc", pod.Spec.Subdomain, pod.Namespace)
	if clusterDomain != "" {
		d += "." + clusterDomain
	}
	return d
}

// truncateHostname is upstream's truncatePodHostnameIfNeeded.
func truncateHostname(podName, hostname string) (string, error) {
	const maxLen = 63
	if len(hostname) <= maxLen {
		return hostname, nil
	}
	t := strings.TrimRight(hostname[:maxLen], "-.")
	if t == "" {
		return "", fmt.Errorf("hostname for pod %q was invalid: %q", podName, hostname)
	}
	return t, nil
}

// EnsureHostsFile writes the pod's managed hosts file, <root>/pods/<uid>/etc-hosts, and returns
// its path. hostname is the pod's (see HostnameAndDomain); the domain is derived from the pod
// and Config.ClusterDomain. A hostNetwork pod gets a copy of the node's hosts file. The file is
// rewritten in place (running containers bind-mount it), and only when its content changes.
func (m *Manager) EnsureHostsFile(pod *v1.Pod, podIPs []string, hostname string) (string, error) {
	if err := checkName("pod UID", string(pod.UID)); err != nil {
		return "", err
	}
	unlock := m.locks.lock(pod.UID)
	defer unlock()
	return m.ensureHostsFile(pod, podIPs, hostname)
}

func (m *Manager) ensureHostsFile(pod *v1.Pod, podIPs []string, hostname string) (string, error) {
	var content []byte
	if pod.Spec.HostNetwork {
		node, err := os.ReadFile(m.cfg.HostsFile)
		if err != nil {
			return "", fmt.Errorf("reading the node's hosts file: %w", err)
		}
		content = NodeHostsFileContent(node, pod.Spec.HostAliases)
	} else {
		domain := podDomain(pod, m.cfg.ClusterDomain)
		content = ManagedHostsFileContent(podIPs, hostname, domain, pod.Spec.HostAliases)
	}
	if err := os.MkdirAll(m.podDir(pod.UID), podDirPerm); err != nil {
		return "", fmt.Errorf("pod %s: creating the pod directory: %w", pod.UID, err)
	}
	path := m.hostsPath(pod.UID)
	if err := writeInPlace(path, content, hostsFilePerm); err != nil {
		return "", fmt.Errorf("writing hosts file %s: %w", path, err)
	}
	return path, nil
}

// writeInPlace makes path hold content with mode perm, keeping its inode (a bind mount of the
// file keeps showing it) and not touching it when it already holds content. It never follows
// a symlink at path.
func writeInPlace(path string, content []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return err
	}
	defer f.Close()
	old, err := io.ReadAll(io.LimitReader(f, int64(len(content))+1))
	if err != nil {
		return err
	}
	if !bytes.Equal(old, content) {
		if err := f.Truncate(0); err != nil {
			return err
		}
		if _, err := f.WriteAt(content, 0); err != nil {
			return err
		}
	}
	if err := f.Chmod(perm); err != nil { // whatever the umask
		return err
	}
	return f.Close()
}
