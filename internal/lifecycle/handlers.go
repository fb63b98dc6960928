package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/httpget"
)

// Execer runs a command in a running container (CRI ExecSync). exitCode is the command's; err
// is for failing to run it at all. A zero timeout leaves the bound to the runtime client.
type Execer interface {
	ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (stdout, stderr []byte, exitCode int32, err error)
}

// userAgent is what an httpGet hook sends unless its headers say otherwise: upstream builds it
// as kube-<fragment>/<major>.<minor> with the fragment "lifecycle" (probes use "probe").
var userAgent = "kube-lifecycle/" + strings.TrimPrefix(httpget.UserAgent, "kube-probe/")

// errSleepInterrupted is upstream's error for a sleep hook whose context ended first.
var errSleepInterrupted = errors.New("container terminated before sleep hook finished")

// Runner runs lifecycle handlers. It is safe for concurrent use.
type Runner struct {
	clock  clock.Clock
	exec   Execer
	client *http.Client
}

// New returns a Runner that execs through exec and sleeps on clk.
func New(clk clock.Clock, exec Execer) *Runner {
	// No client timeout: the caller's context bounds a hook (upstream's hook client has none).
	return &Runner{clock: clk, exec: exec, client: httpget.NewClient(0)}
}

// Run runs the handler h of container c (running as containerID) in pod. podIP is the host of
// an httpGet handler that names none ("" when the pod has no IP). On failure, msg is upstream's
// message for the status and the logs, and err the cause. ctx bounds the hook.
func (r *Runner) Run(ctx context.Context, pod *v1.Pod, c *v1.Container, containerID string, h *v1.LifecycleHandler, podIP string) (msg string, err error) {
	switch {
	case h == nil:
		err = errors.New("invalid handler: nil")
		return "Cannot run handler: " + err.Error(), err
	case h.Exec != nil:
		out, err := r.runExec(ctx, containerID, h.Exec.Command)
		if err != nil {
			msg = fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q",
				h.Exec.Command, c.Name, podDesc(pod), err, string(out))
			klog.V(1).InfoS("Exec lifecycle hook for Container in Pod failed", "execCommand", h.Exec.Command,
				"containerName", c.Name, "pod", klog.KObj(pod), "message", string(out), "err", err)
		}
		return msg, err
	case h.HTTPGet != nil:
		if err := r.runHTTP(ctx, pod, c, h.HTTPGet, podIP); err != nil {
			msg = fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v",
				h.HTTPGet.Path, c.Name, podDesc(pod), err)
			klog.V(1).InfoS("HTTP lifecycle hook for Container in Pod failed", "path", h.HTTPGet.Path,
				"containerName", c.Name, "pod", klog.KObj(pod), "err", err)
			return msg, err
		}
		return "", nil
	case h.Sleep != nil:
		if err := r.runSleep(ctx, h.Sleep.Seconds); err != nil {
			msg = fmt.Sprintf("Sleep lifecycle hook (%d) for Container %q in Pod %q failed - error: %v",
				h.Sleep.Seconds, c.Name, podDesc(pod), err)
			klog.V(1).InfoS("Sleep lifecycle hook for Container in Pod failed", "sleepSeconds", h.Sleep.Seconds,
				"containerName", c.Name, "pod", klog.KObj(pod), "err", err)
			return msg, err
		}
		return "", nil
	}
	// tcpSocket (deprecated, never supported as a hook) or nothing at all: upstream's default.
	err = fmt.Errorf("invalid handler: %v", h)
	klog.ErrorS(err, "Cannot run handler", "containerName", c.Name, "pod", klog.KObj(pod))
	return "Cannot run handler: " + err.Error(), err
}

// runExec is upstream's RunInContainer over its remote runtime's ExecSync: the output is stdout
// then stderr, and a non-zero exit code is an error naming the command, the code and stderr.
func (r *Runner) runExec(ctx context.Context, containerID string, cmd []string) ([]byte, error) {
	stdout, stderr, code, err := r.exec.ExecSync(ctx, containerID, cmd, execTimeout(ctx))
	if err != nil {
		if status.Code(err) == codes.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("command %q timed out", strings.Join(cmd, " "))
		}
		return nil, err
	}
	out := append(append([]byte(nil), stdout...), stderr...)
	if code != 0 {
		return out, fmt.Errorf("command '%s' exited with %d: %s", strings.Join(cmd, " "), code, stderr)
	}
	return out, nil
}

// execTimeout is what is left of ctx's deadline, in whole seconds rounded up (CRI's unit), so
// that the runtime itself ends a command that outlives the hook's bound; 0 without a deadline.
// A context deadline is wall-clock time, so it is read with the wall clock.
func execTimeout(ctx context.Context) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	left := time.Until(d)
	if left < time.Second {
		return time.Second
	}
	return (left + time.Second - 1).Truncate(time.Second)
}

// runHTTP is upstream's runHTTPHandler: any answer is a success (the status code is not read);
// an HTTPS request answered in plain HTTP is retried once in HTTP, without Authorization.
func (r *Runner) runHTTP(ctx context.Context, pod *v1.Pod, c *v1.Container, action *v1.HTTPGetAction, podIP string) error {
	req, err := httpget.NewRequest(action, c, podIP)
	if err != nil {
		return err
	}
	if !hasHeader(action, "User-Agent") {
		req.Header.Set("User-Agent", userAgent)
	}
	req = req.WithContext(ctx)
	resp, err := r.client.Do(req)
	discardBody(resp)
	if isHTTPResponseError(err) {
		klog.V(1).InfoS("HTTPS request to lifecycle hook got HTTP response, retrying with HTTP", "pod", klog.KObj(pod),
			"host", req.URL.Host, "err", err)
		retry := req.Clone(ctx)
		retry.URL.Scheme = "http"
		retry.Header.Del("Authorization")
		resp, httpErr := r.client.Do(retry)
		discardBody(resp)
		if httpErr == nil {
			klog.InfoS("Request to HTTPS lifecycle hook got HTTP response, retry with HTTP succeeded", "pod", klog.KObj(pod),
				"containerName", c.Name, "host", req.URL.Host)
			err = nil
		}
	}
	return err
}

func hasHeader(action *v1.HTTPGetAction, name string) bool {
	for _, h := range action.HTTPHeaders {
		if http.CanonicalHeaderKey(h.Name) == name {
			return true
		}
	}
	return false
}

// discardBody reads at most httpget.MaxBody of the answer and closes it.
func discardBody(resp *http.Response) {
	if resp == nil {
		return
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, httpget.MaxBody))
}

// isHTTPResponseError reports whether an HTTPS request failed because the server answered in
// plain HTTP (upstream's check, on the error's text as Go gives no type for it).
func isHTTPResponseError(err error) bool {
	var urlErr *url.Error
	return errors.As(err, &urlErr) && strings.Contains(urlErr.Err.Error(), "server gave HTTP response to HTTPS client")
}

// runSleep waits the seconds on the clock, or until ctx ends (an error, as upstream).
func (r *Runner) runSleep(ctx context.Context, seconds int64) error {
	if seconds <= 0 {
		return nil // as time.After(0); a fake clock's zero timer would wait for a step
	}
	t := r.clock.NewTimer(time.Duration(seconds) * time.Second)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return errSleepInterrupted
	case <-t.C():
		return nil
	}
}

// podDesc is upstream's format.Pod: name_namespace(uid).
func podDesc(pod *v1.Pod) string {
	if pod == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}
