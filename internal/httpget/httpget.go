package httpget

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MaxBody is how much of a response body is read (upstream's maxRespBodyLength).
const MaxBody = 10 << 10

// UserAgent is what the kubelet sends: kube-probe/<major>.<minor>.
const UserAgent = "kube-probe/1.37"

// Result of one GET.
type Result int

const (
	Success Result = iota
	// Warning is a success with something to say (a redirect to another host not followed).
	Warning
	Failure
)

func (r Result) String() string {
	switch r {
	case Success:
		return "success"
	case Warning:
		return "warning"
	}
	return "failure"
}

// ResolvePort returns the port number of p, a number or the name of one of c's ports.
func ResolvePort(p intstr.IntOrString, c *v1.Container) (int, error) {
	if p.Type == intstr.String {
		for _, cp := range c.Ports {
			if cp.Name == p.StrVal {
				return int(cp.ContainerPort), nil
			}
		}
		if n, err := strconv.Atoi(p.StrVal); err == nil {
			return checkPort(n)
		}
		return 0, fmt.Errorf("couldn't find port %q in container %s", p.StrVal, c.Name)
	}
	return checkPort(p.IntValue())
}

func checkPort(n int) (int, error) {
	if n <= 0 || n > 65535 {
		return 0, fmt.Errorf("invalid port number: %d", n)
	}
	return n, nil
}

// NewRequest builds the GET for the action, as upstream's NewRequestForHTTPGetAction.
func NewRequest(h *v1.HTTPGetAction, c *v1.Container, podIP string) (*http.Request, error) {
	scheme := strings.ToLower(string(h.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	host := h.Host
	if host == "" {
		host = podIP
	}
	if host == "" {
		return nil, errors.New("no host to connect to: the pod has no IP yet and the action sets no host")
	}
	port, err := ResolvePort(h.Port, c)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(h.Path)
	if err != nil {
		u = &url.URL{Path: h.Path} // as upstream: pass a busted path along as is
	}
	u.Scheme, u.Host = scheme, net.JoinHostPort(host, strconv.Itoa(port))
	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	headers := http.Header{}
	for _, hd := range h.HTTPHeaders {
		headers.Add(hd.Name, hd.Value)
	}
	if _, ok := headers["User-Agent"]; !ok {
		headers.Set("User-Agent", UserAgent)
	}
	if _, ok := headers["Accept"]; !ok {
		headers.Set("Accept", "*/*")
	} else if headers.Get("Accept") == "" {
		headers.Del("Accept")
	}
	req.Header = headers
	req.Host = headers.Get("Host")
	return req, nil
}

// NewClient returns the client probes and hooks use: no keep-alives (each probe is a new
// connection, as upstream), TLS not verified, redirects followed on the same host only.
func NewClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // probes do not verify, as upstream
			DisableKeepAlives: true,
			Proxy:             http.ProxyURL(nil),
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Hostname() != via[0].URL.Hostname() {
				return http.ErrUseLastResponse
			}
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		},
	}
}

// Do performs the request: 200–299 is Success with the body; 300–399 (a redirect not
// followed) is Warning; anything else, or no answer, is Failure with a message that says why.
func Do(client *http.Client, req *http.Request) (Result, string) {
	resp, err := client.Do(req)
	if err != nil {
		return Failure, err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	if err != nil {
		return Failure, fmt.Sprintf("read response body: %v", err)
	}
	body := string(b)
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return Success, body
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return Warning, "Probe terminated redirects, Response body: " + body
	}
	return Failure, fmt.Sprintf("HTTP probe failed with statuscode: %d", resp.StatusCode)
}
