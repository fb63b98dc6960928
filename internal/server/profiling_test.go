package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestProfiling: /debug/pprof/ is served only with Config.Profiling, and on the read-only API
// only when it listens on loopback.
func TestProfiling(t *testing.T) {
	cases := []struct {
		addr      string
		profiling bool
		want      bool
	}{
		{"127.0.0.1:10255", true, true},
		{"127.0.0.1:10255", false, false},
		{"0.0.0.0:10255", true, false},
	}
	for _, tc := range cases {
		e := newEnv(t)
		srv, err := New(Config{Address: tc.addr, Clock: e.clock, Profiling: tc.profiling}, Deps{Pods: e.pods, Logs: e.logs})
		if err != nil {
			t.Fatal(err)
		}
		code, body := get(t, srv.Handler(), "/debug/pprof/")
		served := code == http.StatusOK && strings.Contains(body, "goroutine")
		if served != tc.want {
			t.Errorf("%s, Profiling %v: GET /debug/pprof/ = %d, served %v, want %v", tc.addr, tc.profiling, code, served, tc.want)
		}
		if !tc.want {
			continue
		}
		if code, body := get(t, srv.Handler(), "/debug/pprof/heap?debug=1"); code != http.StatusOK || !strings.Contains(body, "heap profile") {
			t.Errorf("%s: GET /debug/pprof/heap?debug=1 = %d %.80q, want a heap profile", tc.addr, code, body)
		}
		if code, body := get(t, srv.Handler(), "/debug/pprof/cmdline"); code != http.StatusOK || body == "" {
			t.Errorf("%s: GET /debug/pprof/cmdline = %d %q", tc.addr, code, body)
		}
	}
}
