package server

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// A log with a line split in partial records, interleaved stdout and stderr, an empty line
// and a line that is not in the CRI format.
var sampleLog = []string{
	rec(-50*time.Second, "stdout", "F", "first"),
	rec(-40*time.Second, "stdout", "P", "long "),
	rec(-39*time.Second, "stderr", "F", "warning"),
	rec(-38*time.Second, "stdout", "P", "line "),
	rec(-37*time.Second, "stdout", "F", "joined"),
	"not a CRI line\n",
	rec(-20*time.Second, "stdout", "F", ""),
	rec(-10*time.Second, "stderr", "F", "last"),
}

func TestContainerLogs(t *testing.T) {
	e := newEnv(t)
	web := podWith("web", 1, "app")
	e.addPod(web)
	e.writeLog(web, "app", 0, rec(-100*time.Second, "stdout", "F", "previous run"))
	e.writeLog(web, "app", 1, sampleLog...)

	cases := []struct {
		name  string
		query string
		want  string
	}{
		{"all", "", "first\nwarning\nlong line joined\n\nlast\n"},
		{"timestamps", "?timestamps=true",
			"2026-03-01T11:59:10.000000000Z first\n" +
				"2026-03-01T11:59:21.000000000Z warning\n" +
				"2026-03-01T11:59:20.000000000Z long line joined\n" +
				"2026-03-01T11:59:40.000000000Z \n" +
				"2026-03-01T11:59:50.000000000Z last\n"},
		{"tailLines counts joined lines", "?tailLines=3", "long line joined\n\nlast\n"},
		{"legacy tail", "?tail=1", "last\n"},
		{"tailLines=0", "?tailLines=0", ""},
		{"tailLines more than there are", "?tailLines=100", "first\nwarning\nlong line joined\n\nlast\n"},
		{"limitBytes", "?limitBytes=10", "first\nwarn"},
		{"limitBytes with tail", "?tailLines=1&limitBytes=2", "la"},
		{"sinceTime", "?sinceTime=2026-03-01T11:59:21Z", "warning\n\nlast\n"},
		{"sinceSeconds", "?sinceSeconds=15", "last\n"},
		{"stderr only", "?stream=Stderr", "warning\nlast\n"},
		{"stdout only", "?stream=Stdout", "first\nlong line joined\n\n"},
		{"previous", "?previous=true", "previous run\n"},
		{"previous with timestamps", "?previous&timestamps", "2026-03-01T11:58:20.000000000Z previous run\n"},
		{"follow of an exited container", "?follow=true&previous=true", "previous run\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptestGet(e.srv.Handler(), "/containerLogs/default/web/app"+tc.query)
			if rec.Code != http.StatusOK {
				t.Fatalf("code %d: %s", rec.Code, rec.Body.String())
			}
			if got := rec.Body.String(); got != tc.want {
				t.Errorf("body\n got %q\nwant %q", got, tc.want)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

func TestContainerLogsUnfinishedEnd(t *testing.T) {
	e := newEnv(t)
	web := podWith("web", 0, "app")
	e.addPod(web)
	path := e.writeLog(web, "app", 0,
		rec(-3*time.Second, "stdout", "F", "done"),
		rec(-2*time.Second, "stderr", "P", "waiting for the rest"),
	)
	appendFile(t, path, strings.TrimSuffix(rec(-1*time.Second, "stdout", "F", "no newline"), "\n"))

	code, body := get(t, e.srv.Handler(), "/containerLogs/default/web/app?timestamps=1")
	want := "2026-03-01T11:59:57.000000000Z done\n" +
		"2026-03-01T11:59:59.000000000Z no newline" +
		"2026-03-01T11:59:58.000000000Z waiting for the rest"
	if code != http.StatusOK || body != want {
		t.Errorf("got %d %q, want %q", code, body, want)
	}
	code, body = get(t, e.srv.Handler(), "/containerLogs/default/web/app?tailLines=1")
	if code != http.StatusOK || body != "waiting for the rest" {
		t.Errorf("tail: got %d %q", code, body)
	}
}

func TestContainerLogsErrors(t *testing.T) {
	e := newEnv(t)
	web := podWith("web", 0, "app")
	web.Spec.InitContainers = []v1.Container{{Name: "init"}}
	e.addPod(web)
	e.writeLog(web, "app", 0, rec(0, "stdout", "F", "x"))
	creating := podWith("creating", 0, "app")
	creating.Status.ContainerStatuses[0].State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	e.addPod(creating)
	nologs := podWith("nologs", 0, "app")
	e.addPod(nologs)
	unlocated := podWith("unlocated", 0, "app")
	e.pods.set(append(e.pods.Pods(), unlocated)...)

	cases := []struct {
		target string
		code   int
		body   string
	}{
		{"/containerLogs/default/nope/app", 404, `pod "nope" not found in namespace "default"`},
		{"/containerLogs/other/web/app", 404, `pod "web" not found in namespace "other"`},
		{"/containerLogs/default/web/nope", 404, `container "nope" not found in pod "web"; its containers: [app init]`},
		{"/containerLogs/default/web/app?tailLines=-1", 400, "invalid tailLines -1: must be greater than or equal to 0"},
		{"/containerLogs/default/web/app?sinceTime=soon", 400, `invalid sinceTime "soon"`},
		{"/containerLogs/default/web/app?previous=true", 400, `previous terminated container "app" in pod "web" not found`},
		{"/containerLogs/default/web/init", 400, `container "init" in pod "web" is not available`},
		{"/containerLogs/default/creating/app", 400, `container "app" in pod "creating" is waiting to start: ContainerCreating`},
		{"/containerLogs/default/nologs/app", 404, `log of container "app" in pod "nologs": no log file in `},
		{"/containerLogs/default/unlocated/app", 404, `no log directory for container "app" in pod "unlocated"`},
		{"/containerLogs/default/web", 404, "404 page not found"},
	}
	for _, tc := range cases {
		t.Run(tc.target, func(t *testing.T) {
			code, body := get(t, e.srv.Handler(), tc.target)
			if code != tc.code || !strings.HasPrefix(body, tc.body) {
				t.Errorf("got %d %q, want %d %q", code, body, tc.code, tc.body)
			}
		})
	}
}

// follower reads a followed log over a real connection.
type follower struct {
	t      *testing.T
	e      *env
	resp   *http.Response
	lines  chan string
	cancel context.CancelFunc
}

func (e *env) follow(t *testing.T, ts *httptest.Server, target string) *follower {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("code %d", resp.StatusCode)
	}
	f := &follower{t: t, e: e, resp: resp, lines: make(chan string, 100), cancel: cancel}
	go func() {
		defer close(f.lines)
		r := bufio.NewReader(resp.Body)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				f.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	return f
}

// next waits for the next line; "EOF" when the stream ended. Each time the follower arms its
// check timer, the fake clock is stepped so that it checks at once even if fsnotify is slow.
func (f *follower) next() string {
	f.t.Helper()
	for {
		select {
		case l, ok := <-f.lines:
			if !ok {
				return "EOF"
			}
			return l
		case <-f.e.clock.Armed:
			f.e.clock.Step(followCheckPeriod)
		}
	}
}

// served wraps a handler to tell when its requests have returned.
func served(h http.Handler) (http.Handler, <-chan struct{}) {
	done := make(chan struct{}, 10)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { done <- struct{}{} }()
		h.ServeHTTP(w, r)
	}), done
}

func TestContainerLogsFollow(t *testing.T) {
	e := newEnv(t)
	web := podWith("web", 0, "app")
	e.addPod(web)
	path := e.writeLog(web, "app", 0,
		rec(-3*time.Second, "stdout", "F", "one"),
		rec(-2*time.Second, "stdout", "F", "two"),
	)
	h, done := served(e.srv.Handler())
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close) // after the follower's cleanup, which ends its request

	f := e.follow(t, ts, "/containerLogs/default/web/app?follow=true&tailLines=1&timestamps=true")
	if got := f.next(); got != "2026-03-01T11:59:58.000000000Z two\n" {
		t.Fatalf("tail line %q", got)
	}
	appendFile(t, path, rec(time.Second, "stdout", "P", "appended "))
	appendFile(t, path, rec(2*time.Second, "stdout", "F", "line"))
	if got := f.next(); got != "2026-03-01T12:00:01.000000000Z appended line\n" {
		t.Fatalf("appended line %q", got)
	}
	// An unterminated record is only read once its newline is there.
	appendFile(t, path, strings.TrimSuffix(rec(3*time.Second, "stderr", "F", "split write"), "\n"))
	appendFile(t, path, "\n")
	if got := f.next(); got != "2026-03-01T12:00:03.000000000Z split write\n" {
		t.Fatalf("split write %q", got)
	}

	// The container exits after a last line: the stream ends after it.
	appendFile(t, path, rec(4*time.Second, "stdout", "F", "bye"))
	exited := web.DeepCopy()
	exited.Status.ContainerStatuses[0].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ContainerID: exited.Status.ContainerStatuses[0].ContainerID}}
	e.pods.set(exited)
	if got := f.next(); got != "2026-03-01T12:00:04.000000000Z bye\n" {
		t.Fatalf("last line %q", got)
	}
	if got := f.next(); got != "EOF" {
		t.Fatalf("after exit: %q, want the end of the stream", got)
	}
	waitServed(t, done)
}

