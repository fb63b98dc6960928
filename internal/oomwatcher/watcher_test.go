package oomwatcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

type fakeRecorder struct {
	mu     sync.Mutex
	events []string
}

var _ Recorder = (*fakeRecorder)(nil)

func (f *fakeRecorder) NodeEventf(eventType, reason, format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, eventType+" "+reason+" "+fmt.Sprintf(format, args...))
}

func (f *fakeRecorder) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.events...)
}

// fakeLog is the kernel log: records read from r, the seek and the close recorded.
type fakeLog struct {
	r      io.Reader
	mu     sync.Mutex
	seeks  []int
	closed bool
	close  func() error
}

var (
	_ io.ReadCloser = (*fakeLog)(nil)
	_ io.Seeker     = (*fakeLog)(nil)
)

func (f *fakeLog) Read(p []byte) (int, error) { return f.r.Read(p) }

func (f *fakeLog) Seek(offset int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seeks = append(f.seeks, whence)
	return 0, nil
}

func (f *fakeLog) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

func (f *fakeLog) Close() error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	if f.close != nil {
		return f.close()
	}
	return nil
}

// uptime of the fake machine when the watcher starts: 1000 s.
const uptime = 1000 * time.Second

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// oom is a kill's records at uptime+offset: a global OOM when cgroup is "", else a memory
// cgroup's.
func oom(offset time.Duration, cgroup, name string, pid int) string {
	us := (uptime + offset).Microseconds()
	first := fmt.Sprintf("4,1,%d,-;%s invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n", us, name)
	if cgroup == "" {
		return first + fmt.Sprintf("6,2,%d,-;oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/user.slice,task=%s,pid=%d,uid=0\n", us, name, pid) +
			fmt.Sprintf("3,3,%d,-;Out of memory: Killed process %d (%s) total-vm:1kB, anon-rss:1kB, file-rss:0kB\n SUBSYSTEM=x\n", us, pid, name)
	}
	return first + fmt.Sprintf("6,2,%d,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=c,mems_allowed=0,oom_memcg=%s,task_memcg=%s,task=%s,pid=%d,uid=0\n", us, cgroup, cgroup, name, pid)
}

func newWatcher(t *testing.T, log *fakeLog, openErr error) (*Watcher, *fakeRecorder) {
	t.Helper()
	rec := &fakeRecorder{}
	w, err := New(Config{}, Deps{Recorder: rec, Clock: testingclock.NewFakePassiveClock(now),
		Open: func(path string) (io.ReadCloser, error) {
			if path != DefaultPath {
				t.Errorf("opened %q, want %q", path, DefaultPath)
			}
			return log, openErr
		},
		Uptime: func() (time.Duration, error) { return uptime, nil }})
	if err != nil {
		t.Fatal(err)
	}
	return w, rec
}

