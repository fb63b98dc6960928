// Package server is nodelet's HTTP API in its two forms: the read-only API, upstream's
// read-only port (--read-only-port, 10255: what `nodelet get pods` and `nodelet logs` talk to,
// on loopback in standalone mode, off on cluster nodes unless configured), and the kubelet API
// (--port, 10250: HTTPS, every request authenticated and authorized by Config.Secure.Filter),
// which the API server calls for kubectl logs, exec, attach and port-forward. The kubelet API
// offers HTTP/2 and HTTP/1.1, as upstream's ListenAndServeTLS: the API server reads logs over
// HTTP/2, and must for a log it copies into a WebSocket (see Server.serve).
//
// Routes (one file each):
//
//	GET /pods                                          pods.go
//	GET /healthz, GET /healthz/{name}                  healthz.go
//	GET /containerLogs/{namespace}/{pod}/{container}   containerlogs.go
//	GET /events[?namespace=&pod=]                      events.go
//	GET /metrics, /metrics/probes, /metrics/resource   Deps.Metrics (internal/metrics, internal/stats)
//	GET /stats/summary                                 summary.go
//	GET /debug/pprof/...                               profiling.go (Config.Profiling; on the
//	                                                   read-only API only when on loopback)
//
// and on the kubelet API only (upstream's debugging handlers):
//
//	GET|POST /exec/{ns}/{pod}[/{uid}]/{container}      exec.go
//	GET|POST /attach/{ns}/{pod}[/{uid}]/{container}    exec.go
//	GET|POST /portForward/{ns}/{pod}[/{uid}]           exec.go
//	POST /run/{ns}/{pod}[/{uid}]/{container}           exec.go
//	GET /runningpods/                                  runningpods.go
//
// exec, attach and portForward ask the runtime for a session on its CRI streaming server
// (containerd serves one on 127.0.0.1) and proxy the upgraded connection to it, as upstream:
// SPDY as is, a v5.channel.k8s.io WebSocket translated to SPDY, a port-forward WebSocket
// tunnel unwrapped, with internal/streamtranslate (upstream's k8s.io/apiserver translators
// rewritten without the package that links client-go's clientset). Only running containers
// qualify; attach uses the tty setting of the container's spec.
//
// /events lists the node's recent pod events (internal/events) as a v1 EventList. Like
// /containerLogs it is served only on a loopback address: event messages can carry container
// output (probe output, termination messages).
//
// /pods returns the desired pods with their latest generated status as a v1 PodList, encoded as
// the kubelet encodes it (kind PodList, apiVersion v1); an empty list is "items":[] where the
// kubelet writes null.
//
// /healthz runs a built-in "ping" check and then the checks given in Deps, in order, and answers
// "ok", or 500 with one "[+]name ok" / "[-]name failed: reason" line per check followed by
// "healthz check failed", in the format of k8s.io/apiserver's healthz handler; ?verbose lists
// the checks when all pass, ?exclude=name skips one. Unlike the apiserver (whose endpoint is
// public) the reason is not withheld: this port is local. /healthz/{name} runs one check.
//
// /containerLogs serves a container's CRI log file with the kubelet's query parameters (follow,
// previous, tailLines or its legacy alias tail, limitBytes, timestamps, sinceSeconds, sinceTime,
// stream) and their validation rules; a bad parameter is a 400, an unknown pod or container a
// 404, a container without logs yet a 400 with the kubelet's message ("... is waiting to start:
// ContainerCreating"). The CRI format (`<RFC3339Nano time> <stdout|stderr> <F|P> <content>`) is
// read with internal/crilog, which parses it as k8s.io/cri-client/pkg/logs does; only the
// content is written (logwriter.go), prefixed by the fixed-width RFC3339Nano time when
// timestamps=true, as `kubectl logs` shows it. Partial (P)
// records are joined with the rest of their line, per stream, so tailLines counts and sinceTime
// filters whole lines (the kubelet counts raw records); a line growing past 1 MiB without its
// final record is written in 1 MiB pieces so a container cannot make the server buffer without
// bound.
//
// Which file: the container's log directory (LogLocator) holds <attempt>.log files. The current
// container's log is <restartCount>.log (the newest file if the status and the files disagree);
// previous=true needs a terminated previous instance, as upstream, and reads <restartCount-1>.log
// (the newest file below the current one). When no container is current (back-off), both read
// the last terminated instance's file, which is the newest one: the kubelet does the same.
//
// follow=true streams lines as the file grows, flushing after each write, while the container
// instance is still running according to the PodSource: as upstream, following a container that
// has exited writes what is there and ends, and a follow ends when the container exits (after
// the last lines) or when the client goes away. Growth is noticed with fsnotify on the log
// directory and, as a fallback, by a 1 s timer of the injected clock (upstream's force-check
// period); a file re-created under the same name (rotation) is reopened.
//
// Security: /containerLogs exposes container output without authentication, which the
// kubelet's read-only port never did. It is served only because, in standalone mode, this API
// is bound to loopback (Config.Address 127.0.0.1:10255): on any other address (0.0.0.0, a node
// IP) the route answers 403 and New logs why. /pods and /healthz are served on any address, as
// the kubelet's read-only port serves them.
//
// Reading order: server.go, pods.go, healthz.go, containerlogs.go, logoptions.go, logfile.go,
// logwriter.go, stream.go.
package server
