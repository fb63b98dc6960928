package streamtranslate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	remotecommandconsts "k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/klog/v2"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

const (
	// idleTimeout bounds each read and write of the client's WebSocket, as the kubelet's own
	// WebSocket server does.
	idleTimeout = 4 * time.Hour
	// statusWriteTimeout bounds the write of the final Status on the error channel.
	statusWriteTimeout = 10 * time.Second
)

// Streams are the streams a client asked for (the stdin, stdout, stderr and tty parameters).
type Streams struct {
	Stdin  bool
	Stdout bool
	Stderr bool
	TTY    bool
}

// session is the client's side of a translated exec or attach: its WebSocket and the channels
// of v5.channel.k8s.io (0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize).
type session struct {
	conn     *wsstream.Conn
	channels []io.ReadWriteCloser
	// resizes carries the terminal sizes decoded from the resize channel; it is closed when
	// that channel ends or the request is done.
	resizes chan remotecommand.TerminalSize
}

// channelTypes is the channel layout offered to the client: the streams it asked for (the
// others ignored), and always the error channel (written) and the resize channel (read).
func channelTypes(s Streams) []wsstream.ChannelType {
	types := make([]wsstream.ChannelType, remotecommandconsts.StreamResize+1)
	types[remotecommandconsts.StreamStdIn] = channelIf(s.Stdin, wsstream.ReadChannel)
	types[remotecommandconsts.StreamStdOut] = channelIf(s.Stdout, wsstream.WriteChannel)
	types[remotecommandconsts.StreamStdErr] = channelIf(s.Stderr, wsstream.WriteChannel)
	types[remotecommandconsts.StreamErr] = wsstream.WriteChannel
	types[remotecommandconsts.StreamResize] = wsstream.ReadChannel
	return types
}

func channelIf(wanted bool, t wsstream.ChannelType) wsstream.ChannelType {
	if wanted {
		return t
	}
	return wsstream.IgnoreChannel
}

// readyChannel is the channel whose first (empty) message tells the client the session is
// established: the lowest writable one.
func readyChannel(s Streams) int {
	switch {
	case s.Stdout:
		return remotecommandconsts.StreamStdOut
	case s.Stderr:
		return remotecommandconsts.StreamStdErr
	default:
		return remotecommandconsts.StreamErr
	}
}

// openSession answers the client's WebSocket handshake, offering v5.channel.k8s.io only, and
// signals readiness. When the handshake fails wsstream has answered the client already.
func openSession(w http.ResponseWriter, req *http.Request, s Streams) (*session, error) {
	conn := wsstream.NewConn(map[string]wsstream.ChannelProtocolConfig{
		remotecommandconsts.StreamProtocolV5Name: {Binary: true, Channels: channelTypes(s)},
	})
	conn.SetIdleTimeout(idleTimeout)
	_, channels, err := conn.Open(w, req)
	if err != nil {
		return nil, err
	}
	if _, err := channels[readyChannel(s)].Write([]byte{}); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("signalling the WebSocket session ready: %w", err)
	}
	sess := &session{conn: conn, channels: channels, resizes: make(chan remotecommand.TerminalSize)}
	// The resize channel is always read, as upstream, so a client's resize message never
	// blocks the connection's reader even when the session has no terminal.
	go sess.readResizes(req.Context())
	return sess, nil
}

// readResizes decodes the resize channel into s.resizes, recovering (and logging) a panic so
// that it ends the resizes, not the process.
func (s *session) readResizes(ctx context.Context) {
	defer func() {
		if p := recover(); p != nil {
			klog.FromContext(ctx).Error(nil, "Decoding terminal resizes panicked", "panic", p)
		}
	}()
	decodeResizes(ctx, s.channels[remotecommandconsts.StreamResize], s.resizes)
}

// decodeResizes sends each JSON TerminalSize read from r to sizes until r ends or holds
// something else, or ctx is done (nothing may be left to take the sizes: the session failed to
// start), and then closes sizes.
func decodeResizes(ctx context.Context, r io.Reader, sizes chan<- remotecommand.TerminalSize) {
	defer close(sizes)
	decoder := json.NewDecoder(r)
	for {
		var size remotecommand.TerminalSize
		if err := decoder.Decode(&size); err != nil {
			return
		}
		select {
		case sizes <- size:
		case <-ctx.Done():
			return
		}
	}
}

// streamOptions connects the session's channels to a SPDY executor's streams.
func (s *session) streamOptions(want Streams) remotecommand.StreamOptions {
	var opts remotecommand.StreamOptions
	if want.Stdin {
		opts.Stdin = s.channels[remotecommandconsts.StreamStdIn]
	}
	if want.Stdout {
		opts.Stdout = s.channels[remotecommandconsts.StreamStdOut]
	}
	if want.Stderr {
		opts.Stderr = s.channels[remotecommandconsts.StreamStdErr]
	}
	if want.TTY {
		opts.Tty = true
		opts.TerminalSizeQueue = sizeQueue(s.resizes)
	}
	return opts
}

// writeStatus writes status as JSON on the error channel, within statusWriteTimeout.
func (s *session) writeStatus(status metav1.Status) error {
	data, err := json.Marshal(status)
	if err != nil {
		return err
	}
	s.conn.SetWriteDeadline(statusWriteTimeout)
	_, err = s.channels[remotecommandconsts.StreamErr].Write(data)
	return err
}

func (s *session) close() error { return s.conn.Close() }

// sizeQueue hands the decoded terminal sizes to the SPDY executor.
type sizeQueue <-chan remotecommand.TerminalSize

// Next returns the next size, or nil once the resize channel has ended.
func (q sizeQueue) Next() *remotecommand.TerminalSize {
	size, ok := <-q
	if !ok {
		return nil
	}
	return &size
}
