package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericrest "k8s.io/apiserver/pkg/registry/generic/rest"
	"k8s.io/utils/clock"
)

// Issue 13: GET pods/P/log upgraded to a WebSocket (binary.k8s.io), as the conformance spec
// "Pods should support retrieving logs from the container over websockets" reads it, goes
// through the API server's path: LocationStreamer GETs /containerLogs over the kubelet client
// transport (HTTP/2 when the node offers it), and StreamObject copies the body into the
// WebSocket with wsstream, which drops the bytes of a Read that also returns io.EOF. Over
// HTTP/1.1 every log ended that way (Content-Length, or the last chunk read with the
// terminating one); the kubelet API must speak HTTP/2, as upstream's ListenAndServeTLS does.
func TestContainerLogsThroughAPIServerWebSocket(t *testing.T) {
	var long strings.Builder
	for i := range 300 {
		fmt.Fprintf(&long, "line %03d of a log longer than one read of the API server\n", i)
	}
	for _, tc := range []struct {
		name  string
		lines []string
	}{
		{"the conformance spec's one line", []string{"container is alive"}},
		{"many lines", strings.Split(strings.TrimSuffix(long.String(), "\n"), "\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			p := podWith("web", 0, "main")
			e.addPod(p)
			var records []string
			for _, l := range tc.lines {
				records = append(records, rec(0, "stdout", "F", l))
			}
			e.writeLog(p, "main", 0, records...)
			kubelet := startKubeletAPI(t, e)

			// The request LogLocation builds for GET pods/web/log?container=main (no options).
			location := &url.URL{Scheme: "https", Host: kubelet, Path: "/containerLogs/default/web/main"}
			apiserver := httptest.NewServer(podLogHandler(location, kubeletClientTransport()))
			defer apiserver.Close()

			want := strings.Join(tc.lines, "\n") + "\n"
			if got := readLogWebSocket(t, "ws"+strings.TrimPrefix(apiserver.URL, "http")+"/log"); got != want {
				t.Errorf("log over the WebSocket: %d bytes %q, want %d bytes %q", len(got), clip(got), len(want), clip(want))
			}
		})
	}
}

// startKubeletAPI serves the kubelet API (HTTPS, an allow-all filter) on a free loopback port
// until the test ends, and returns its address after checking that it answers over HTTP/2.
func startKubeletAPI(t *testing.T, e *env) string {
	t.Helper()
	ln := listenLoopback(t)
	addr := ln.Addr().String()
	certFile, keyFile := selfSignedPair(t)
	allowAll := func(h http.Handler) http.Handler { return h }
	srv, err := New(Config{Address: addr, Clock: clock.RealClock{}, Secure: &Secure{CertFile: certFile, KeyFile: keyFile, Filter: allowAll}},
		Deps{Pods: e.pods, Logs: e.logs})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve() = %v", err)
		}
	})
	resp, err := (&http.Client{Transport: kubeletClientTransport()}).Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("kubelet API: %v", err)
	}
	_ = resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Errorf("the kubelet API answered the API server's transport over %s, want HTTP/2 as upstream", resp.Proto)
	}
	return addr
}

// kubeletClientTransport is the API server's kubelet client transport as
// k8s.io/kubernetes/pkg/kubelet/client makeTransport builds it (here without verifying the
// self-signed serving certificate): HTTP/2 is offered by utilnet.SetTransportDefaults.
func kubeletClientTransport() *http.Transport {
	return utilnet.SetTransportDefaults(&http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the test's self-signed serving certificate
	})
}

// podLogHandler serves what the API server's pods/log subresource does for a request once
// LogLocation has found the node: LogREST.Get's LocationStreamer, written by StreamObject.
func podLogHandler(location *url.URL, transport http.RoundTripper) http.Handler {
	codecs := serializer.NewCodecFactory(runtime.NewScheme())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		streamer := &genericrest.LocationStreamer{
			Location:        location,
			Transport:       transport,
			ContentType:     "text/plain",
			ResponseChecker: genericrest.NewGenericHttpResponseChecker(schema.GroupResource{Resource: "pods/log"}, "web"),
			RedirectChecker: genericrest.PreventRedirects,
		}
		responsewriters.StreamObject(http.StatusOK, schema.GroupVersion{Version: "v1"}, codecs.WithoutConversion(), streamer, w, r)
	})
}

// readLogWebSocket reads a log as the conformance spec does: binary.k8s.io messages until the
// server closes, blank messages (the initial ping) skipped.
func readLogWebSocket(t *testing.T, wsURL string) string {
	t.Helper()
	cfg, err := websocket.NewConfig(wsURL, "http://localhost")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Protocol = []string{"binary.k8s.io"}
	ws, err := websocket.DialConfig(cfg)
	if err != nil {
		t.Fatalf("open the WebSocket: %v", err)
	}
	defer ws.Close()
	if err := ws.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for {
		var msg []byte
		if err := websocket.Message.Receive(ws, &msg); err != nil {
			if errors.Is(err, io.EOF) {
				return buf.String()
			}
			t.Fatalf("read the WebSocket after %q: %v", buf.String(), err)
		}
		if len(bytes.TrimSpace(msg)) > 0 {
			buf.Write(msg)
		}
	}
}

// clip shortens a long string for an error message.
func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	return s[:40] + "..." + s[len(s)-40:]
}
