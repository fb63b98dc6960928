package credentials

import (
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"k8s.io/klog/v2"
)

// Keyring indexes registry credentials by registry key: a host[:port], optionally with a path
// ("registry.example.com/team"). The zero Keyring is empty and ready to use.
type Keyring struct {
	// index holds the keys reverse-sorted, so that a longer (more specific) path of a host comes
	// before the host: "quay.io/coreos" is tried before "quay.io".
	index []string
	creds map[string][]AuthConfig
}

// Docker Hub: images without a registry host pull from here, and its credentials are stored
// under https://index.docker.io/v1/.
const defaultRegistryHost = "index.docker.io"

// Add indexes the entries of a docker config as upstream's BasicDockerKeyring.Add: the scheme is
// optional, a /v1/ or /v2/ path prefix means the host itself, and an entry that does not parse
// as a URL is ignored.
func (k *Keyring) Add(cfg dockerConfig) {
	if k.creds == nil {
		k.creds = map[string][]AuthConfig{}
	}
	registries := make([]string, 0, len(cfg))
	for r := range cfg {
		registries = append(registries, r)
	}
	sort.Strings(registries) // deterministic order of credentials sharing a key
	for _, registry := range registries {
		entry := cfg[registry]
		raw := registry
		if !strings.HasPrefix(raw, "https://") && !strings.HasPrefix(raw, "http://") {
			raw = "https://" + raw
		}
		parsed, err := url.Parse(raw)
		if err != nil {
			klog.InfoS("Ignoring an invalid registry in an image pull secret", "registry", registry, "err", err)
			continue
		}
		path := parsed.Path
		if strings.HasPrefix(path, "/v2/") || strings.HasPrefix(path, "/v1/") {
			path = path[3:]
		}
		key := parsed.Host
		if path != "" && path != "/" {
			key += path
		}
		k.creds[key] = append(k.creds[key], AuthConfig{Username: entry.Username, Password: entry.Password})
		if !slices.Contains(k.index, key) {
			k.index = append(k.index, key)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(k.index)))
}

// Lookup returns the credentials for pulling image, most specific registry key first, as
// upstream's BasicDockerKeyring.Lookup of the image's repository: every key whose host matches
// (same number of dot-separated parts, each a glob, same port) and whose path is a prefix of the
// repository's path. When none matches, a Docker Hub image gets the index.docker.io credentials.
// No credentials (nil) means an anonymous pull.
func (k *Keyring) Lookup(image string) ([]AuthConfig, error) {
	repo, err := Repository(image)
	if err != nil {
		return nil, err
	}
	var out []AuthConfig
	for _, key := range k.index {
		if urlsMatch(key, repo) {
			out = append(out, k.creds[key]...)
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	if isDefaultRegistryMatch(repo) {
		return k.creds[defaultRegistryHost], nil
	}
	return nil, nil
}

// urlsMatch is upstream's URLsMatchStr: glob and target are schemeless URLs; the glob may use
// wildcards in the parts of its host name, not in its port or path.
func urlsMatch(glob, target string) bool {
	g, err := url.Parse("https://" + glob)
	if err != nil {
		return false
	}
	t, err := url.Parse("https://" + target)
	if err != nil {
		return false
	}
	gParts, gPort := splitHost(g.Host)
	tParts, tPort := splitHost(t.Host)
	if gPort != tPort || len(gParts) != len(tParts) || !strings.HasPrefix(t.Path, g.Path) {
		return false
	}
	for i := range gParts {
		if ok, err := filepath.Match(gParts[i], tParts[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

// splitHost splits host[:port] into the dot-separated parts of the host and the port.
func splitHost(hostport string) (parts []string, port string) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	return strings.Split(host, "."), port
}

// isDefaultRegistryMatch reports whether the image pulls from Docker Hub, judging from its name
// as upstream does.
func isDefaultRegistryMatch(image string) bool {
	first, _, hasSlash := strings.Cut(image, "/")
	switch {
	case first == "":
		return false
	case !hasSlash:
		return true
	case first == "docker.io" || first == "index.docker.io":
		return true
	}
	return !strings.ContainsAny(first, ".:")
}

// KeyringFromAuths returns a keyring of registry (with or without scheme and path) →
// credentials, as a credential provider plugin's response gives them.
func KeyringFromAuths(auths map[string]AuthConfig) *Keyring {
	cfg := make(dockerConfig, len(auths))
	for registry, a := range auths {
		cfg[registry] = dockerConfigEntry{Username: a.Username, Password: a.Password}
	}
	var k Keyring
	k.Add(cfg)
	return &k
}

// URLsMatch is upstream's URLsMatchStr on schemeless URLs: the host's dot-separated parts each
// match the glob's (which may use wildcards), the ports are equal, and the glob's path is a
// prefix of the target's ("registry.example.com/team" matches "registry.example.com/team/app:1").
func URLsMatch(glob, target string) bool { return urlsMatch(glob, target) }
