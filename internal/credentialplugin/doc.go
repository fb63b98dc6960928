// Package credentialplugin runs image credential provider plugins as the upstream kubelet does
// (KEP-2133; --image-credential-provider-config and --image-credential-provider-bin-dir): a
// CredentialProviderConfig (kubelet.config.k8s.io/v1) file, or a directory of them merged in
// name order, names the plugins; for an image one of a plugin's matchImages matches, the
// plugin binary is executed with a CredentialProviderRequest on its stdin and answers a
// CredentialProviderResponse on its stdout (credentialprovider.kubelet.k8s.io/v1, v1beta1 or
// v1alpha1), whose credentials are cached by its cacheKeyType (Image, Registry or Global) for
// its cacheDuration or the provider's defaultCacheDuration. Each exec is bounded by a minute,
// as upstream. Its credentials join those of the pod's imagePullSecrets (which come first).
//
// What differs from upstream: the config is decoded strictly (an unknown field is an error
// naming it), and tokenAttributes (service account tokens for plugins) is refused by name, as
// nodelet does not implement it; a plugin that fails, hangs or prints garbage is an error that
// names the plugin and the cause, logged and added to the pull's failure message.
package credentialplugin
