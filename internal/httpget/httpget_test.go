package httpget

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func hostPort(t *testing.T, rawURL string) (string, int) {
	u, _ := url.Parse(rawURL)
	h, p, _ := net.SplitHostPort(u.Host)
	port := 0
	for _, c := range p {
		port = port*10 + int(c-'0')
	}
	return h, port
}

func TestDo(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("User-Agent") != UserAgent || r.Header.Get("Accept") != "*/*" || r.Header.Get("X-Probe") != "yes" {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		_, _ = w.Write([]byte(strings.Repeat("b", 20<<10)))
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	mux.HandleFunc("/local-redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://other.invalid/x", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	host, port := hostPort(t, srv.URL)
	c := &v1.Container{Name: "app", Ports: []v1.ContainerPort{{Name: "http", ContainerPort: int32(port)}}}
	client := NewClient(300 * time.Millisecond)
	cases := []struct {
		path   string
		want   Result
		output string
	}{
		{"/ok", Success, ""},
		{"/fail", Failure, "HTTP probe failed with statuscode: 503"},
		{"/local-redirect", Success, ""},
		{"/loop", Failure, "stopped after 10 redirects"},
		{"/elsewhere", Warning, "Probe terminated redirects"},
		{"/slow", Failure, "Client.Timeout exceeded"},
		{"/missing", Failure, "statuscode: 404"},
	}
	for _, tc := range cases {
		req, err := NewRequest(&v1.HTTPGetAction{Path: tc.path, Port: intstr.FromString("http"),
			HTTPHeaders: []v1.HTTPHeader{{Name: "X-Probe", Value: "yes"}}}, c, host)
		if err != nil {
			t.Fatal(err)
		}
		got, out := Do(client, req)
		if got != tc.want || !strings.Contains(out, tc.output) {
			t.Errorf("%s: %v %q, want %v containing %q", tc.path, got, trunc(out), tc.want, tc.output)
		}
		if tc.path == "/ok" && len(out) != MaxBody {
			t.Errorf("body read %d bytes, want at most %d", len(out), MaxBody)
		}
	}
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

func TestNewRequest(t *testing.T) {
	c := &v1.Container{Name: "app", Ports: []v1.ContainerPort{{Name: "web", ContainerPort: 8080}}}
	cases := []struct {
		name    string
		action  v1.HTTPGetAction
		podIP   string
		url     string
		host    string
		accept  string
		wantErr string
	}{
		{"defaults", v1.HTTPGetAction{Port: intstr.FromInt32(80), Path: "/healthz"}, "10.0.0.1", "http://10.0.0.1:80/healthz", "", "*/*", ""},
		{"named port, https, query", v1.HTTPGetAction{Port: intstr.FromString("web"), Path: "/x?y=1", Scheme: v1.URISchemeHTTPS}, "10.0.0.1", "https://10.0.0.1:8080/x?y=1", "", "*/*", ""},
		{"explicit host and Host header", v1.HTTPGetAction{Port: intstr.FromInt32(80), Host: "127.0.0.1",
			HTTPHeaders: []v1.HTTPHeader{{Name: "Host", Value: "example.com"}, {Name: "Accept", Value: ""}}}, "10.0.0.1", "http://127.0.0.1:80", "example.com", "", ""},
		{"IPv6 pod", v1.HTTPGetAction{Port: intstr.FromInt32(80), Path: "/"}, "fd00::1", "http://[fd00::1]:80/", "", "*/*", ""},
		{"unknown port name", v1.HTTPGetAction{Port: intstr.FromString("nope")}, "10.0.0.1", "", "", "", `couldn't find port "nope"`},
		{"port out of range", v1.HTTPGetAction{Port: intstr.FromInt32(70000)}, "10.0.0.1", "", "", "", "invalid port number"},
		{"no pod IP", v1.HTTPGetAction{Port: intstr.FromInt32(80)}, "", "", "", "", "no host"},
	}
	for _, tc := range cases {
		req, err := NewRequest(&tc.action, c, tc.podIP)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if req.URL.String() != tc.url || req.Host != tc.host || req.Header.Get("Accept") != tc.accept {
			t.Errorf("%s: url %s host %q accept %q", tc.name, req.URL, req.Host, req.Header.Get("Accept"))
		}
	}
}
