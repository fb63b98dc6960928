package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	v1 "k8s.io/api/core/v1"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Issue 13: the conformance spec "Pods should support retrieving logs from the container over
// websockets" (k8s test/e2e/common/node/pods.go): GET pods/P/log?container=C through the API
// server, upgraded to a binary.k8s.io WebSocket, reads the container's output exactly. The API
// server copies the kubelet API's /containerLogs body into the WebSocket (wsstream), which
// loses the last bytes of an HTTP/1.1 body: nodelet's kubelet API must offer HTTP/2.
func TestClusterPodLogsWebSocket(t *testing.T) {
	cn := startClusterNode(t)
	cn.waitNodeReady(60 * time.Second)
	name := cn.applyPod(t, "wslogs", `  containers:
  - name: main
    image: docker.io/library/busybox:1.35
    command: ["/bin/sh", "-c", "echo container is alive; sleep 10000"]
`)
	cn.waitAPIPod("default", name, 90*time.Second, "its container running", func(p *v1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.State.Running != nil
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", cn.cp.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	// The spec's request, and its poll: the first line may not be written when Running shows.
	logURL := cn.cp.client.CoreV1().RESTClient().Get().
		Namespace("default").Resource("pods").Name(name).Suffix("log").Param("container", "main").URL()
	const want = "container is alive\n"
	var got string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Second) {
		got, err = readLogOverWebSocket(*logURL, cfg)
		if err == nil && got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("log of %s over a WebSocket: %q (err %v), want %q", name, got, err, want)
		}
	}
}

// readLogOverWebSocket opens u as the upstream e2e framework's OpenWebSocketForURL does
// (golang.org/x/net/websocket, the client config's TLS and headers, protocol binary.k8s.io) and
// reads messages until the server closes, skipping blank ones, as the spec does.
func readLogOverWebSocket(u url.URL, cfg *restclient.Config) (string, error) {
	tlsConfig, err := restclient.TLSConfigFor(cfg)
	if err != nil {
		return "", fmt.Errorf("TLS config: %w", err)
	}
	u.Scheme = map[string]string{"https": "wss", "http": "ws"}[u.Scheme]
	headers, err := headersForConfig(cfg, u.String())
	if err != nil {
		return "", err
	}
	wsConfig, err := websocket.NewConfig(u.String(), "http://localhost")
	if err != nil {
		return "", fmt.Errorf("websocket config: %w", err)
	}
	wsConfig.Header, wsConfig.TlsConfig, wsConfig.Protocol = headers, tlsConfig, []string{"binary.k8s.io"}
	ws, err := websocket.DialConfig(wsConfig)
	if err != nil {
		return "", fmt.Errorf("open a WebSocket to %s: %w", u.String(), err)
	}
	defer ws.Close()
	if err := ws.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	for {
		var msg []byte
		if err := websocket.Message.Receive(ws, &msg); err != nil {
			if errors.Is(err, io.EOF) {
				return buf.String(), nil
			}
			return buf.String(), fmt.Errorf("read the WebSocket: %w", err)
		}
		if len(bytes.TrimSpace(msg)) > 0 {
			buf.Write(msg)
		}
	}
}

// headersForConfig returns the headers (credentials, user agent) client-go would send for cfg.
func headersForConfig(cfg *restclient.Config, target string) (http.Header, error) {
	extract := &headerExtractor{}
	rt, err := restclient.HTTPWrappersForConfig(cfg, extract)
	if err != nil {
		return nil, fmt.Errorf("client wrappers: %w", err)
	}
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	if _, err := rt.RoundTrip(req); err != nil {
		return nil, fmt.Errorf("client headers: %w", err)
	}
	return extract.header, nil
}

// headerExtractor is a RoundTripper that only records the request's headers.
type headerExtractor struct{ header http.Header }

func (e *headerExtractor) RoundTrip(req *http.Request) (*http.Response, error) {
	e.header = req.Header
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
}
