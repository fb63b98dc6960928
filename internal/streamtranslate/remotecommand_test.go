package streamtranslate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// fakeRuntime is the container runtime behind a real CRI streaming server: "size" prints the
// first terminal size, "exit N" exits with N, anything else echoes stdin.
type fakeRuntime struct{}

func (fakeRuntime) Exec(_ context.Context, _ string, cmd []string, in io.Reader, out, _ io.WriteCloser, _ bool, resize <-chan remotecommandserver.TerminalSize) error {
	switch cmd[0] {
	case "size":
		size := <-resize
		fmt.Fprintf(out, "%dx%d", size.Width, size.Height)
	case "exit":
		return utilexec.CodeExitError{Err: errors.New("exited"), Code: int(cmd[1][0] - '0')}
	default:
		data, _ := io.ReadAll(in)
		fmt.Fprintf(out, "stdin: %s", data)
	}
	return nil
}

func (fakeRuntime) Attach(context.Context, string, io.Reader, io.WriteCloser, io.WriteCloser, bool, <-chan remotecommandserver.TerminalSize) error {
	return errors.New("not used")
}

func (fakeRuntime) PortForward(context.Context, string, int32, io.ReadWriteCloser) error {
	return errors.New("not used")
}

// translate serves one exec over a v5 WebSocket, translated toward the session URL the
// runtime's streaming server hands out (or toward runtimeURL when set), and runs it with
// kubectl's WebSocket executor.
func translate(t *testing.T, cmd []string, streams Streams, opts remotecommand.StreamOptions, runtimeURL string) error {
	t.Helper()
	if runtimeURL == "" {
		mux := http.NewServeMux()
		criSrv := httptest.NewServer(mux)
		t.Cleanup(criSrv.Close)
		base, _ := url.Parse(criSrv.URL)
		cfg := streaming.DefaultConfig
		cfg.Addr, cfg.BaseURL = base.Host, base
		srv, err := streaming.NewServer(cfg, fakeRuntime{})
		if err != nil {
			t.Fatal(err)
		}
		mux.Handle("/", srv)
		resp, err := srv.GetExec(&runtimeapi.ExecRequest{ContainerId: "c1", Cmd: cmd, Tty: streams.TTY,
			Stdin: streams.Stdin, Stdout: streams.Stdout, Stderr: streams.Stderr})
		if err != nil {
			t.Fatal(err)
		}
		runtimeURL = resp.GetUrl()
	}
	target, err := url.Parse(runtimeURL)
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(NewRemoteCommandHandler(target, streams))
	t.Cleanup(api.Close)
	ex, err := remotecommand.NewWebSocketExecutor(&rest.Config{Host: api.URL}, "GET", api.URL+"/exec/default/web/app")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return ex.StreamWithContext(ctx, opts)
}

func TestTranslateStdinAndStdout(t *testing.T) {
	var out bytes.Buffer
	err := translate(t, []string{"cat"}, Streams{Stdin: true, Stdout: true, Stderr: true},
		remotecommand.StreamOptions{Stdin: strings.NewReader("from stdin"), Stdout: &out, Stderr: io.Discard}, "")
	if err != nil || out.String() != "stdin: from stdin" {
		t.Errorf("exec: %q, %v", out.String(), err)
	}
}

// onceSize is a client's terminal: one size, then no more.
type onceSize struct{ sent bool }

func (q *onceSize) Next() *remotecommand.TerminalSize {
	if q.sent {
		return nil
	}
	q.sent = true
	return &remotecommand.TerminalSize{Width: 132, Height: 43}
}

func TestTranslateTerminalResize(t *testing.T) {
	var out bytes.Buffer
	err := translate(t, []string{"size"}, Streams{Stdout: true, TTY: true},
		remotecommand.StreamOptions{Stdout: &out, Tty: true, TerminalSizeQueue: &onceSize{}}, "")
	if err != nil || out.String() != "132x43" {
		t.Errorf("exec with a tty: %q, %v; want the client's size 132x43", out.String(), err)
	}
}

func TestTranslateExitCode(t *testing.T) {
	err := translate(t, []string{"exit", "7"}, Streams{Stdout: true},
		remotecommand.StreamOptions{Stdout: io.Discard}, "")
	var exit utilexec.ExitError
	if !errors.As(err, &exit) || exit.ExitStatus() != 7 {
		t.Errorf("exec exit 7: %v, want exit status 7", err)
	}
}

func TestTranslateRuntimeRefusal(t *testing.T) {
	runtime := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "session expired", http.StatusNotFound)
	}))
	t.Cleanup(runtime.Close)
	err := translate(t, []string{"ls"}, Streams{Stdout: true}, remotecommand.StreamOptions{Stdout: io.Discard}, runtime.URL+"/exec/abc")
	if err == nil || !strings.Contains(err.Error(), "Internal error occurred: unable to upgrade connection: session expired") {
		t.Errorf("exec refused by the runtime: %v, want the runtime's answer as an internal error", err)
	}
}
