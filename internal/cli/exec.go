package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"
	v1 "k8s.io/api/core/v1"
	streamspdy "k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// DefaultSocket is the local API's socket under the default root directory (--root-dir
// /var/lib/nodelet): exec and attach go through it, as root.
const DefaultSocket = "/var/lib/nodelet/nodelet.sock"

// socketBase is the URL the local API is addressed with; the host is not dialled.
const socketBase = "http://nodelet"

// streamRequest is an exec or attach as the command line asks it (pure: parsed, not run).
type streamRequest struct {
	verb              string // "exec" or "attach"
	socket            string
	namespace, pod    string
	container         string // "" until defaulted
	command           []string
	stdin, tty, quiet bool
}

// parseStream parses `exec POD [-c C] [-i] [-t] -- CMD...` or `attach POD [-c C] [-i] [-t]`
// as kubectl does.
func (c *command) parseStream(verb string, args []string) (r streamRequest, code int, done bool) {
	r.verb = verb
	fs := pflag.NewFlagSet(verb, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&r.socket, "socket", DefaultSocket, "nodelet's local API socket (<root-dir>/nodelet.sock)")
	fs.StringVarP(&r.namespace, "namespace", "n", "default", "namespace of the pod")
	fs.StringVarP(&r.container, "container", "c", "", "container name; optional when the pod has one")
	fs.BoolVarP(&r.stdin, "stdin", "i", false, "pass stdin to the container")
	fs.BoolVarP(&r.tty, "tty", "t", false, "stdin is a TTY")
	fs.BoolVarP(&r.quiet, "quiet", "q", false, "only print output from the remote session")
	if code, done := c.parse(fs, args); done {
		return r, code, true
	}
	pos, dash := fs.Args(), fs.ArgsLenAtDash()
	if len(pos) == 0 || dash == 0 {
		return r, c.usageError("expected '%s POD [-c CONTAINER] [-i] [-t]%s'.\nPOD is a required argument for the %s command", verb, map[bool]string{true: " -- COMMAND [args...]"}[verb == "exec"], verb), true
	}
	r.pod = strings.TrimPrefix(strings.TrimPrefix(pos[0], "pod/"), "pods/")
	switch {
	case verb == "attach" && len(pos) > 1:
		return r, c.usageError("expected a single argument: POD, saw %d: %q", len(pos), pos), true
	case verb == "exec" && dash < 0 && len(pos) > 1:
		return r, c.usageError("exec [POD] [COMMAND] is not supported; use exec [POD] -- [COMMAND]"), true
	case verb == "exec" && (dash < 0 || len(pos) <= dash):
		return r, c.usageError("you must specify at least one command for the container"), true
	case verb == "exec" && dash > 1:
		return r, c.usageError("expected one POD before --, got %q", pos[:dash]), true
	}
	if verb == "exec" {
		r.command = pos[dash:]
	}
	return r, 0, false
}

// streamURL is the local API's URL of the request (kubectl's query parameters).
func (r streamRequest) streamURL() *url.URL {
	q := url.Values{}
	if r.verb == "exec" {
		q["command"] = r.command
	}
	// As the API server asks the kubelet (v1.ExecStdinParam...: input, output, error, tty = 1).
	q.Set(v1.ExecStdoutParam, "1")
	if r.stdin {
		q.Set(v1.ExecStdinParam, "1")
	}
	if r.tty {
		q.Set(v1.ExecTTYParam, "1")
	} else {
		q.Set(v1.ExecStderrParam, "1")
	}
	return &url.URL{Scheme: "http", Host: "nodelet",
		Path:     "/" + r.verb + "/" + r.namespace + "/" + r.pod + "/" + r.container,
		RawPath:  "/" + r.verb + "/" + url.PathEscape(r.namespace) + "/" + url.PathEscape(r.pod) + "/" + url.PathEscape(r.container),
		RawQuery: q.Encode()}
}

// exitCode is the code the command exits with for a session's error: the remote command's own
// exit code, as kubectl exec returns it.
func exitCode(err error) (int, bool) {
	var exitErr utilexec.ExitError
	if errors.As(err, &exitErr) {
		return exitErr.ExitStatus(), true
	}
	return 0, false
}