func TestRecordsSystemOOMsOnly(t *testing.T) {
	log := &fakeLog{r: iotest.HalfReader(strings.NewReader(
		oom(time.Second, "/kubepods/burstable/pod1/c1", "app", 10) +
			"6,9,1001000000,-;unrelated\n" +
			oom(2*time.Second, "", "stress", 1234) +
			oom(3*time.Second, "", "java", 77)))}
	w, rec := newWatcher(t, log, nil)
	w.Run(context.Background())
	want := []string{
		"Warning SystemOOM System OOM encountered, victim process: stress, pid: 1234",
		"Warning SystemOOM System OOM encountered, victim process: java, pid: 77",
	}
	if got := rec.list(); !reflect.DeepEqual(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	if !reflect.DeepEqual(log.seeks, []int{io.SeekEnd}) || !log.isClosed() {
		t.Errorf("seeks %v (want SeekEnd), closed %v", log.seeks, log.isClosed())
	}
}

func TestSkipsKillsBeforeTheStart(t *testing.T) {
	// A reader that does not seek (or a kernel that would not) gives the whole log: the kills
	// before the start (less the clock slack) are not reported again.
	log := &fakeLog{r: strings.NewReader(
		oom(-uptime+time.Second, "", "at-boot", 1) +
			oom(-clockSlack-time.Microsecond, "", "just-before", 2) +
			oom(-clockSlack, "", "within-slack", 3) +
			oom(0, "", "at-start", 4) +
			oom(time.Hour, "", "later", 5))}
	w, rec := newWatcher(t, log, nil)
	w.Run(context.Background())
	want := []string{
		"Warning SystemOOM System OOM encountered, victim process: within-slack, pid: 3",
		"Warning SystemOOM System OOM encountered, victim process: at-start, pid: 4",
		"Warning SystemOOM System OOM encountered, victim process: later, pid: 5",
	}
	if got := rec.list(); !reflect.DeepEqual(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

func TestMessageWithoutProcess(t *testing.T) {
	// Upstream's message when the kill's process is unknown (a pid that is not a number).
	log := &fakeLog{r: strings.NewReader(
		"4,1,1000000000,-;x invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n" +
			"6,2,1000000000,-;oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/,task_memcg=/,task=x,pid=?,uid=0\n" +
			"6,3,1000000000,-;Killed process 0 (x)\n")}
	w, rec := newWatcher(t, log, nil)
	w.Run(context.Background())
	if got, want := rec.list(), []string{"Warning SystemOOM System OOM encountered"}; !reflect.DeepEqual(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// epipeOnce fails its first read with EPIPE (records overwritten before they were read).
type epipeOnce struct {
	io.Reader
	failed bool
}

func (e *epipeOnce) Read(p []byte) (int, error) {
	if !e.failed {
		e.failed = true
		return 0, syscall.EPIPE
	}
	return e.Reader.Read(p)
}

func TestReadingGoesOnAfterOverwrittenRecords(t *testing.T) {
	log := &fakeLog{r: &epipeOnce{Reader: strings.NewReader("6,1,2,-\n" + oom(time.Second, "", "stress", 1234))}}
	w, rec := newWatcher(t, log, nil)
	w.Run(context.Background())
	if got := rec.list(); len(got) != 1 {
		t.Errorf("events %q, want the one system OOM (after EPIPE and a malformed record)", got)
	}
}

func TestStopsOnAReadError(t *testing.T) {
	log := &fakeLog{r: io.MultiReader(strings.NewReader(oom(time.Second, "", "a", 1)), iotest.ErrReader(syscall.EINVAL),
		strings.NewReader(oom(time.Second, "", "b", 2)))}
	w, rec := newWatcher(t, log, nil)
	w.Run(context.Background())
	if got := rec.list(); len(got) != 1 || !log.isClosed() {
		t.Errorf("events %q, closed %v; want the first OOM only, and the log closed", got, log.isClosed())
	}
}

func TestCannotOpenTheKernelLog(t *testing.T) {
	w, rec := newWatcher(t, nil, errors.New("open /dev/kmsg: operation not permitted"))
	w.Run(context.Background()) // returns at once, logging why
	if got := rec.list(); len(got) != 0 {
		t.Errorf("events %q, want none", got)
	}
}

func TestCannotReadTheUptime(t *testing.T) {
	rec := &fakeRecorder{}
	w, err := New(Config{Path: "/nowhere"}, Deps{Recorder: rec, Clock: testingclock.NewFakePassiveClock(now),
		Open: func(string) (io.ReadCloser, error) {
			t.Error("opened the log without an uptime")
			return nil, errors.New("no")
		},
		Uptime: func() (time.Duration, error) { return 0, errors.New("no clock") }})
	if err != nil {
		t.Fatal(err)
	}
	w.Run(context.Background())
}

func TestContextEndClosesTheLog(t *testing.T) {
	pr, pw := io.Pipe()
	log := &fakeLog{r: pr, close: pr.Close}
	w, rec := newWatcher(t, log, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	// The write returns once the watcher has read it; the watcher blocks reading the next.
	if _, err := pw.Write([]byte(oom(time.Second, "", "stress", 1234))); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	if got := rec.list(); len(got) != 1 || !log.isClosed() {
		t.Errorf("events %q, closed %v; want one event and the log closed", got, log.isClosed())
	}
}

func TestNewRequiresItsDeps(t *testing.T) {
	if _, err := New(Config{}, Deps{Clock: testingclock.NewFakePassiveClock(now)}); err == nil {
		t.Error("New without a Recorder: no error")
	}
	if _, err := New(Config{}, Deps{Recorder: &fakeRecorder{}}); err == nil {
		t.Error("New without a Clock: no error")
	}
}
