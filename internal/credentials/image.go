package credentials

import (
	"fmt"
	"strings"
)

// Docker's reference normalization (github.com/distribution/reference ParseNormalizedNamed).
const (
	dockerHubDomain       = "docker.io"
	legacyDockerHubDomain = "index.docker.io"
	officialRepoPrefix    = "library/"
)

// Repository returns the repository an image reference pulls from, normalized as upstream's
// parsers.ParseImageName: the registry domain (docker.io when the reference names none) and the
// path (library/<name> for Docker Hub's official images), without tag or digest:
//
//	busybox:1.36                        → docker.io/library/busybox
//	index.docker.io/team/app@sha256:... → docker.io/team/app
//	localhost:5000/app:v1               → localhost:5000/app
func Repository(image string) (string, error) {
	name, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		name = name[:i]
	}
	if name == "" || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") {
		return "", fmt.Errorf("image %q: invalid reference format", image)
	}
	domain, path := splitDockerDomain(name)
	if path != strings.ToLower(path) {
		return "", fmt.Errorf("image %q: invalid reference format: repository name must be lowercase", image)
	}
	return domain + "/" + path, nil
}

// splitDockerDomain is distribution/reference's splitDockerDomain: the first component is a
// domain when it has a dot or a port, is "localhost", or has upper-case letters.
func splitDockerDomain(name string) (domain, path string) {
	first, rest, ok := strings.Cut(name, "/")
	if !ok || (!strings.ContainsAny(first, ".:") && first != "localhost" && strings.ToLower(first) == first) {
		domain, path = dockerHubDomain, name
	} else {
		domain, path = first, rest
	}
	if domain == legacyDockerHubDomain {
		domain = dockerHubDomain
	}
	if domain == dockerHubDomain && !strings.Contains(path, "/") {
		path = officialRepoPrefix + path
	}
	return domain, path
}
