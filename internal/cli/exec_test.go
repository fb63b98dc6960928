package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	utilexec "k8s.io/utils/exec"
)

func TestParseStream(t *testing.T) {
	for _, tc := range []struct {
		verb    string
		args    []string
		wantURL string // path?query
		errLike string
	}{
		{"exec", []string{"web", "--", "ls", "-l"}, "/exec/default/web/?command=ls&command=-l&error=1&output=1", ""},
		{"exec", []string{"-it", "-n", "kube-system", "pod/web", "-c", "app", "--", "sh"}, "/exec/kube-system/web/app?command=sh&input=1&output=1&tty=1", ""},
		{"exec", []string{"web", "ls"}, "", "exec [POD] [COMMAND] is not supported; use exec [POD] -- [COMMAND]"},
		{"exec", []string{"web"}, "", "you must specify at least one command for the container"},
		{"exec", []string{"web", "--"}, "", "you must specify at least one command for the container"},
		{"exec", []string{"--", "ls"}, "", "POD is a required argument for the exec command"},
		{"exec", []string{"a", "b", "--", "ls"}, "", "expected one POD before --"},
		{"attach", []string{"web", "-i"}, "/attach/default/web/?error=1&input=1&output=1", ""},
		{"attach", []string{"web", "x"}, "", "expected a single argument: POD"},
		{"attach", nil, "", "POD is a required argument for the attach command"},
	} {
		t.Run(fmt.Sprintf("%s %s", tc.verb, strings.Join(tc.args, " ")), func(t *testing.T) {
			var out, errOut bytes.Buffer
			c := &command{name: tc.verb, out: &out, errOut: &errOut}
			r, code, done := c.parseStream(tc.verb, tc.args)
			if tc.errLike != "" {
				if !done || code != exitUsage || !strings.Contains(errOut.String(), tc.errLike) {
					t.Fatalf("done %v code %d stderr %q, want a usage error containing %q", done, code, errOut.String(), tc.errLike)
				}
				return
			}
			if done {
				t.Fatalf("refused: %q", errOut.String())
			}
			u := r.streamURL()
			if got := u.EscapedPath() + "?" + u.RawQuery; got != tc.wantURL {
				t.Errorf("URL %s, want %s", got, tc.wantURL)
			}
			if r.socket != DefaultSocket {
				t.Errorf("socket %q", r.socket)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	if code, ok := exitCode(fmt.Errorf("stream: %w", utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code 3"), Code: 3})); !ok || code != 3 {
		t.Errorf("exit code %d %v, want 3", code, ok)
	}
	if _, ok := exitCode(fmt.Errorf("connection refused")); ok {
		t.Error("a transport error taken for an exit code")
	}
}
