package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// DefaultServer is the read-only API's address in standalone mode.
const DefaultServer = "http://127.0.0.1:10255"

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the command failed (kubectl's code)
	exitUsage = 2 // bad command line
)

// podsTimeout bounds GET /pods; logs have no bound, a followed log streams until interrupted.
const podsTimeout = 30 * time.Second

// Usage lists the commands and their flags.
const Usage = `nodelet get pods, describe pod, logs and events talk to a running nodelet's read-only API;
exec and attach to its local API socket (as root); nodelet version prints nodelet's version.

Usage:
  nodelet version [-o json]
  nodelet get pods [NAME...] [-n NAMESPACE | -A] [-o wide|json|yaml|name] [--server URL]
  nodelet logs POD [-c CONTAINER] [-f] [-p] [--tail N] [--timestamps] [--since DURATION |
               --since-time RFC3339] [--limit-bytes N] [-n NAMESPACE] [--server URL]
  nodelet describe pod NAME... [-n NAMESPACE] [--server URL]
  nodelet events [POD] [-n NAMESPACE | -A] [--server URL]
  nodelet exec POD [-c CONTAINER] [-i] [-t] [-q] [-n NAMESPACE] [--socket PATH] -- COMMAND [args...]
  nodelet attach POD [-c CONTAINER] [-i] [-t] [-q] [-n NAMESPACE] [--socket PATH]

The server is ` + DefaultServer + ` unless --server is given; the socket ` + DefaultSocket + `
unless --socket is given (<root-dir>/nodelet.sock). exec exits with the command's exit code.
`

// IsCommand tells whether args (the command line without the program name) name one of the
// commands Run executes, for main to dispatch them before parsing the agent's flags.
func IsCommand(args []string) bool {
	return len(args) > 0 && (args[0] == "get" || args[0] == "logs" || args[0] == "events" || args[0] == "describe" || args[0] == "exec" || args[0] == "attach" || args[0] == "version" || args[0] == "--version")
}

// Run executes `nodelet get pods ...`, `nodelet logs ...`, `nodelet events ...` or `nodelet
// version` (version is nodelet's, e.g. v1.37.1-nodelet) (args without
// the program name), writing the result to out and errors to errOut in kubectl's words, and
// returns the exit code: 0, 1 when the command failed, 2 for a bad command line.
func Run(ctx context.Context, args []string, in io.Reader, out, errOut io.Writer, clk clock.PassiveClock, version string) (exitCode int) {
	c := &command{in: in, out: out, errOut: errOut, clock: clk, client: &http.Client{}}
	if len(args) == 0 {
		fmt.Fprint(errOut, Usage)
		return exitUsage
	}
	switch args[0] {
	case "get":
		c.name = "get"
		return c.getPods(ctx, args[1:])
	case "logs":
		c.name = "logs"
		return c.logs(ctx, args[1:])
	case "events":
		c.name = "events"
		return c.events(ctx, args[1:])
	case "describe":
		c.name = "describe"
		return c.describe(ctx, args[1:])
	case "exec", "attach":
		c.name = args[0]
		return c.stream(ctx, args[0], args[1:])
	case "version", "--version":
		c.name = "version"
		return c.version(args[1:], version)
	case "help", "-h", "--help":
		fmt.Fprint(out, Usage)
		return exitOK
	default:
		fmt.Fprintf(errOut, "error: unknown command %q for \"nodelet\"\n\n%s", args[0], Usage)
		return exitUsage
	}
}

// command holds what the commands share.
type command struct {
	name        string // "get", "logs" or "events", for messages
	in          io.Reader
	out, errOut io.Writer
	clock       clock.PassiveClock
	client      *http.Client
}

// newFlagSet returns a flag set with --server, reporting errors through parse.
func newFlagSet(name string, server *string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(server, "server", DefaultServer, "base URL of nodelet's read-only API")
	return fs
}

// parse parses args; done reports that the command must end with code (help or a bad flag).
func (c *command) parse(fs *pflag.FlagSet, args []string) (code int, done bool) {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprintf(c.out, "%s\nFlags:\n%s", Usage, fs.FlagUsages())
		return exitOK, true
	case err != nil:
		return c.usageError("%v", err), true
	}
	return 0, false
}

func (c *command) usageError(format string, a ...any) int {
	fmt.Fprintf(c.errOut, "error: "+format+"\nSee 'nodelet %s --help' for usage.\n", append(a, c.name)...)
	return exitUsage
}

func (c *command) fail(format string, a ...any) int {
	fmt.Fprintf(c.errOut, "error: "+format+"\n", a...)
	return exitError
}

// apiError is a non-200 answer of the API, printed as kubectl prints a server's error.
type apiError struct {
	code int
	msg  string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("Error from server (%s): %s", statusReason(e.code), e.msg)
}

// statusReason names an HTTP code as kubectl does (metav1.StatusReason).
func statusReason(code int) string {
	switch code {
	case http.StatusUnprocessableEntity:
		return "Invalid"
	case http.StatusInternalServerError:
		return "InternalError"
	case http.StatusGatewayTimeout:
		return "Timeout"
	}
	if text := http.StatusText(code); text != "" {
		return strings.ReplaceAll(text, " ", "")
	}
	return fmt.Sprintf("HTTP%d", code)
}

// report prints err as kubectl does and returns the failure code.
func (c *command) report(err error) int {
	var apiErr *apiError
	if errors.As(err, &apiErr) {
		fmt.Fprintln(c.errOut, apiErr.Error())
		return exitError
	}
	return c.fail("%v", err)
}

// endpoint joins the server's base URL, a path whose segments are already escaped, and a
// query.
func endpoint(server, escapedPath string, query url.Values) (string, error) {
	base, err := url.Parse(server)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" || base.RawQuery != "" {
		return "", fmt.Errorf("--server %q must be an http:// or https:// URL", server)
	}
	target := strings.TrimSuffix(server, "/") + escapedPath
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	return target, nil
}

// get sends a GET and returns the response when it is a 200; otherwise an error, an
// *apiError carrying the server's message for an HTTP error.
func (c *command) get(ctx context.Context, server, target string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("cannot reach nodelet's read-only API at %s (is nodelet running? see --server): %w", server, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, &apiError{code: resp.StatusCode, msg: strings.TrimSpace(string(body))}
	}
	return resp, nil
}

// listPods fetches GET /pods.
func (c *command) listPods(ctx context.Context, server string) ([]v1.Pod, error) {
	target, err := endpoint(server, "/pods", nil)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, podsTimeout)
	defer cancel()
	resp, err := c.get(ctx, server, target)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	var list v1.PodList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, fmt.Errorf("decode the pod list from %s: %w", target, err)
	}
	return list.Items, nil
}

// notFound is kubectl's message for a missing pod.
func notFound(name string) error {
	return &apiError{code: http.StatusNotFound, msg: fmt.Sprintf("pods %q not found", name)}
}
