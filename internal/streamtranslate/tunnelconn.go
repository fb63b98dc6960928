package streamtranslate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	gwebsocket "github.com/gorilla/websocket"
	portforwardconsts "k8s.io/apimachinery/pkg/util/portforward"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/klog/v2"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// maxResponseHeader bounds the runtime's handshake answer the sniffer buffers.
const maxResponseHeader = 1 << 20

// replayTimeout bounds the replay of the runtime's refusal to the client.
const replayTimeout = 10 * time.Second

// handshaker is a connection that is set up from the runtime's answer to the SPDY handshake
// before anything else is written to it.
type handshaker interface {
	net.Conn
	// handshake is given the runtime's answer, parsed and as the bytes it was parsed from.
	handshake(resp *http.Response, raw []byte) error
}

// responseSniffer is the connection the SPDY proxy hijacks. The proxy writes the runtime's
// answer to the SPDY handshake first: the sniffer buffers it up to the end of its header, has
// next set up from it, and from then on passes every write (the bytes after the header
// included) to next. Every other method is next's.
type responseSniffer struct {
	logger klog.Logger
	next   handshaker

	mu       sync.Mutex
	header   []byte
	answered bool
	err      error
}

var _ net.Conn = (*responseSniffer)(nil)

func (s *responseSniffer) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.err != nil:
		return 0, s.err
	case s.answered:
		return s.next.Write(b)
	case len(s.header)+len(b) > maxResponseHeader:
		return 0, errors.New("header size limit exceeded")
	}
	s.header = append(s.header, b...)
	end := headerEnd(s.header)
	if end < 0 {
		return len(b), nil // the header is not complete yet
	}
	raw, rest := s.header[:end], s.header[end:]
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		s.logger.Error(err, "The runtime's answer to the SPDY handshake is not an HTTP response")
		s.err = err
		return len(b), err
	}
	_ = resp.Body.Close()
	s.header, s.answered = nil, true
	if s.err = s.next.handshake(resp, raw); s.err != nil {
		return len(b), s.err
	}
	if len(rest) > 0 {
		_, err = s.next.Write(rest)
	}
	return len(b), err
}

func (s *responseSniffer) Read(b []byte) (int, error)         { return s.next.Read(b) }
func (s *responseSniffer) Close() error                       { return s.next.Close() }
func (s *responseSniffer) LocalAddr() net.Addr                { return s.next.LocalAddr() }
func (s *responseSniffer) RemoteAddr() net.Addr               { return s.next.RemoteAddr() }
func (s *responseSniffer) SetDeadline(t time.Time) error      { return s.next.SetDeadline(t) }
func (s *responseSniffer) SetReadDeadline(t time.Time) error  { return s.next.SetReadDeadline(t) }
func (s *responseSniffer) SetWriteDeadline(t time.Time) error { return s.next.SetWriteDeadline(t) }

// headerEnd returns the length of the HTTP header at the start of b, its blank line included
// ("\n\r\n", or "\n\n", which Go tolerates), or -1 if b does not hold a whole header yet.
func headerEnd(b []byte) int {
	for _, sep := range []string{"\n\r\n", "\n\n"} {
		if i := bytes.Index(b, []byte(sep)); i >= 0 {
			return i + len(sep)
		}
	}
	return -1
}

// handshakeConn is the client's side of the tunnel. Until the runtime has answered it reads
// nothing and accepts no writes. A 101 with a SPDY upgrade completes the client's WebSocket
// handshake with the runtime's chosen protocol under the tunnelling prefix, and the connection
// becomes a TunnelingConnection (SPDY frames in binary messages); any other answer is replayed
// to the client on its hijacked connection, which the connection then is.
type handshakeConn struct {
	req *http.Request
	w   http.ResponseWriter

	mu   sync.RWMutex
	conn net.Conn // set once the handshake succeeded
	err  error    // set when it failed, or the connection was closed before it
}

var _ handshaker = (*handshakeConn)(nil)

func (c *handshakeConn) handshake(resp *http.Response, raw []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.conn != nil:
		return errors.New("the tunnel's handshake was already done")
	case c.err != nil:
		return c.err
	}
	c.conn, c.err = c.answer(resp, raw)
	return c.err
}

