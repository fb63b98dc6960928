// Package httpget performs the HTTP GET of a probe or a lifecycle hook (v1.HTTPGetAction) as
// the upstream kubelet does: the URL from scheme, host (the pod IP by default), port (by
// number or by container port name) and path; the configured headers, a kube-probe
// User-Agent and Accept */* unless given; redirects followed only on the same host (a redirect
// elsewhere ends the request and counts as success with a warning); TLS not verified; at most
// 10 KiB of the body read; 200–399 is success.
//
// The prober and the lifecycle hooks both use it, as upstream's probe/http serves both.
package httpget
