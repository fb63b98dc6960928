package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/nodelet/nodelet/internal/server"
)

// logPods: "web" has one container, "multi" two and an init container, "annotated" two and
// the default-container annotation; "web" also exists in another namespace.
func logPods() []v1.Pod {
	web := pod(v1.PodRunning, nil, cs("app", running, true, 0, none))
	web.Name = "web"
	other := web.DeepCopy()
	other.Namespace = "prod"
	multi := pod(v1.PodRunning, []v1.ContainerStatus{cs("init", terminated("Completed", 0), false, 0, none)},
		cs("app", running, true, 0, none), cs("sidecar", running, true, 0, none))
	multi.Name = "multi"
	annotated := multi.DeepCopy()
	annotated.Name = "annotated"
	annotated.Annotations = map[string]string{"kubectl.kubernetes.io/default-container": "sidecar"}
	return []v1.Pod{*web, *other, *multi, *annotated}
}

func TestLogs(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		path   string // the request the server gets, "" if none
		query  string
		code   int
		errOut string
	}{
		{"only container", []string{"logs", "web"}, "/containerLogs/default/web/app", "", 0, ""},
		{"pod/ prefix and namespace", []string{"logs", "pod/web", "-n", "prod"}, "/containerLogs/prod/web/app", "", 0, ""},
		{"all the options", []string{"logs", "web", "-f", "--previous", "--tail", "20", "--timestamps", "--limit-bytes=100", "--since", "90s"},
			"/containerLogs/default/web/app", "follow=true&limitBytes=100&previous=true&sinceSeconds=90&tailLines=20&timestamps=true", 0, ""},
		{"short flags", []string{"logs", "-p", "-c", "sidecar", "multi", "--since-time", "2026-03-01T11:00:00+01:00"},
			"/containerLogs/default/multi/sidecar", "previous=true&sinceTime=2026-03-01T11%3A00%3A00%2B01%3A00", 0, ""},
		{"tail 0", []string{"logs", "web", "--tail=0"}, "/containerLogs/default/web/app", "tailLines=0", 0, ""},
		{"default-container annotation", []string{"logs", "annotated"}, "/containerLogs/default/annotated/sidecar", "", 0, ""},
		{"several containers: the first, said on stderr", []string{"logs", "multi"}, "/containerLogs/default/multi/app", "", 0,
			"Defaulted container \"app\" out of: app, sidecar, init (init)\n"},
		{"unknown pod", []string{"logs", "nope"}, "", "", 1, "Error from server (NotFound): pods \"nope\" not found\n"},
		{"pod in another namespace", []string{"logs", "multi", "-n", "prod"}, "", "", 1, "Error from server (NotFound): pods \"multi\" not found\n"},
		{"no pod", []string{"logs"}, "", "", 2,
			"error: expected 'logs [-f] [-p] POD [-c CONTAINER]'.\nPOD is a required argument for the logs command\nSee 'nodelet logs --help' for usage.\n"},
		{"two pods", []string{"logs", "a", "b"}, "", "", 2, "error: expected one POD, got [\"a\" \"b\"]\nSee 'nodelet logs --help' for usage.\n"},
		{"since and since-time", []string{"logs", "web", "--since=1m", "--since-time=2026-03-01T11:00:00Z"}, "", "", 2,
			"error: at most one of `sinceTime` or `sinceSeconds` may be specified\nSee 'nodelet logs --help' for usage.\n"},
		{"bad since-time", []string{"logs", "web", "--since-time=noon"}, "", "", 2,
			"error: --since-time \"noon\" must be an RFC3339 time such as 2006-01-02T15:04:05Z\nSee 'nodelet logs --help' for usage.\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeAPI{pods: logPods(), logBody: "line 1\nline 2\n"}
			code, out, errOut := run(t, api, tc.args...)
			if code != tc.code || errOut != tc.errOut {
				t.Fatalf("exit %d, errOut %q; want %d, %q", code, errOut, tc.code, tc.errOut)
			}
			reqs := api.requests()
			if tc.path == "" {
				if len(reqs) != 0 || out != "" {
					t.Fatalf("requested %v, printed %q", reqs, out)
				}
				return
			}
			if len(reqs) != 1 || reqs[0].Path != tc.path || reqs[0].RawQuery != tc.query {
				t.Fatalf("requests %v, want %s?%s", reqs, tc.path, tc.query)
			}
			if out != "line 1\nline 2\n" {
				t.Errorf("out %q", out)
			}
		})
	}
}

