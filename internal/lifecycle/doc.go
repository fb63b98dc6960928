// Package lifecycle runs a container's lifecycle handlers (postStart and preStop hooks) as the
// upstream kubelet's HandlerRunner (pkg/kubelet/lifecycle/handlers.go) does:
//
//   - exec runs the command in the container through CRI ExecSync; a non-zero exit code is a
//     failure whose message carries stdout and stderr;
//   - httpGet sends the GET that internal/httpget builds (host defaulting to the pod IP, named
//     ports, headers) with the User-Agent kube-lifecycle/<version>; only a request that gets no
//     answer fails: as upstream, the status code of the answer is not looked at, and an HTTPS
//     hook answered in plain HTTP is retried once in HTTP;
//   - sleep waits on the injected clock, returning early (with upstream's error) when the
//     context ends;
//   - tcpSocket, deprecated and kept in the API only for compatibility, is not supported: as
//     upstream, it fails as an invalid handler.
//
// Failure messages are upstream's, word for word, so that status messages and logs read the
// same as the kubelet's. Deciding what a failure means (kill the container after postStart,
// go on terminating after preStop) and how long a hook may take is the runtime manager's.
package lifecycle
