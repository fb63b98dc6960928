package oomwatcher

import (
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

var boot = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func at(us int64) time.Time { return boot.Add(time.Duration(us) * time.Microsecond) }

// A memory cgroup OOM as the test machine's kernel (6.18, cgroup v1) wrote it, less the
// stack and the memory statistics (which the parser reads and ignores).
var memcgOOM = []string{
	"4,12950,20857806527,-;sh invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=999",
	"4,12951,20857806543,-;CPU: 0 UID: 0 PID: 22695 Comm: sh Not tainted 6.18.44-fc-v782 #1 PREEMPT(none) ",
	"4,12955,20857806622,-; dump_header+0x43/0x1c0",
	"6,12978,20857806749,-;memory: usage 32768kB, limit 32768kB, failcnt 0",
	"6,12981,20857806754,-;Memory cgroup stats for /kubepods/burstable/pod52f1c4b8/cb352589:",
	"6,13026,20857806862,-;[  22695]     0 22695    12857     8479     8105      374         0   110592        0           999 sh",
	"6,13027,20857806865,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cb352589,mems_allowed=0,oom_memcg=/kubepods/burstable/pod52f1c4b8/cb352589,task_memcg=/kubepods/burstable/pod52f1c4b8/cb352589,task=sh,pid=22695,uid=0",
	"3,13028,20857806880,-;Memory cgroup out of memory: Killed process 22695 (sh) total-vm:51428kB, anon-rss:32420kB, file-rss:1496kB, shmem-rss:0kB, UID:0 pgtables:108kB oom_score_adj:999",
}

func TestParse(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		want  []Event
	}{
		{name: "memory cgroup OOM, kernel >= 4.19: the oom-kill line finishes it", lines: memcgOOM, want: []Event{{
			TimeOfDeath: at(20857806865), Pid: 22695, ProcessName: "sh", Constraint: "CONSTRAINT_MEMCG",
			ContainerName: "/kubepods/burstable/pod52f1c4b8/cb352589", VictimContainerName: "/kubepods/burstable/pod52f1c4b8/cb352589",
		}}},
		{name: "global OOM, kernel >= 4.19: global_oom, finished by the Killed process line", lines: []string{
			"4,100,5000000,-;stress invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0",
			"4,101,5000010,-;Mem-Info:",
			"6,102,5000020,-;oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/user.slice/user-0.slice/session-1.scope,task=stress,pid=1234,uid=0",
			"3,103,5000030,-;Out of memory: Killed process 1234 (stress) total-vm:1052936kB, anon-rss:1040388kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:2080kB oom_score_adj:0",
		}, want: []Event{{TimeOfDeath: at(5000030), Pid: 1234, ProcessName: "stress", ContainerName: "/", VictimContainerName: "/"}}},
		{name: "global OOM of a process in the root cgroup (task_memcg=/)", lines: []string{
			"4,100,5000000,-;java invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0",
			"6,102,5000020,-;oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/,task=java,pid=77,uid=1000",
			"3,103,5000030,-;Out of memory: Killed process 77 (java) total-vm:10kB, anon-rss:5kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:2080kB oom_score_adj:0",
		}, want: []Event{{TimeOfDeath: at(5000030), Pid: 77, ProcessName: "java", ContainerName: "/", VictimContainerName: "/"}}},
		{name: "oom-kill line naming the root memory cgroup (oom_memcg=/, task_memcg=/)", lines: []string{
			"4,100,5000000,-;java invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
			"6,102,5000020,-;oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/,task_memcg=/,task=java,pid=77,uid=0",
		}, want: []Event{{TimeOfDeath: at(5000020), Pid: 77, ProcessName: "java", ContainerName: "/", VictimContainerName: "/", Constraint: "CONSTRAINT_NONE"}}},
		{name: "memory cgroup OOM, kernel < 4.19: Task in, then Killed process (Kill process is not it)", lines: []string{
			"6,1,100,-;stress invoked oom-killer: gfp_mask=0x24000c0, order=0, oom_score_adj=0",
			"6,2,110,-;Task in /kubepods/burstable/podabc/ctr1 killed as a result of limit of /kubepods/burstable/podabc",
			"6,3,120,-;memory: usage 102400kB, limit 102400kB, failcnt 155",
			"3,4,130,-;Memory cgroup out of memory: Kill process 5678 (stress) score 1000 or sacrifice child",
			"3,5,140,-;Killed process 5678 (stress) total-vm:110556kB, anon-rss:100692kB, file-rss:1064kB, shmem-rss:0kB",
		}, want: []Event{{TimeOfDeath: at(140), Pid: 5678, ProcessName: "stress",
			ContainerName: "/kubepods/burstable/podabc/ctr1", VictimContainerName: "/kubepods/burstable/podabc"}}},
		{name: "cadvisor's legacy sample: cgroup names made absolute", lines: []string{
			"6,1,100,-;ruby invoked oom-killer: gfp_mask=0x201da, order=0, oom_score_adj=0",
			"6,2,110,-;Task in mem2 killed as a result of limit of mem3",
			"3,3,140,-;Killed process 19667 (evil-program2) total-vm:1460016kB, anon-rss:1414008kB, file-rss:4kB",
		}, want: []Event{{TimeOfDeath: at(140), Pid: 19667, ProcessName: "evil-program2", ContainerName: "/mem2", VictimContainerName: "/mem3"}}},
		{name: "global OOM, kernel < 4.19: no Task in line", lines: []string{
			"6,1,100,-;dd invoked oom-killer: gfp_mask=0x24201ca, order=0, oom_score_adj=0",
			"3,2,120,-;Out of memory: Kill process 42 (dd) score 900 or sacrifice child",
			"3,3,130,-;Killed process 42 (dd) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB",
		}, want: []Event{{TimeOfDeath: at(130), Pid: 42, ProcessName: "dd", ContainerName: "/", VictimContainerName: "/"}}},
		{name: "lines written to /dev/kmsg from user space (facility user), interleaved with others", lines: []string{
			"12,14147,22170625730,-;fake invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
			"6,14148,22170625740,-;nodelet0: port 3(veth8d5241f8) entered disabled state",
			"14,14149,22170625750,-;oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/system.slice/x.service,task=nodelet-e2e-x,pid=4100001,uid=0",
			"11,14150,22170625760,-;Out of memory: Killed process 4100001 (nodelet-e2e-x) total-vm:1kB, anon-rss:1kB, file-rss:0kB",
		}, want: []Event{{TimeOfDeath: at(22170625760), Pid: 4100001, ProcessName: "nodelet-e2e-x", ContainerName: "/", VictimContainerName: "/"}}},
		{name: "two OOMs in a row; records before the first and malformed records ignored", lines: append([]string{
			"3,1,10,-;Killed process 1 (init) total-vm:1kB",
			"not a kmsg record",
			"6,2,20,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/a,task_memcg=/a,task=a,pid=1,uid=0",
		}, append(memcgOOM,
			"4,3,20857806900,-;b invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
			"3,4,20857806910,-;Out of memory: Killed process 9 (b) total-vm:1kB")...),
			want: []Event{
				{TimeOfDeath: at(20857806865), Pid: 22695, ProcessName: "sh", Constraint: "CONSTRAINT_MEMCG",
					ContainerName: "/kubepods/burstable/pod52f1c4b8/cb352589", VictimContainerName: "/kubepods/burstable/pod52f1c4b8/cb352589"},
				{TimeOfDeath: at(20857806910), Pid: 9, ProcessName: "b", ContainerName: "/", VictimContainerName: "/"},
			}},
		{name: "an unfinished OOM is no event", lines: memcgOOM[:6]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Parse(boot, c.lines); !reflect.DeepEqual(got, c.want) {
				t.Errorf("Parse:\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestFeedReportsABadPid(t *testing.T) {
	p := NewParser(boot)
	for _, l := range []string{
		"4,1,10,-;x invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
		"6,2,20,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/a,task_memcg=/a/b,task=x,pid=?,uid=0",
	} {
		r, err := ParseRecord(l)
		if err != nil {
			t.Fatal(err)
		}
		if _, done, err := p.Feed(r); done || (r.Seq == 2) != (err != nil) {
			t.Fatalf("Feed(%q) = done %v, err %v", l, done, err)
		}
	}
	// As upstream: the event goes on and the Killed process line finishes it.
	r, _ := ParseRecord("3,3,30,-;Memory cgroup out of memory: Killed process 5 (x) total-vm:1kB")
	ev, done, err := p.Feed(r)
	want := Event{TimeOfDeath: at(30), Pid: 5, ProcessName: "x", ContainerName: "/a/b", VictimContainerName: "/a", Constraint: "CONSTRAINT_MEMCG"}
	if !done || err != nil || ev != want {
		t.Errorf("Feed = %+v, %v, %v; want %+v", ev, done, err, want)
	}
}

func TestParseRecord(t *testing.T) {
	cases := []struct {
		line    string
		want    Record
		wantErr bool
	}{
		{line: "6,14143,21949635092,-;nodelet0: port 3(veth8d5241f8) entered disabled state\n",
			want: Record{Facility: 0, Level: 6, Seq: 14143, SinceBoot: 21949635092 * time.Microsecond, Message: "nodelet0: port 3(veth8d5241f8) entered disabled state"}},
		// Written to /dev/kmsg from user space: facility user (1), level 4 by default, 3 with "<3>".
		{line: "12,14147,22170625730,-;nodelet-probe: hello", want: Record{Facility: 1, Level: 4, Seq: 14147, SinceBoot: 22170625730 * time.Microsecond, Message: "nodelet-probe: hello"}},
		{line: "11,14148,22170625802,-;x", want: Record{Facility: 1, Level: 3, Seq: 14148, SinceBoot: 22170625802 * time.Microsecond, Message: "x"}},
		// Continuation flag and CONFIG_PRINTK_CALLER's extra field; a ';' in the message.
		{line: "4,7,8,c,caller=T123;a;b", want: Record{Level: 4, Seq: 7, SinceBoot: 8 * time.Microsecond, Message: "a;b"}},
		{line: "6,1,2,-;", want: Record{Level: 6, Seq: 1, SinceBoot: 2 * time.Microsecond}},
		{line: "no separator", wantErr: true},
		{line: "6,1;x", wantErr: true},
		{line: "x,1,2,-;x", wantErr: true},
		{line: "-1,1,2,-;x", wantErr: true},
		{line: "6,x,2,-;x", wantErr: true},
		{line: "6,1,x,-;x", wantErr: true},
		{line: "6,1,-2,-;x", wantErr: true},
	}
	for _, c := range cases {
		got, err := ParseRecord(c.line)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("ParseRecord(%q) = %+v, %v; want %+v, error %v", c.line, got, err, c.want, c.wantErr)
		}
	}
}

func TestRecordReader(t *testing.T) {
	in := "6,1,2,-;first\n SUBSYSTEM=net\n DEVICE=n2\n6,2,3,-;second\n\n6,3,4,-;last without newline"
	for name, r := range map[string]io.Reader{
		"whole":       strings.NewReader(in),
		"byte a time": iotest.OneByteReader(strings.NewReader(in)),
		"data+EOF":    iotest.DataErrReader(strings.NewReader(in)),
	} {
		rr := newRecordReader(r)
		var got []string
		for {
			line, err := rr.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got = append(got, line)
		}
		if want := []string{"6,1,2,-;first", "6,2,3,-;second", "6,3,4,-;last without newline"}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: lines %q, want %q", name, got, want)
		}
		if _, err := rr.next(); err != io.EOF {
			t.Errorf("%s: after the end: %v, want EOF again", name, err)
		}
	}
}

func TestRecordReaderRefusesAnEndlessLine(t *testing.T) {
	rr := newRecordReader(strings.NewReader(strings.Repeat("x", 3*maxRecord)))
	if _, err := rr.next(); err == nil || err == io.EOF {
		t.Errorf("next = %v, want an error about the line's length", err)
	}
}