func TestLogsServerError(t *testing.T) {
	api := &fakeAPI{pods: logPods(), logCode: http.StatusBadRequest,
		logBody: `container "app" in pod "web" is waiting to start: ContainerCreating`}
	code, out, errOut := run(t, api, "logs", "web")
	want := "Error from server (BadRequest): container \"app\" in pod \"web\" is waiting to start: ContainerCreating\n"
	if code != 1 || out != "" || errOut != want {
		t.Errorf("exit %d, out %q, errOut %q; want 1, %q", code, out, errOut, want)
	}
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	clk := testingclock.NewFakePassiveClock(now)
	if code := Run(context.Background(), nil, nil, &out, &errOut, clk, "v1.37.1-nodelet"); code != 2 || !strings.Contains(errOut.String(), "Usage:") {
		t.Errorf("no args: %d %q", code, errOut.String())
	}
	errOut.Reset()
	if code := Run(context.Background(), []string{"cp"}, nil, &out, &errOut, clk, "v1.37.1-nodelet"); code != 2 || !strings.HasPrefix(errOut.String(), "error: unknown command \"cp\" for \"nodelet\"") {
		t.Errorf("unknown command: %d %q", code, errOut.String())
	}
	out.Reset()
	if code := Run(context.Background(), []string{"logs", "--help"}, nil, &out, &errOut, clk, "v1.37.1-nodelet"); code != 0 || !strings.Contains(out.String(), "--previous") {
		t.Errorf("logs --help: %d %q", code, out.String())
	}
	if !IsCommand([]string{"get", "pods"}) || !IsCommand([]string{"logs"}) || IsCommand([]string{"--config", "x"}) || IsCommand(nil) {
		t.Error("IsCommand")
	}
}

// End to end: the CLI against the real read-only API serving CRI log files.

type podList []*v1.Pod

func (p podList) Pods() []*v1.Pod { return p }

type logDirs string

func (d logDirs) ContainerLogDir(namespace, name, container string) (string, bool) {
	return filepath.Join(string(d), namespace+"_"+name+"_uid", container), true
}

var (
	_ server.PodSource  = podList(nil)
	_ server.LogLocator = logDirs("")
)

func TestLogsAgainstTheServer(t *testing.T) {
	root := t.TempDir()
	web := pod(v1.PodRunning, nil, cs("app", running, true, 1, v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ContainerID: "c://0"}}))
	web.Name, web.UID = "web", types.UID("uid")
	web.Status.ContainerStatuses[0].ContainerID = "c://1"
	dir := filepath.Join(root, "default_web_uid", "app")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("0.log", "2026-03-01T11:00:00Z stdout F crashed\n")
	write("1.log", "2026-03-01T11:59:00.5Z stdout P hello \n2026-03-01T11:59:01Z stdout F world\n2026-03-01T11:59:02Z stderr F bye\n")

	srv, err := server.New(server.Config{Address: "127.0.0.1:0", Clock: testingclock.NewFakeClock(now)},
		server.Deps{Pods: podList{web}, Logs: logDirs(root)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		out  string
	}{
		{[]string{"logs", "web"}, "hello world\nbye\n"},
		{[]string{"logs", "web", "--tail=1", "--timestamps"}, "2026-03-01T11:59:02.000000000Z bye\n"},
		{[]string{"logs", "web", "--previous"}, "crashed\n"},
		{[]string{"get", "pods"}, "NAME   READY   STATUS    RESTARTS   AGE\nweb    1/1     Running   1          3h\n"},
	} {
		code, out, errOut := run(t, srv.Handler(), tc.args...)
		if code != 0 || out != tc.out || errOut != "" {
			t.Errorf("%v: exit %d, out %q, errOut %q; want out %q", tc.args, code, out, errOut, tc.out)
		}
	}
}

// A followed log is printed as it arrives and ends, exit code 0, when the context ends.
func TestLogsFollowInterrupted(t *testing.T) {
	lines := make(chan string)
	api := &fakeAPI{pods: logPods()}
	mux := http.NewServeMux()
	mux.Handle("/pods", api)
	mux.HandleFunc("/containerLogs/", func(w http.ResponseWriter, r *http.Request) {
		for {
			select {
			case l := <-lines:
				_, _ = w.Write([]byte(l))
				http.NewResponseController(w).Flush()
			case <-r.Context().Done():
				return
			}
		}
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()

	ctx, cancel := context.WithCancel(context.Background())
	out := &chanWriter{writes: make(chan string)}
	done := make(chan int)
	go func() {
		done <- Run(ctx, []string{"logs", "web", "-f", "--server", ts.URL}, nil, out, &bytes.Buffer{}, testingclock.NewFakePassiveClock(now), "v1.37.1-nodelet")
	}()
	lines <- "first\n"
	lines <- "second\n"
	var printed string
	for printed != "first\nsecond\n" {
		w := <-out.writes // blocks until Run prints: no time involved
		printed += w
		if !strings.HasPrefix("first\nsecond\n", printed) {
			t.Fatalf("printed %q", printed)
		}
	}
	cancel()
	for {
		select {
		case w := <-out.writes:
			t.Errorf("printed %q after the context ended", w)
		case code := <-done:
			if code != 0 {
				t.Errorf("exit %d, want 0", code)
			}
			return
		}
	}
}

// chanWriter hands every write over to the test, which reads it from writes.
type chanWriter struct{ writes chan string }

func (w *chanWriter) Write(p []byte) (int, error) {
	w.writes <- string(p)
	return len(p), nil
}
