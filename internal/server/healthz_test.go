package server

import (
	"net/http"
	"testing"
)

func TestHealthz(t *testing.T) {
	runtime := &fakeCheck{name: "runtime"}
	pleg := &fakeCheck{name: "pleg"}
	e := newEnv(t, runtime, pleg)
	h := e.srv.Handler()

	cases := []struct {
		name     string
		target   string
		failPleg bool
		code     int
		body     string
	}{
		{"all pass", "/healthz", false, 200, "ok"},
		{"all pass verbose", "/healthz?verbose", false, 200, "[+]ping ok\n[+]runtime ok\n[+]pleg ok\nhealthz check passed\n"},
		{"one fails", "/healthz", true, 500, "[+]ping ok\n[+]runtime ok\n[-]pleg failed: broken\nhealthz check failed\n"},
		{"one fails verbose", "/healthz?verbose=1", true, 500, "[+]ping ok\n[+]runtime ok\n[-]pleg failed: broken\nhealthz check failed\n"},
		{"failing check excluded", "/healthz?verbose&exclude=pleg", true, 200, "[+]ping ok\n[+]runtime ok\n[+]pleg excluded: ok\nhealthz check passed\n"},
		{"unknown exclude", "/healthz?verbose&exclude=nope", false, 200, "[+]ping ok\n[+]runtime ok\n[+]pleg ok\nwarn: some health checks cannot be excluded: no matches for \"nope\"\nhealthz check passed\n"},
		{"one check ok", "/healthz/runtime", true, 200, "ok"},
		{"ping", "/healthz/ping", true, 200, "ok"},
		{"one check failing", "/healthz/pleg", true, 500, "internal server error: broken\n"},
		{"unknown check", "/healthz/nope", false, 404, "health check \"nope\" not found\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pleg.err = nil
			if tc.failPleg {
				pleg.err = errBroken
			}
			code, body := get(t, h, tc.target)
			if code != tc.code || body != tc.body {
				t.Errorf("GET %s = %d %q, want %d %q", tc.target, code, body, tc.code, tc.body)
			}
		})
	}
}

func TestHealthzHeaders(t *testing.T) {
	e := newEnv(t)
	rec := httptestGet(e.srv.Handler(), "/healthz")
	if ct := rec.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if rec.Code != http.StatusOK || rec.Body.String() != "ok" {
		t.Errorf("with no checks: %d %q", rec.Code, rec.Body.String())
	}
}
