// Package certificates gives the node its credentials as the upstream kubelet gets them: TLS
// bootstrap (a client certificate requested with --bootstrap-kubeconfig through a
// kubernetes.io/kube-apiserver-client-kubelet CertificateSigningRequest), rotation of the client
// certificate (rotateCertificates) and of the serving certificate (serverTLSBootstrap, a
// kubernetes.io/kubelet-serving request) at 70–90 % of their life, and their expiry metrics.
//
// Files are upstream's: <cert-dir>/kubelet-client-current.pem and kubelet-server-current.pem,
// symlinks to the dated pair files (certificate then key, PEM) each rotation writes, and the
// private key of a pending bootstrap request in kubelet-client.key.tmp, so a node that is
// restarted while its request waits for approval asks again with the same key and name.
//
// client-go has this (util/certificate and its csr package); it is written here because those
// packages take the whole typed clientset (k8s.io/client-go/kubernetes: 184 more packages linked
// into every node, past the project's budget) where nodelet needs one resource, which it gets
// from kubeclient. The decisions — when to rotate, whether a request is done — are pure
// functions with table tests; the rest is I/O at the edges.
package certificates