// stream runs `nodelet exec` or `nodelet attach` through the local API.
func (c *command) stream(ctx context.Context, verb string, args []string) int {
	r, code, done := c.parseStream(verb, args)
	if done {
		return code
	}
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{Timeout: 10 * time.Second}).DialContext(ctx, "unix", r.socket)
	}
	c.client = &http.Client{Transport: &http.Transport{DialContext: dial}}
	pods, err := c.listPods(ctx, socketBase)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) || strings.Contains(err.Error(), r.socket) {
			return c.fail("cannot reach nodelet's local API at %s (is nodelet running with this --root-dir? are you root? see --socket): %v", r.socket, err)
		}
		return c.report(err)
	}
	i := slices.IndexFunc(pods, func(p v1.Pod) bool { return p.Namespace == r.namespace && p.Name == r.pod })
	if i < 0 {
		return c.report(notFound(r.pod))
	}
	pod := &pods[i]
	if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		return c.fail("cannot %s into a container in a completed pod; current phase is %s", verb, pod.Status.Phase)
	}
	if r.container == "" {
		var note string
		r.container, note = defaultContainer(pod)
		if note != "" && !r.quiet {
			fmt.Fprintln(c.errOut, note)
		}
	}
	if r.tty && !isTerminal(c.in) {
		if !r.quiet {
			fmt.Fprintln(c.errOut, "Unable to use a TTY - input is not a terminal or the right kind of file")
		}
		r.tty = false
	}
	if verb == "attach" && !r.quiet {
		fmt.Fprintln(c.errOut, "If you don't see a command prompt, try pressing enter.")
	}
	rt, err := streamspdy.NewRoundTripperWithConfig(streamspdy.RoundTripperConfig{
		UpgradeTransport: &http.Transport{DialContext: dial}, PingPeriod: 5 * time.Second})
	if err != nil {
		return c.fail("%v", err)
	}
	exec, err := remotecommand.NewSPDYExecutorForTransports(rt, rt, http.MethodPost, r.streamURL())
	if err != nil {
		return c.fail("%v", err)
	}
	opts := remotecommand.StreamOptions{Stdout: c.out, Tty: r.tty}
	if !r.tty {
		opts.Stderr = c.errOut
	}
	if r.stdin {
		opts.Stdin = c.in
	}
	if r.tty {
		restore, sizes, err := rawTerminal(ctx, c.in.(*os.File), c.out)
		if err != nil {
			return c.fail("%v", err)
		}
		defer restore()
		opts.TerminalSizeQueue = sizes
	}
	err = exec.StreamWithContext(ctx, opts)
	if err == nil {
		return exitOK
	}
	if code, ok := exitCode(err); ok {
		return code
	}
	if ctx.Err() != nil {
		return exitOK
	}
	return c.fail("%v", err)
}

// isTerminal reports whether in is a terminal.
func isTerminal(in io.Reader) bool {
	f, ok := in.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// rawTerminal puts the terminal in raw mode (restore undoes it) and returns its sizes: now and
// at each SIGWINCH until ctx ends.
func rawTerminal(ctx context.Context, in *os.File, out io.Writer) (restore func(), sizes remotecommand.TerminalSizeQueue, err error) {
	fd := int(in.Fd())
	state, err := term.MakeRaw(fd)
	if err != nil {
		return nil, nil, fmt.Errorf("put the terminal in raw mode: %w", err)
	}
	q := &sizeQueue{fd: fd, ctx: ctx, winch: make(chan os.Signal, 1), first: true}
	signal.Notify(q.winch, syscall.SIGWINCH)
	return func() {
		signal.Stop(q.winch)
		_ = term.Restore(fd, state)
		fmt.Fprint(out, "\r")
	}, q, nil
}

// sizeQueue gives the terminal's size first, then again at each resize.
type sizeQueue struct {
	fd    int
	ctx   context.Context
	winch chan os.Signal
	first bool
}

func (q *sizeQueue) Next() *remotecommand.TerminalSize {
	if !q.first {
		select {
		case <-q.ctx.Done():
			return nil
		case <-q.winch:
		}
	}
	q.first = false
	w, h, err := term.GetSize(q.fd)
	if err != nil {
		return nil
	}
	return &remotecommand.TerminalSize{Width: uint16(w), Height: uint16(h)}
}
