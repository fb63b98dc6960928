package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodelet/nodelet/internal/testharness"
)

// fakeOOM is a kernel OOM report with a unique process name and a pid no process has
// (above the kernel's pid_max), injected into the real kernel log.
type fakeOOM struct {
	name string
	pid  int
	// cgroup is the memory cgroup whose limit was hit; "" for a system (global) OOM.
	cgroup string
}

func newFakeOOM(t *testing.T, kind, cgroup string) fakeOOM {
	return fakeOOM{name: "nodelet-e2e-" + kind + "-" + testharness.RandomHex(3), pid: 5_000_000 + rand.IntN(1_000_000), cgroup: cgroup}
}

// lines are the kernel's records of the kill (kernel >= 4.19), with the kernel's levels.
func (o fakeOOM) lines() []string {
	first := fmt.Sprintf("<4>%s invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0", o.name)
	killed := fmt.Sprintf("<3>Out of memory: Killed process %d (%s) total-vm:51428kB, anon-rss:32420kB, file-rss:1496kB, shmem-rss:0kB, UID:0 pgtables:108kB oom_score_adj:0", o.pid, o.name)
	if o.cgroup == "" {
		return []string{first, fmt.Sprintf("<6>oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/system.slice/e2e.service,task=%s,pid=%d,uid=0", o.name, o.pid), killed}
	}
	return []string{first, fmt.Sprintf("<6>oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=c,mems_allowed=0,oom_memcg=%s,task_memcg=%s/c,task=%s,pid=%d,uid=0", o.cgroup, o.cgroup, o.name, o.pid),
		"<3>Memory cgroup out of memory: " + strings.TrimPrefix(killed, "<3>Out of memory: ")}
}

// inject writes the records into /dev/kmsg, one write per record (the kernel makes each write
// a record, of facility user). One open file per report: the kernel allows each 10 records in
// 5 s.
func (o fakeOOM) inject(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("open /dev/kmsg to inject an OOM report: %v", err)
	}
	defer f.Close()
	for _, l := range o.lines() {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatalf("write %q to /dev/kmsg: %v", l, err)
		}
	}
}

// message is the SystemOOM event's, as upstream's.
func (o fakeOOM) message() string {
	return fmt.Sprintf("System OOM encountered, victim process: %s, pid: %d", o.name, o.pid)
}

// nodeEvents reads the node's own events from the read-only API.
func (n *node) nodeEvents() []v1.Event {
	n.t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/events", n.port))
	if err != nil {
		n.t.Fatalf("GET /events: %v", err)
	}
	defer resp.Body.Close()
	var list v1.EventList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		n.t.Fatalf("GET /events: %v", err)
	}
	var out []v1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "Node" {
			out = append(out, e)
		}
	}
	return out
}

const watchingKernelLog = `"Watching the kernel log for system OOM kills"`

// Issue 15: the OOM watcher. A system OOM kill in the kernel log is a Warning SystemOOM node
// event naming the victim; a kill inside a container's memory cgroup is not; a restart does
// not report the kills before it again.
func TestSystemOOMEvent(t *testing.T) {
	n := startNode(t)
	n.logs.waitCount(t, 30*time.Second, 1, watchingKernelLog, `path="/dev/kmsg"`)

	ctr := newFakeOOM(t, "ctr", "/kubepods/burstable/pod"+testharness.RandomHex(8)+"/"+testharness.RandomHex(8))
	sys := newFakeOOM(t, "sys", "")
	ctr.inject(t)
	sys.inject(t)
	n.logs.waitCount(t, 10*time.Second, 1, `"Node event"`, `type="Warning"`, `reason="SystemOOM"`, sys.message())
	// The container's kill, before the system OOM, was parsed (and logged at -v 3), not missed.
	n.logs.waitCount(t, time.Second, 1, `"OOM kill in a memory cgroup; not a system OOM"`, ctr.name, ctr.cgroup)
	if got := n.logs.matching(`"Node event"`, ctr.name); len(got) != 0 {
		t.Errorf("a container's OOM kill was reported as a node event: %q", got)
	}
	var found bool
	for _, e := range n.nodeEvents() {
		if strings.Contains(e.Message, ctr.name) {
			t.Errorf("a container's OOM kill is a node event: %+v", e)
		}
		if e.Message == sys.message() {
			found = true
			if e.Type != v1.EventTypeWarning || e.Reason != "SystemOOM" || e.InvolvedObject.Name != n.name || e.Source.Component != "kubelet" {
				t.Errorf("SystemOOM event %+v: want a Warning on Node %s from the kubelet", e, n.name)
			}
		}
	}
	if !found {
		t.Errorf("GET /events has no event %q; node events: %+v", sys.message(), n.nodeEvents())
	}

	// A restart reads the kernel log from its end: the kill above is not reported again.
	n.kill9()
	n.start()
	n.logs.waitCount(t, 30*time.Second, 1, watchingKernelLog)
	after := newFakeOOM(t, "after", "")
	after.inject(t)
	n.logs.waitCount(t, 10*time.Second, 1, `"Node event"`, `reason="SystemOOM"`, after.message())
	if got := n.logs.matching(`"Node event"`, `reason="SystemOOM"`); len(got) != 1 {
		t.Errorf("after a restart, SystemOOM events %q; want only the kill after the restart", got)
	}
}

// Issue 15: in cluster mode the SystemOOM node event reaches the API server, on the Node.
func TestClusterSystemOOMEvent(t *testing.T) {
	cn := startClusterNode(t)
	cn.logs.waitCount(t, 30*time.Second, 1, watchingKernelLog)
	sys := newFakeOOM(t, "sys", "")
	sys.inject(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		evs, err := cn.cp.client.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + cn.name + ",reason=SystemOOM"})
		if err == nil {
			for _, e := range evs.Items {
				if e.Message == sys.message() {
					if e.Type != v1.EventTypeWarning || e.Source.Component != "kubelet" || e.Source.Host != cn.name {
						t.Errorf("SystemOOM event %+v: want a Warning from kubelet/%s", e, cn.name)
					}
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no SystemOOM event %q on Node %s in the API after 30 s (last error %v)", sys.message(), cn.name, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