// answer answers the client from the runtime's answer and returns the connection to it.
func (c *handshakeConn) answer(resp *http.Response, raw []byte) (net.Conn, error) {
	logger := klog.FromContext(c.req.Context())
	if resp.StatusCode != http.StatusSwitchingProtocols {
		logger.Info("The runtime refused the SPDY upgrade of a tunnelled port-forward", "path", c.req.URL.Path, "status", resp.Status)
		return c.replay(raw)
	}
	if !spdyUpgraded(resp.Header) {
		logger.Error(nil, "The runtime's upgrade answer lacks the SPDY upgrade headers", "path", c.req.URL.Path, "headers", resp.Header)
		err := errors.New("unable to upgrade: missing upgrade headers in response")
		http.Error(c.w, err.Error(), http.StatusInternalServerError)
		return nil, err
	}
	protocols := []string{}
	if chosen := strings.TrimSpace(resp.Header.Get(httpstream.HeaderProtocolVersion)); chosen != "" {
		protocols = []string{portforwardconsts.WebsocketsSPDYTunnelingPrefix + chosen}
	}
	upgrader := gwebsocket.Upgrader{
		CheckOrigin:  func(*http.Request) bool { return true }, // the kubelet API authorized the request
		Subprotocols: protocols,
	}
	ws, err := upgrader.Upgrade(c.w, c.req, nil) // answers the client itself when it fails
	if err != nil {
		logger.Error(err, "Upgrading the port-forward tunnel to a WebSocket failed", "path", c.req.URL.Path)
		return nil, err
	}
	logger.V(4).Info("Port-forward tunnel open", "path", c.req.URL.Path, "protocol", ws.Subprotocol())
	return portforward.NewTunnelingConnectionWithLogger(klog.LoggerWithName(logger, "server"), ws), nil
}

// replay writes the runtime's refusal, as it came, to the client's hijacked connection.
func (c *handshakeConn) replay(raw []byte) (net.Conn, error) {
	hijacker, ok := c.w.(http.Hijacker)
	if !ok {
		return nil, fmt.Errorf("the response writer %T cannot be hijacked", c.w)
	}
	conn, _, err := hijacker.Hijack()
	if err != nil {
		klog.FromContext(c.req.Context()).Error(err, "Hijacking the port-forward client's connection failed", "path", c.req.URL.Path)
		return nil, err
	}
	_ = conn.SetWriteDeadline(time.Now().Add(replayTimeout))
	if _, err := conn.Write(raw); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

// spdyUpgraded tells whether the runtime's 101 names the upgrade and SPDY/3.1.
func spdyUpgraded(h http.Header) bool {
	connection := strings.ToLower(h.Get(httpstream.HeaderConnection))
	upgrade := strings.ToLower(h.Get(httpstream.HeaderUpgrade))
	return strings.Contains(connection, strings.ToLower(httpstream.HeaderUpgrade)) &&
		strings.Contains(upgrade, strings.ToLower(spdy.HeaderSpdy31))
}

func (c *handshakeConn) Read(b []byte) (int, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	switch {
	case c.conn != nil:
		return c.conn.Read(b)
	case c.err != nil:
		return 0, c.err
	}
	return 0, nil // not set up yet: an empty read, without blocking
}

func (c *handshakeConn) Write(b []byte) (int, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	switch {
	case c.conn != nil:
		return c.conn.Write(b)
	case c.err != nil:
		return 0, c.err
	}
	return 0, errors.New("write to the tunnel before the runtime's handshake answer")
}

// Close closes the client's connection; before the handshake it answers the client with a 500
// and makes the handshake fail.
func (c *handshakeConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.conn != nil:
		return c.conn.Close()
	case c.err != nil:
		return c.err
	}
	c.err = errors.New("connection closed")
	http.Error(c.w, c.err.Error(), http.StatusInternalServerError)
	return nil
}

func (c *handshakeConn) LocalAddr() net.Addr {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.conn != nil {
		return c.conn.LocalAddr()
	}
	return noAddr{}
}

func (c *handshakeConn) RemoteAddr() net.Addr {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.conn != nil {
		return c.conn.RemoteAddr()
	}
	return noAddr{}
}

func (c *handshakeConn) SetDeadline(t time.Time) error {
	return c.ifOpen(func(conn net.Conn) error { return conn.SetDeadline(t) })
}

func (c *handshakeConn) SetReadDeadline(t time.Time) error {
	return c.ifOpen(func(conn net.Conn) error { return conn.SetReadDeadline(t) })
}

func (c *handshakeConn) SetWriteDeadline(t time.Time) error {
	return c.ifOpen(func(conn net.Conn) error { return conn.SetWriteDeadline(t) })
}

// ifOpen applies f to the connection once there is one; before, deadlines are ignored.
func (c *handshakeConn) ifOpen(f func(net.Conn) error) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.conn != nil {
		return f(c.conn)
	}
	return nil
}

// noAddr is the address of a tunnel not set up yet.
type noAddr struct{}

func (noAddr) Network() string { return "" }
func (noAddr) String() string  { return "" }
