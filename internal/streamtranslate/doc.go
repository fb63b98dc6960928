// Package streamtranslate carries the kubelet API's WebSocket streams to the container runtime's
// streaming server, which speaks SPDY (and only the older WebSocket protocols):
//
//   - NewRemoteCommandHandler serves an exec or attach whose client speaks v5.channel.k8s.io
//     (kubectl ≥ 1.30, through an API server that passes WebSockets on to the node): it answers
//     the WebSocket handshake itself and runs the session as a SPDY client of the runtime's
//     streaming URL, stdin, stdout and stderr copied across, terminal resizes decoded from the
//     resize channel and fed to the SPDY side, and the outcome written as a metav1.Status on
//     the error channel (Success; NonZeroExitCode with an ExitCode cause when the command
//     exited non-zero; the runtime's own Status when it refused the session; InternalError
//     otherwise). v5's stream close (a client closing stdin) is handled by wsstream.
//   - NewPortForwardTunnelHandler serves a port-forward whose client tunnels SPDY inside binary
//     WebSocket messages ("SPDY/3.1+portforward.k8s.io"): the request is rewritten as a SPDY
//     upgrade and handed to an upgrade-aware proxy toward the runtime; the connection the proxy
//     hijacks first reads the runtime's handshake answer, then either completes the client's
//     WebSocket handshake with the SPDY protocol the runtime chose and carries the SPDY frames
//     in WebSocket messages, or replays the runtime's refusal to the client as it came.
//
// Why it exists: upstream's kubelet serves these two cases with NewStreamTranslatorHandler and
// NewTunnelingHandler of k8s.io/apiserver/pkg/util/proxy (feature ExtendWebSocketsToKubelet).
// That package also holds the API server's EndpointSlice peer proxy, whose informers link
// client-go's whole clientset and informer tree (~150 packages) into any binary that imports
// it. This package behaves as those two handlers do (protocol negotiation, channel layout,
// status on the error channel, the tunnel's upgrade and hijack) and is written over
// k8s.io/streaming (wsstream, spdy), k8s.io/client-go/tools/remotecommand, transport/spdy and
// tools/portforward's TunnelingConnection, k8s.io/apimachinery, and gorilla/websocket for the
// tunnel's handshake, as upstream. It leaves out what nodelet does not use: request metrics and
// the bandwidth throttle (flowrate).
//
// Files: remotecommand.go (the exec/attach translator), session.go (the WebSocket side of it:
// channels, readiness, resizes, status), status.go (the outcome as a Status), tunnel.go (the
// port-forward tunnel handler and its response writer), tunnelconn.go (the hijacked connection
// that turns the runtime's SPDY handshake into the client's WebSocket one).
package streamtranslate
