package volumes

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

const localhostLines = "# Kubernetes-managed hosts file.\n" +
	"127.0.0.1\tlocalhost\n" +
	"::1\tlocalhost ip6-localhost ip6-loopback\n" +
	"fe00::0\tip6-localnet\n" +
	"fe00::0\tip6-mcastprefix\n" +
	"fe00::1\tip6-allnodes\n" +
	"fe00::2\tip6-allrouters\n"

func TestHostsFileContent(t *testing.T) {
	aliases := []v1.HostAlias{
		{IP: "123.45.67.89", Hostnames: []string{"foo", "bar", "baz"}},
		{IP: "456.78.90.123", Hostnames: []string{"park", "doo", "boo"}},
	}
	nodeHosts := "127.0.0.1\tlocalhost\n192.168.1.10\tnode-1\n"
	for _, tc := range []struct {
		name        string
		hostNetwork bool
		podIPs      []string
		hostname    string
		domain      string
		aliases     []v1.HostAlias
		want        string
	}{
		{
			name: "pod network", podIPs: []string{"10.0.0.5"}, hostname: "web",
			want: localhostLines + "10.0.0.5\tweb\n",
		},
		{
			name: "dual stack with subdomain", podIPs: []string{"10.0.0.5", "fd00::5"}, hostname: "web",
			domain: "db.default.svc.cluster.local",
			want: localhostLines +
				"10.0.0.5\tweb.db.default.svc.cluster.local\tweb\n" +
				"fd00::5\tweb.db.default.svc.cluster.local\tweb\n",
		},
		{
			name: "no pod IP", hostname: "web", want: localhostLines,
		},
		{
			name: "hostAliases", podIPs: []string{"10.0.0.5"}, hostname: "web", aliases: aliases,
			want: localhostLines + "10.0.0.5\tweb\n" +
				"\n# Entries added by HostAliases.\n" +
				"123.45.67.89\tfoo\tbar\tbaz\n" +
				"456.78.90.123\tpark\tdoo\tboo\n",
		},
		{
			name: "host network", hostNetwork: true, podIPs: []string{"192.168.1.10"}, hostname: "ignored",
			want: "# Kubernetes-managed hosts file (host network).\n" + nodeHosts,
		},
		{
			name: "host network with hostAliases", hostNetwork: true, aliases: aliases[:1],
			want: "# Kubernetes-managed hosts file (host network).\n" + nodeHosts +
				"\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\tbaz\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []byte
			if tc.hostNetwork {
				got = NodeHostsFileContent([]byte(nodeHosts), tc.aliases)
			} else {
				got = ManagedHostsFileContent(tc.podIPs, tc.hostname, tc.domain, tc.aliases)
			}
			if string(got) != tc.want {
				t.Fatalf("content:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestHostnameAndDomain(t *testing.T) {
	long := strings.Repeat("a", 62) + "-b"
	for _, tc := range []struct {
		name                 string
		mutate               func(*v1.Pod)
		clusterDomain        string
		wantHost, wantDomain string
		wantErr              bool
	}{
		{name: "pod name", wantHost: "web"},
		{name: "spec.hostname", mutate: func(p *v1.Pod) { p.Spec.Hostname = "h" }, wantHost: "h"},
		{name: "subdomain", mutate: func(p *v1.Pod) { p.Spec.Subdomain = "sub" }, clusterDomain: "cluster.local",
			wantHost: "web", wantDomain: "sub.default.svc.cluster.local"},
		{name: "subdomain without cluster domain", mutate: func(p *v1.Pod) { p.Spec.Subdomain = "sub" },
			wantHost: "web", wantDomain: "sub.default.svc"},
		{name: "override wins and has no domain", clusterDomain: "cluster.local",
			mutate:   func(p *v1.Pod) { p.Spec.HostnameOverride = ptr.To("my.host"); p.Spec.Subdomain = "sub" },
			wantHost: "my.host"},
		{name: "truncated to 63 without a trailing dash", mutate: func(p *v1.Pod) { p.Name = long },
			wantHost: strings.Repeat("a", 62)},
		{name: "invalid hostname", mutate: func(p *v1.Pod) { p.Spec.Hostname = "Bad_Name" }, wantErr: true},
		{name: "invalid subdomain", mutate: func(p *v1.Pod) { p.Spec.Subdomain = "a.b" }, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod("u")
			if tc.mutate != nil {
				tc.mutate(pod)
			}
			h, d, err := HostnameAndDomain(pod, tc.clusterDomain)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("want an error, got %q %q", h, d)
				}
				return
			}
			if err != nil || h != tc.wantHost || d != tc.wantDomain {
				t.Fatalf("got %q, %q, %v; want %q, %q", h, d, err, tc.wantHost, tc.wantDomain)
			}
		})
	}
}

func TestEnsureHostsFileInPlace(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	m, root := newTestManager(t, newFakeMounter())
	m.cfg.ClusterDomain = "cluster.local"
	pod := testPod("uid-1")
	pod.Spec.Subdomain = "sub"
	path, err := m.EnsureHostsFile(pod, []string{"10.0.0.5"}, "web")
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(root, "pods/uid-1/etc-hosts") {
		t.Fatalf("path = %s", path)
	}
	if mode := mustMode(t, path); mode.Perm() != 0o644 {
		t.Fatalf("mode = %v", mode)
	}
	var before syscall.Stat_t
	if err := syscall.Stat(path, &before); err != nil {
		t.Fatal(err)
	}
	// New IPs (a new sandbox): same inode, so running containers' bind mounts see them.
	if _, err := m.EnsureHostsFile(pod, []string{"10.0.0.6"}, "web"); err != nil {
		t.Fatal(err)
	}
	var after syscall.Stat_t
	_ = syscall.Stat(path, &after)
	got, _ := os.ReadFile(path)
	if after.Ino != before.Ino || string(got) != localhostLines+"10.0.0.6\tweb.sub.default.svc.cluster.local\tweb\n" {
		t.Fatalf("inode %d→%d, content:\n%s", before.Ino, after.Ino, got)
	}
	// A symlink planted at the path is not followed.
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(path)
	if err := os.Symlink(outside, path); err != nil {
		t.Fatal(err)
	}
	if _, err := m.EnsureHostsFile(pod, []string{"10.0.0.6"}, "web"); err == nil {
		t.Fatal("want an error writing through a symlink")
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep" {
		t.Fatalf("wrote through a symlink: %q", b)
	}
}
