package streamtranslate

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"k8s.io/client-go/tools/remotecommand"
	clientspdy "k8s.io/client-go/transport/spdy"
	"k8s.io/klog/v2"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// spdyPingPeriod keeps the SPDY connection to the runtime alive while a session is quiet.
const spdyPingPeriod = 5 * time.Second

// remoteCommandHandler translates a v5.channel.k8s.io WebSocket exec or attach into a SPDY
// session with the runtime's streaming server.
type remoteCommandHandler struct {
	// runtimeURL is the session URL the runtime returned for the exec or attach.
	runtimeURL *url.URL
	streams    Streams
}

// NewRemoteCommandHandler returns the handler of an exec or attach request whose client speaks
// v5.channel.k8s.io (wsstream.IsWebSocketRequestWithStreamCloseProtocol): it runs the session
// as a SPDY client of runtimeURL with the streams the client asked for, and ends it with a
// Status on the error channel. Redirects from the runtime are refused.
func NewRemoteCommandHandler(runtimeURL *url.URL, streams Streams) http.Handler {
	return &remoteCommandHandler{runtimeURL: runtimeURL, streams: streams}
}

func (h *remoteCommandHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	logger := klog.FromContext(req.Context())
	sess, err := openSession(w, req, h.streams)
	if err != nil {
		// The handshake failed and wsstream answered the client, or the client went away.
		logger.V(4).Info("WebSocket remote command session not opened", "path", req.URL.Path, "err", err)
		return
	}
	defer func() { _ = sess.close() }()

	err = h.run(req.Context(), sess)
	if err != nil {
		logger.V(4).Info("Translated remote command session ended", "path", req.URL.Path, "err", err)
	}
	if werr := sess.writeStatus(outcomeStatus(err)); werr != nil {
		logger.V(4).Info("Writing the session's status to the WebSocket client failed", "path", req.URL.Path, "err", werr)
	}
}

// run is the SPDY side: it connects to the runtime and copies the session's streams until the
// command ends.
func (h *remoteCommandHandler) run(ctx context.Context, sess *session) error {
	roundTripper, err := spdy.NewRoundTripperWithConfig(spdy.RoundTripperConfig{PingPeriod: spdyPingPeriod})
	if err != nil {
		return err
	}
	executor, err := remotecommand.NewSPDYExecutorRejectRedirects(roundTripper,
		clientspdy.NewUpgraderForStreaming(roundTripper), http.MethodPost, h.runtimeURL)
	if err != nil {
		return err
	}
	return executor.StreamWithContext(ctx, sess.streamOptions(h.streams))
}