func TestContainerLogsFollowEndsWhenClientLeaves(t *testing.T) {
	e := newEnv(t)
	web := podWith("web", 0, "app")
	e.addPod(web)
	e.writeLog(web, "app", 0, rec(0, "stdout", "F", "hello"))
	h, done := served(e.srv.Handler())
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close) // after the follower's cleanup, which ends its request

	f := e.follow(t, ts, "/containerLogs/default/web/app?follow")
	if got := f.next(); got != "hello\n" {
		t.Fatalf("got %q", got)
	}
	f.cancel()
	waitServed(t, done)
}

func TestContainerLogsFollowReopensRecreatedFile(t *testing.T) {
	e := newEnv(t)
	web := podWith("web", 0, "app")
	e.addPod(web)
	path := e.writeLog(web, "app", 0, rec(0, "stdout", "F", "before rotation"))
	ts := httptest.NewServer(e.srv.Handler())
	t.Cleanup(ts.Close) // after the follower's cleanup, which ends its request

	f := e.follow(t, ts, "/containerLogs/default/web/app?follow")
	if got := f.next(); got != "before rotation\n" {
		t.Fatalf("got %q", got)
	}
	appendFile(t, path, rec(time.Second, "stdout", "F", "last of the old file"))
	if err := os.Rename(path, path+".20260301-120001"); err != nil {
		t.Fatal(err)
	}
	e.writeLog(web, "app", 0, rec(2*time.Second, "stdout", "F", "first of the new file"))
	for _, want := range []string{"last of the old file\n", "first of the new file\n"} {
		if got := f.next(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

func waitServed(t *testing.T, done <-chan struct{}) {
	t.Helper()
	<-done // the handler returned
}
