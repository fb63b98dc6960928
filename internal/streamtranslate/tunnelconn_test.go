package streamtranslate

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	gwebsocket "github.com/gorilla/websocket"
	"k8s.io/klog/v2"
)

func TestHeaderEnd(t *testing.T) {
	for in, want := range map[string]int{
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: SPDY/3.1\r\n\r\nframes": 55,
		"HTTP/1.1 404 Not Found\n\nbody":                                      24,
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: SPDY/3.1\r\n":           -1,
		"": -1,
	} {
		if got := headerEnd([]byte(in)); got != want {
			t.Errorf("headerEnd(%q) = %d, want %d", in, got, want)
		}
	}
}

// recordingHandshaker is the client's side of the tunnel, as seen by the sniffer.
type recordingHandshaker struct {
	net.Conn // not used
	status   int
	raw      string
	written  bytes.Buffer
	fail     error
}

func (r *recordingHandshaker) handshake(resp *http.Response, raw []byte) error {
	r.status, r.raw = resp.StatusCode, string(raw)
	return r.fail
}

func (r *recordingHandshaker) Write(b []byte) (int, error) { return r.written.Write(b) }

func TestResponseSniffer(t *testing.T) {
	const header = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n"
	t.Run("header in pieces, then frames", func(t *testing.T) {
		next := &recordingHandshaker{}
		s := &responseSniffer{logger: klog.Background(), next: next}
		for _, piece := range []string{header[:10], header[10:40], header[40:] + "fr", "ames"} {
			if n, err := s.Write([]byte(piece)); n != len(piece) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", piece, n, err)
			}
			if next.status == 0 && next.written.Len() > 0 {
				t.Fatalf("bytes passed on before the handshake: %q", next.written.String())
			}
		}
		if next.status != http.StatusSwitchingProtocols || next.raw != header || next.written.String() != "frames" {
			t.Errorf("handshake %d with %q, then %q written; want 101 with the header, then frames", next.status, next.raw, next.written.String())
		}
	})
	t.Run("header ended by a bare blank line", func(t *testing.T) {
		next := &recordingHandshaker{}
		s := &responseSniffer{logger: klog.Background(), next: next}
		_, _ = s.Write([]byte("HTTP/1.1 404 Not Found\nContent-Length: 4\n\ngone"))
		if next.status != http.StatusNotFound || next.written.String() != "gone" {
			t.Errorf("handshake %d, then %q written; want 404, then the body", next.status, next.written.String())
		}
	})
	t.Run("not a response", func(t *testing.T) {
		next := &recordingHandshaker{}
		s := &responseSniffer{logger: klog.Background(), next: next}
		if _, err := s.Write([]byte("garbage\r\n\r\n")); err == nil {
			t.Fatal("a header that is no HTTP response was accepted")
		}
		if _, err := s.Write([]byte("more")); err == nil || next.status != 0 || next.written.Len() != 0 {
			t.Errorf("after a bad header: Write error %v, handshake %d, %q written; want errors and nothing passed on", err, next.status, next.written.String())
		}
	})
	t.Run("handshake fails", func(t *testing.T) {
		next := &recordingHandshaker{fail: errors.New("upgrade failed")}
		s := &responseSniffer{logger: klog.Background(), next: next}
		if _, err := s.Write([]byte(header + "frames")); !errors.Is(err, next.fail) {
			t.Errorf("Write: %v, want the handshake's error", err)
		}
		if _, err := s.Write([]byte("more")); !errors.Is(err, next.fail) || next.written.Len() != 0 {
			t.Errorf("after a failed handshake: %v, %q written; want the error and nothing passed on", err, next.written.String())
		}
	})
	t.Run("header too long", func(t *testing.T) {
		s := &responseSniffer{logger: klog.Background(), next: &recordingHandshaker{}}
		if _, err := s.Write(bytes.Repeat([]byte("X"), maxResponseHeader+1)); err == nil {
			t.Error("a header over the limit was buffered")
		}
	})
}

// fakeSPDYProxy stands for the upgrade-aware proxy to the runtime: it hijacks the connection
// it is given, writes the runtime's answer, and then echoes one 5-byte frame prefixed "echo:".
func fakeSPDYProxy(t *testing.T, answer string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Upgrade") != "SPDY/3.1" || r.Header.Get("X-Stream-Protocol-Version") != "portforward.k8s.io" {
			t.Errorf("proxy got %s with %v, want a SPDY upgrade for portforward.k8s.io", r.Method, r.Header)
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("Hijack: %v", err)
			return
		}
		defer conn.Close()
		if _, err := conn.Write([]byte(answer)); err != nil {
			return // a refusal: the client has its answer
		}
		frame := make([]byte, 5)
		if _, err := io.ReadFull(conn, frame); err != nil {
			return
		}
		_, _ = conn.Write(append([]byte("echo:"), frame...))
	})
}

// dialTunnel opens a WebSocket offering portforward.k8s.io tunnelled, as kubectl does.
func dialTunnel(t *testing.T, proxy http.Handler) (*gwebsocket.Conn, *http.Response, error) {
	t.Helper()
	srv := httptest.NewServer(NewPortForwardTunnelHandler(proxy))
	t.Cleanup(srv.Close)
	dialer := gwebsocket.Dialer{Subprotocols: []string{"SPDY/3.1+portforward.k8s.io"}}
	ws, resp, err := dialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/portForward/default/web", nil)
	if ws != nil {
		t.Cleanup(func() { ws.Close() })
	}
	return ws, resp, err
}

func TestTunnelCarriesSPDYFrames(t *testing.T) {
	ws, _, err := dialTunnel(t, fakeSPDYProxy(t, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"+
		"Upgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: portforward.k8s.io\r\n\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if ws.Subprotocol() != "SPDY/3.1+portforward.k8s.io" {
		t.Errorf("negotiated %q, want SPDY/3.1+portforward.k8s.io", ws.Subprotocol())
	}
	if err := ws.WriteMessage(gwebsocket.BinaryMessage, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	kind, data, err := ws.ReadMessage()
	if err != nil || kind != gwebsocket.BinaryMessage || string(data) != "echo:hello" {
		t.Errorf("ReadMessage() = %d %q %v, want a binary echo:hello", kind, data, err)
	}
}

func TestTunnelReplaysTheRuntimesRefusal(t *testing.T) {
	_, resp, err := dialTunnel(t, fakeSPDYProxy(t, "HTTP/1.1 404 Not Found\r\nContent-Length: 17\r\n\r\nsession not found"))
	if !errors.Is(err, gwebsocket.ErrBadHandshake) || resp == nil {
		t.Fatalf("Dial: %v, want a bad handshake", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNotFound || string(body) != "session not found" {
		t.Errorf("client got %d %q, want the runtime's 404", resp.StatusCode, body)
	}
}

func TestTunnelRefusesAnUpgradeWithoutSPDY(t *testing.T) {
	_, resp, err := dialTunnel(t, fakeSPDYProxy(t, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"))
	if !errors.Is(err, gwebsocket.ErrBadHandshake) || resp == nil {
		t.Fatalf("Dial: %v, want a bad handshake", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "missing upgrade headers") {
		t.Errorf("client got %d %q, want 500 missing upgrade headers", resp.StatusCode, body)
	}
}
