package streamtranslate

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

func TestTunnelledSPDYProtocols(t *testing.T) {
	for _, tc := range []struct {
		header []string
		want   []string
	}{
		{[]string{"SPDY/3.1+portforward.k8s.io"}, []string{"portforward.k8s.io"}},
		{[]string{"v4.channel.k8s.io, SPDY/3.1+portforward.k8s.io,SPDY/3.1+v2.portforward.k8s.io"},
			[]string{"portforward.k8s.io", "v2.portforward.k8s.io"}},
		{[]string{"SPDY/3.1+portforward.example.com, spdy/3.1+portforward.k8s.io, portforward.k8s.io"}, nil},
		// As upstream (gorilla's Subprotocols), only the header's first value is read.
		{[]string{"v4.channel.k8s.io", "SPDY/3.1+portforward.k8s.io"}, nil},
		{nil, nil},
	} {
		req := httptest.NewRequest(http.MethodGet, "/portForward/default/web", nil)
		for _, v := range tc.header {
			req.Header.Add("Sec-WebSocket-Protocol", v)
		}
		if got := tunnelledSPDYProtocols(req); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("protocols %q: %q, want %q", tc.header, got, tc.want)
		}
	}
}

func TestSPDYUpgradeRequest(t *testing.T) {
	req := httptest.NewRequest(http.MethodGet, "/portForward/default/web?x=1", strings.NewReader(""))
	for k, v := range map[string]string{
		"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Key": "abc", "Sec-WebSocket-Version": "13",
		"Sec-WebSocket-Protocol": "SPDY/3.1+portforward.k8s.io", "X-Stream-Protocol-Version": "stale",
		"Authorization": "Bearer t",
	} {
		req.Header.Set(k, v)
	}
	out := spdyUpgradeRequest(req, []string{"portforward.k8s.io", "v2.portforward.k8s.io"})

	if out.Method != http.MethodPost || out.Body != nil || out.ContentLength != 0 || out.URL.String() != "/portForward/default/web?x=1" {
		t.Errorf("request: %s %s, body %v, length %d; want POST of the same URL without a body", out.Method, out.URL, out.Body, out.ContentLength)
	}
	want := http.Header{
		"Connection":                {"Upgrade"},
		"Upgrade":                   {"SPDY/3.1"},
		"X-Stream-Protocol-Version": {"portforward.k8s.io", "v2.portforward.k8s.io"},
		"Authorization":             {"Bearer t"},
	}
	if !reflect.DeepEqual(out.Header, want) {
		t.Errorf("headers %v, want %v", out.Header, want)
	}
	if req.Method != http.MethodGet || req.Header.Get("Upgrade") != "websocket" || req.Header.Get("Sec-WebSocket-Key") != "abc" {
		t.Errorf("the client's request was changed: %s %v", req.Method, req.Header)
	}
}

func TestTunnelWithoutSPDYProtocols(t *testing.T) {
	called := false
	h := NewPortForwardTunnelHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
	req := httptest.NewRequest(http.MethodGet, "/portForward/default/web", nil)
	req.Header.Set("Sec-WebSocket-Protocol", "v4.channel.k8s.io")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "no tunneling spdy protocols provided") || called {
		t.Errorf("%d %q (proxy called: %v), want 400 without calling the proxy", w.Code, w.Body, called)
	}
}

func newTunnelWriter(w http.ResponseWriter) (*tunnelWriter, net.Conn) {
	conn, _ := net.Pipe()
	return &tunnelWriter{logger: klog.Background(), w: w, conn: conn}, conn
}

func TestTunnelWriter(t *testing.T) {
	t.Run("answer without upgrade", func(t *testing.T) {
		rec := httptest.NewRecorder()
		tw, _ := newTunnelWriter(rec)
		tw.Header().Set("Content-Type", "text/plain")
		tw.WriteHeader(http.StatusNotFound)
		_, _ = tw.Write([]byte("no such pod"))
		if _, _, err := tw.Hijack(); err == nil {
			t.Error("Hijack after a write succeeded")
		}
		if rec.Code != http.StatusNotFound || rec.Body.String() != "no such pod" || rec.Header().Get("Content-Type") != "text/plain" {
			t.Errorf("client got %d %q %v", rec.Code, rec.Body, rec.Header())
		}
	})
	t.Run("hijack", func(t *testing.T) {
		rec := httptest.NewRecorder()
		tw, conn := newTunnelWriter(rec)
		got, bufrw, err := tw.Hijack()
		if err != nil || got != conn || bufrw != nil {
			t.Fatalf("Hijack() = %v, %v, %v; want the tunnel connection", got, bufrw, err)
		}
		if _, _, err := tw.Hijack(); err == nil {
			t.Error("second Hijack succeeded")
		}
		if _, err := tw.Write([]byte("x")); !errors.Is(err, http.ErrHijacked) {
			t.Errorf("Write after Hijack: %v, want ErrHijacked", err)
		}
		tw.WriteHeader(http.StatusInternalServerError)
		if rec.Body.Len() != 0 || rec.Code != http.StatusOK || rec.Flushed {
			t.Errorf("writes after Hijack reached the client: %d %q", rec.Code, rec.Body)
		}
	})
	t.Run("101 through WriteHeader", func(t *testing.T) {
		rec := httptest.NewRecorder()
		tw, _ := newTunnelWriter(rec)
		tw.WriteHeader(http.StatusSwitchingProtocols)
		if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "unexpected upgrade") {
			t.Errorf("client got %d %q, want 500 unexpected upgrade", rec.Code, rec.Body)
		}
	})
}
