package streamtranslate

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"

	gwebsocket "github.com/gorilla/websocket"
	portforwardconsts "k8s.io/apimachinery/pkg/util/portforward"
	"k8s.io/klog/v2"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// tunnelHandler unwraps a port-forward WebSocket that tunnels SPDY.
type tunnelHandler struct {
	// spdyProxy proxies a SPDY upgrade request to the runtime's streaming URL (an upgrade-aware
	// proxy): it hijacks the connection it is given once the runtime has answered.
	spdyProxy http.Handler
}

// NewPortForwardTunnelHandler returns the handler of a port-forward request whose client
// tunnels SPDY in WebSocket messages (wsstream.IsWebSocketRequestWithTunnelingProtocol).
// spdyProxy is given the request rewritten as a SPDY upgrade, offering the SPDY protocols the
// client offered inside its "SPDY/3.1+<protocol>" WebSocket protocols, and a response writer
// whose hijacked connection completes the client's WebSocket handshake with the protocol the
// runtime chose (or replays the runtime's refusal) and then carries the SPDY frames. Errors
// spdyProxy writes without hijacking reach the client as they are.
func NewPortForwardTunnelHandler(spdyProxy http.Handler) http.Handler {
	return &tunnelHandler{spdyProxy: spdyProxy}
}

func (h *tunnelHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	logger := klog.FromContext(req.Context())
	protocols := tunnelledSPDYProtocols(req)
	if len(protocols) == 0 {
		http.Error(w, "unable to upgrade: no tunneling spdy protocols provided", http.StatusBadRequest)
		return
	}
	logger.V(4).Info("Tunnelling SPDY through a WebSocket", "path", req.URL.Path, "protocols", protocols)
	writer := &tunnelWriter{
		logger: logger,
		w:      w,
		conn:   &responseSniffer{logger: logger, next: &handshakeConn{w: w, req: req}},
	}
	h.spdyProxy.ServeHTTP(writer, spdyUpgradeRequest(req, protocols))
}

// tunnelledSPDYProtocols returns the SPDY protocols inside the client's Kubernetes tunnelling
// WebSocket protocols ("SPDY/3.1+portforward.k8s.io" → "portforward.k8s.io"), in its order.
func tunnelledSPDYProtocols(req *http.Request) []string {
	var protocols []string
	for _, p := range gwebsocket.Subprotocols(req) {
		inner, ok := strings.CutPrefix(p, portforwardconsts.WebsocketsSPDYTunnelingPrefix)
		if ok && strings.HasSuffix(inner, portforwardconsts.KubernetesSuffix) {
			protocols = append(protocols, inner)
		}
	}
	return protocols
}

// spdyUpgradeRequest is a copy of the client's WebSocket request turned into the SPDY upgrade
// request the runtime expects: POST, no body, WebSocket headers removed, Upgrade SPDY/3.1 and
// one X-Stream-Protocol-Version per protocol.
func spdyUpgradeRequest(req *http.Request, protocols []string) *http.Request {
	out := req.Clone(req.Context())
	for _, h := range []string{wsstream.WebSocketProtocolHeader, "Sec-Websocket-Key", "Sec-Websocket-Version",
		httpstream.HeaderProtocolVersion} {
		out.Header.Del(h)
	}
	out.Method = http.MethodPost
	out.Body, out.ContentLength = nil, 0
	out.Header.Set(httpstream.HeaderUpgrade, spdy.HeaderSpdy31)
	for _, p := range protocols {
		out.Header.Add(httpstream.HeaderProtocolVersion, p)
	}
	return out
}

// tunnelWriter is the response writer the SPDY proxy gets: either the proxy answers without
// upgrading (Write, WriteHeader: passed to the client's writer) or it hijacks the connection
// (Hijack: the tunnel connection), never both.
type tunnelWriter struct {
	logger klog.Logger
	w      http.ResponseWriter
	conn   net.Conn

	mu       sync.Mutex
	written  bool
	hijacked bool
}

var (
	_ http.ResponseWriter = (*tunnelWriter)(nil)
	_ http.Hijacker       = (*tunnelWriter)(nil)
)

// Hijack returns the tunnel connection (and no buffered reader/writer) unless the response was
// written or hijacked already.
func (t *tunnelWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.written:
		t.logger.Error(nil, "Tunnel hijacked after its response was written")
		return nil, nil, errors.New("connection has already been written to")
	case t.hijacked:
		t.logger.Error(nil, "Tunnel hijacked twice")
		return nil, nil, errors.New("connection has already been hijacked")
	}
	t.hijacked = true
	return t.conn, nil, nil
}

func (t *tunnelWriter) Header() http.Header { return t.w.Header() }

func (t *tunnelWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.hijacked {
		t.logger.Error(nil, "Tunnel response written after hijack")
		return 0, http.ErrHijacked
	}
	t.written = true
	return t.w.Write(p)
}

// WriteHeader passes a non-upgrade status on; a 101 can only come through the hijacked
// connection, so it is answered with a 500.
func (t *tunnelWriter) WriteHeader(code int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.written:
		t.logger.Error(nil, "Tunnel response header written twice")
		return
	case t.hijacked:
		t.logger.Error(nil, "Tunnel response header written after hijack")
		return
	}
	t.written = true
	if code == http.StatusSwitchingProtocols {
		t.logger.Error(nil, "Tunnel upgrade answered through WriteHeader instead of the hijacked connection")
		http.Error(t.w, "unexpected upgrade", http.StatusInternalServerError)
		return
	}
	t.w.WriteHeader(code)
}
