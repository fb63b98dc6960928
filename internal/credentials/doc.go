// Package credentials turns a pod's imagePullSecrets into registry credentials, as the upstream
// kubelet's pkg/credentialprovider and pkg/credentialprovider/secrets do: secrets of type
// kubernetes.io/dockerconfigjson and kubernetes.io/dockercfg are parsed into a Keyring, and
// Lookup returns the credentials that apply to an image with upstream's matching rules
// (host[:port] and path prefix, glob host names such as *.example.com, the most specific entry
// first, Docker Hub's index.docker.io entry for Docker Hub images).
//
// Everything here is pure: secrets in, credentials out. The caller (internal/kuberuntime) fetches the
// secrets and tries each credential in turn.
package credentials
