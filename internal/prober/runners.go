package prober

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/nodelet/nodelet/internal/httpget"
	"github.com/nodelet/nodelet/internal/kuberuntime/criconfig"
)

// maxExecOutput is how much of an exec probe's output is kept (upstream's maxReadLength).
const maxExecOutput = 10 << 10

// errNoHost: the probe names no host and the pod has no IP yet.
var errNoHost = errors.New("no host to connect to: the pod has no IP yet and the probe sets no host")

// timeoutOf is the probe's timeoutSeconds, 1s (the API default) when unset.
func timeoutOf(p *v1.Probe) time.Duration {
	if p.TimeoutSeconds <= 0 {
		return time.Second
	}
	return time.Duration(p.TimeoutSeconds) * time.Second
}

// runProbe runs probe p of container c once, as upstream's prober.runProbe. containerID is
// the bare CRI ID of the instance, podIP the pod's IP from its status.
func runProbe(ctx context.Context, ex Execer, p *v1.Probe, pod *v1.Pod, c *v1.Container, podIP, containerID string) outcome {
	timeout := timeoutOf(p)
	switch {
	case p.Exec != nil:
		if ex == nil {
			return outcome{Result: probeUnknown, Err: errors.New("no exec runner configured")}
		}
		// As upstream, only the container's literal env values expand $(VAR): no downward API.
		return execProbe(ctx, ex, containerID, expandCommand(p.Exec.Command, c.Env), timeout)
	case p.HTTPGet != nil:
		return httpProbe(ctx, p.HTTPGet, c, podIP, timeout)
	case p.TCPSocket != nil:
		port, err := httpget.ResolvePort(p.TCPSocket.Port, c)
		if err != nil {
			return outcome{Result: probeUnknown, Err: err}
		}
		host := p.TCPSocket.Host
		if host == "" {
			host = podIP
		}
		return tcpProbe(ctx, host, port, timeout)
	case p.GRPC != nil:
		service := ""
		if p.GRPC.Service != nil {
			service = *p.GRPC.Service
		}
		return grpcProbe(ctx, podIP, service, int(p.GRPC.Port), timeout)
	}
	return outcome{Result: probeUnknown, Err: fmt.Errorf("missing probe handler for %s:%s", klog.KObj(pod), c.Name)}
}

// expandCommand is upstream's ExpandContainerCommandOnlyStatic.
func expandCommand(cmd []string, env []v1.EnvVar) []string {
	vars := make(map[string]string, len(env))
	for _, e := range env {
		vars[e.Name] = e.Value
	}
	lookup := func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
	out := make([]string, 0, len(cmd))
	for _, s := range cmd {
		out = append(out, criconfig.Expand(s, lookup))
	}
	return out
}

// execProbe runs cmd in the container: exit 0 is success, another exit code failure, both
// with the combined output (stdout then stderr, at most 10 KiB); a timeout is a failure; not
// being able to run the command is an error.
func execProbe(ctx context.Context, ex Execer, containerID string, cmd []string, timeout time.Duration) outcome {
	stdout, stderr, code, err := ex.ExecSync(ctx, containerID, cmd, timeout)
	if err != nil {
		if grpcstatus.Code(err) == codes.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded) {
			// What upstream's CRI client reports for a timed-out ExecSync.
			return outcome{Result: probeFailure, Output: fmt.Sprintf("command %q timed out", strings.Join(cmd, " "))}
		}
		return outcome{Result: probeUnknown, Err: err}
	}
	data := make([]byte, 0, len(stdout)+len(stderr))
	data = append(append(data, stdout...), stderr...)
	if len(data) > maxExecOutput {
		data = data[:maxExecOutput]
	}
	if code != 0 {
		return outcome{Result: probeFailure, Output: string(data)}
	}
	return outcome{Result: probeSuccess, Output: string(data)}
}

// httpProbe performs the GET of an httpGet probe with internal/httpget: 2xx succeeds, a
// redirect to another host not followed is a warning, anything else fails.
func httpProbe(ctx context.Context, h *v1.HTTPGetAction, c *v1.Container, podIP string, timeout time.Duration) outcome {
	req, err := httpget.NewRequest(h, c, podIP)
	if err != nil {
		return outcome{Result: probeUnknown, Err: err}
	}
	client := httpget.NewClient(timeout)
	if t, ok := client.Transport.(*http.Transport); ok {
		// As upstream's probe transport: short-lived sockets, no Accept-Encoding.
		t.DialContext = probeDialer().DialContext
		t.DisableCompression = true
	}
	res, out := httpget.Do(client, req.WithContext(ctx))
	switch res {
	case httpget.Success:
		return outcome{Result: probeSuccess, Output: out}
	case httpget.Warning:
		return outcome{Result: probeWarning, Output: out}
	}
	return outcome{Result: probeFailure, Output: out}
}

// tcpProbe succeeds when a TCP connection to host:port opens within timeout.
func tcpProbe(ctx context.Context, host string, port int, timeout time.Duration) outcome {
	if host == "" {
		return outcome{Result: probeUnknown, Err: errNoHost}
	}
	d := probeDialer()
	d.Timeout = timeout
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return outcome{Result: probeFailure, Output: err.Error()}
	}
	if err := conn.Close(); err != nil {
		klog.V(4).InfoS("Closing a TCP probe's connection failed", "err", err)
	}
	return outcome{Result: probeSuccess}
}

// grpcProbe calls grpc.health.v1.Health/Check for service on host:port, without TLS, within
// timeout: SERVING succeeds, anything else fails, with upstream's messages.
func grpcProbe(ctx context.Context, host, service string, port int, timeout time.Duration) outcome {
	if host == "" {
		return outcome{Result: probeUnknown, Err: errNoHost}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	// A blocking dial, as upstream, so that "could not connect" and "no answer" read apart.
	conn, err := grpc.DialContext(ctx, addr, //nolint:staticcheck // supported throughout 1.x; NewClient cannot block
		grpc.WithUserAgent(httpget.UserAgent),
		grpc.WithBlock(), //nolint:staticcheck // see above
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) {
			return probeDialer().DialContext(ctx, "tcp", a)
		}))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return outcome{Result: probeFailure, Output: fmt.Sprintf("timeout: failed to connect service %q within %v: %+v", addr, timeout, err)}
		}
		return outcome{Result: probeFailure, Output: fmt.Sprintf("error: failed to connect service at %q: %+v", addr, err)}
	}
	defer func() { _ = conn.Close() }()

	resp, err := healthpb.NewHealthClient(conn).Check(metadata.NewOutgoingContext(ctx, metadata.MD{}),
		&healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		if st, ok := grpcstatus.FromError(err); ok {
			switch st.Code() {
			case codes.Unimplemented:
				return outcome{Result: probeFailure, Output: fmt.Sprintf("error: this server does not implement the grpc health protocol (grpc.health.v1.Health): %s", st.Message())}
			case codes.DeadlineExceeded:
				return outcome{Result: probeFailure, Output: fmt.Sprintf("timeout: health rpc did not complete within %v", timeout)}
			}
		}
		return outcome{Result: probeFailure, Output: fmt.Sprintf("error: health rpc probe failed: %+v", err)}
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return outcome{Result: probeFailure, Output: fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus().String())}
	}
	return outcome{Result: probeSuccess, Output: "service healthy"}
}
