package streamtranslate

import (
	"context"
	"io"
	"reflect"
	"strings"
	"testing"

	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

func TestChannelTypes(t *testing.T) {
	const (
		ignore = wsstream.IgnoreChannel
		read   = wsstream.ReadChannel
		write  = wsstream.WriteChannel
	)
	for _, tc := range []struct {
		streams Streams
		want    []wsstream.ChannelType
		ready   int
	}{
		// stdin, stdout, stderr, error, resize: error and resize are always there.
		{Streams{}, []wsstream.ChannelType{ignore, ignore, ignore, write, read}, 3},
		{Streams{Stdout: true}, []wsstream.ChannelType{ignore, write, ignore, write, read}, 1},
		{Streams{Stderr: true}, []wsstream.ChannelType{ignore, ignore, write, write, read}, 2},
		{Streams{Stdin: true, Stdout: true, Stderr: true}, []wsstream.ChannelType{read, write, write, write, read}, 1},
		{Streams{Stdin: true, Stdout: true, TTY: true}, []wsstream.ChannelType{read, write, ignore, write, read}, 1},
		{Streams{Stdin: true}, []wsstream.ChannelType{read, ignore, ignore, write, read}, 3},
	} {
		if got := channelTypes(tc.streams); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("channelTypes(%+v) = %v, want %v", tc.streams, got, tc.want)
		}
		if got := readyChannel(tc.streams); got != tc.ready {
			t.Errorf("readyChannel(%+v) = %d, want %d", tc.streams, got, tc.ready)
		}
	}
}

func TestDecodeResizes(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		want        []remotecommand.TerminalSize
	}{
		{"sizes until the channel ends", `{"Width":80,"Height":24}{"Width":120,"Height":40}` + "\n" + `{"Width":1}`,
			[]remotecommand.TerminalSize{{Width: 80, Height: 24}, {Width: 120, Height: 40}, {Width: 1}}},
		{"nothing", "", nil},
		{"stops at garbage", `{"Width":10,"Height":5} not json {"Width":1,"Height":1}`,
			[]remotecommand.TerminalSize{{Width: 10, Height: 5}}},
		{"stops at a size out of range", `{"Width":70000,"Height":1}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sizes := make(chan remotecommand.TerminalSize)
			go decodeResizes(context.Background(), strings.NewReader(tc.input), sizes)
			var got []remotecommand.TerminalSize
			for size := range sizes { // ends when decodeResizes closes sizes
				got = append(got, size)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("decoded %v, want %v", got, tc.want)
			}
		})
	}
}

// A size nobody takes (the session never started) does not keep the decoder once the request
// is done.
func TestDecodeResizesEndsWithTheRequest(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	sizes := make(chan remotecommand.TerminalSize)
	done := make(chan struct{})
	go func() {
		decodeResizes(ctx, strings.NewReader(`{"Width":80,"Height":24}`), sizes)
		close(done)
	}()
	cancel()
	<-done
	if size, ok := <-sizes; ok {
		t.Errorf("got %v after the request ended, want the channel closed", size)
	}
}

func TestSizeQueue(t *testing.T) {
	sizes := make(chan remotecommand.TerminalSize, 2)
	sizes <- remotecommand.TerminalSize{Width: 80, Height: 24}
	close(sizes)
	q := sizeQueue(sizes)
	if got := q.Next(); got == nil || *got != (remotecommand.TerminalSize{Width: 80, Height: 24}) {
		t.Errorf("first Next() = %v, want 80x24", got)
	}
	if got := q.Next(); got != nil {
		t.Errorf("Next() after the end = %v, want nil", got)
	}
}

// nopChannel is a session channel standing for one of wsstream's.
type nopChannel struct {
	io.Reader
	name string
}

func (nopChannel) Write(p []byte) (int, error) { return len(p), nil }
func (nopChannel) Close() error                { return nil }

func TestStreamOptions(t *testing.T) {
	var channels []io.ReadWriteCloser
	for _, name := range []string{"stdin", "stdout", "stderr", "error", "resize"} {
		channels = append(channels, nopChannel{Reader: strings.NewReader(""), name: name})
	}
	sess := &session{channels: channels, resizes: make(chan remotecommand.TerminalSize)}
	name := func(v any) string {
		if c, ok := v.(nopChannel); ok {
			return c.name
		}
		if v == nil {
			return ""
		}
		return "?"
	}

	opts := sess.streamOptions(Streams{Stdin: true, Stdout: true, Stderr: true})
	if got := []string{name(opts.Stdin), name(opts.Stdout), name(opts.Stderr)}; !reflect.DeepEqual(got, []string{"stdin", "stdout", "stderr"}) {
		t.Errorf("all streams: stdin, stdout, stderr = %q", got)
	}
	if opts.Tty || opts.TerminalSizeQueue != nil {
		t.Errorf("no tty asked: Tty %v, size queue %v", opts.Tty, opts.TerminalSizeQueue)
	}

	opts = sess.streamOptions(Streams{Stdout: true, TTY: true})
	if got := []string{name(opts.Stdin), name(opts.Stdout), name(opts.Stderr)}; !reflect.DeepEqual(got, []string{"", "stdout", ""}) {
		t.Errorf("stdout with a tty: stdin, stdout, stderr = %q", got)
	}
	if !opts.Tty || opts.TerminalSizeQueue == nil {
		t.Errorf("tty asked: Tty %v, size queue %v, want both", opts.Tty, opts.TerminalSizeQueue)
	}
}
