package e2e

// The chaos suite (issue 15, "Fault figures"): nodelet SIGKILLed during a burst of pods,
// containerd SIGKILLed and restarted during a burst, the API server stopped for five minutes
// while static pods come and go. Each test is bounded and cleans up after itself, counts
// duplicate sandboxes and containers, lost pods and what the pods leave behind (sandboxes,
// containers, mounts, cgroups, directories), prints one CHAOS line with the figures (make chaos
// copies them into docs/reliability.md) and fails unless every count is zero.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/cri"
	"github.com/nodelet/nodelet/internal/testharness"
)

const (
	// chaosBurst is the number of pods written at once in the standalone scenarios.
	chaosBurst = 30
	// chaosKills is the number of SIGKILLs of nodelet during the burst.
	chaosKills = 20
	// chaosSeed seeds the moments of the kills, so a run can be repeated; NODELET_CHAOS_SEED
	// sets another.
	chaosSeed = 15
	// chaosOutage is how long the API server stays down (the figure).
	chaosOutage = 5 * time.Minute
	// chaosSettle is how long the counts keep being taken once every pod is where it should be,
	// so that a duplicate made late is seen.
	chaosSettle = 10 * time.Second
	// chaosCatchUp bounds the API server's catching up after the outage.
	chaosCatchUp = 60 * time.Second
	// chaosCatchUpMeasure bounds the measuring of the catching up past chaosCatchUp.
	chaosCatchUpMeasure = 3 * time.Minute
	// chaosLeakWait is how long what the pods leave may take to go once they are gone: more
	// than two container GC periods (1 min), the second one for what the first failed to remove.
	chaosLeakWait = 150 * time.Second
)

// chaosPod is one pod of a burst and what it must end as.
type chaosPod struct {
	name     string // metadata.name (the static pod's name is name-<node>)
	manifest string
	want     v1.PodPhase // Running (and Ready), Succeeded or Failed
}

// chaosSleeper runs one container that sleeps until it is stopped (SIGTERM ends it at once).
func chaosSleeper(name, meta string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s%s}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - {name: main, image: "busybox:1.35", command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]}
`, name, meta)
}

// chaosWithInit runs an init container that completes, then a sleeper.
func chaosWithInit(name, meta string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s%s}
spec:
  terminationGracePeriodSeconds: 2
  initContainers:
  - {name: init, image: "busybox:1.35", command: ["sh", "-c", "echo initialised"]}
  containers:
  - {name: main, image: "busybox:1.35", command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]}
`, name, meta)
}

// chaosEnds is a restartPolicy Never pod whose container exits with code after seconds.
func chaosEnds(name, meta string, seconds, code int) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s%s}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - {name: main, image: "busybox:1.35", command: ["sh", "-c", "sleep %d; exit %d"]}
`, name, meta, seconds, code)
}

// chaosBurstPods is the burst of the standalone scenarios: 23 sleepers, 3 pods with an init
// container, 3 restartPolicy Never pods that succeed at different moments and 1 that fails.
// Every container in them runs exactly once when nothing goes wrong.
func chaosBurstPods() []chaosPod {
	var pods []chaosPod
	for i := range chaosBurst {
		name := fmt.Sprintf("burst-%02d", i)
		switch {
		case i%10 == 3:
			pods = append(pods, chaosPod{name, chaosWithInit(name, ""), v1.PodRunning})
		case i%10 == 7:
			pods = append(pods, chaosPod{name, chaosEnds(name, "", 4+4*(i/10), 0), v1.PodSucceeded})
		case i == 29:
			pods = append(pods, chaosPod{name, chaosEnds(name, "", 10, 1), v1.PodFailed})
		default:
			pods = append(pods, chaosPod{name, chaosSleeper(name, ""), v1.PodRunning})
		}
	}
	return pods
}

// containerStates describes the pod's containers for a pod that is not where it must be: their
// states, reasons, exit codes, messages and restart counts.
func containerStates(p *v1.Pod) string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	for _, cs := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
		fmt.Fprintf(&b, "; %s restarts=%d", cs.Name, cs.RestartCount)
		switch st := cs.State; {
		case st.Waiting != nil:
			fmt.Fprintf(&b, " waiting %s %q", st.Waiting.Reason, st.Waiting.Message)
		case st.Running != nil:
			fmt.Fprintf(&b, " running since %s", st.Running.StartedAt.Format("15:04:05"))
		case st.Terminated != nil:
			fmt.Fprintf(&b, " terminated %s exit %d %q started %s finished %s", st.Terminated.Reason, st.Terminated.ExitCode,
				st.Terminated.Message, st.Terminated.StartedAt.Format("15:04:05"), st.Terminated.FinishedAt.Format("15:04:05"))
		}
	}
	if p.Status.Reason != "" || p.Status.Message != "" {
		fmt.Fprintf(&b, "; pod %s %q", p.Status.Reason, p.Status.Message)
	}
	return b.String()
}

// reached says whether the pod is where it must end.
func (cp chaosPod) reached(p *v1.Pod) bool {
	if p == nil {
		return false
	}
	if cp.want == v1.PodRunning {
		return isRunningReady(p)
	}
	return p.Status.Phase == cp.want
}

// ---------------------------------------------------------------- the runtime's view

// criObject is one sandbox or container the watcher saw.
type criObject struct {
	id, uid, pod string
	name         string // the container's name; "" for a sandbox
	attempt      uint32
	createdAt    int64
	states       []string // the states seen, in order, without repeats
	// started: the container was seen with a start time (RUNNING, or EXITED after it ran); a
	// container whose start died with the runtime is reported EXITED without one.
	started bool
	// failed: the container exited with a non-zero code (the runtime reports 255 for one whose
	// end it lost while it was down): running it again is the restart policy, not a duplicate.
	failed  bool
	checked bool // its status was read once it exited, for its start time and exit code
}

func (o *criObject) saw(state string) {
	if len(o.states) == 0 || o.states[len(o.states)-1] != state {
		o.states = append(o.states, state)
	}
}

func (o *criObject) String() string {
	created := "never (the runtime reports no creation time)"
	if o.createdAt > 0 {
		created = time.Unix(0, o.createdAt).Format("15:04:05.000")
	}
	return fmt.Sprintf("%.12s attempt %d created %s states %v", o.id, o.attempt, created, o.states)
}

// criWatch records every sandbox and container created for one node's pods, from the runtime's
// event stream (which sees objects that are created and removed between two listings) and from
// listings every 200 ms (which see objects whose creation event was lost when the runtime
// crashed), and the most sandboxes ready and containers running at once per pod.
type criWatch struct {
	t        *testing.T
	endpoint string
	suffix   string // the node's pods are named *-<node>

	mu         sync.Mutex
	sandboxes  map[string]*criObject
	containers map[string]*criObject
	maxReady   map[string]int // pod UID → most READY sandboxes in one listing
	maxRunning map[string]int // pod UID/container → most RUNNING instances in one listing
	polls      int
	pollErrs   int
	events     int

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func watchCRI(t *testing.T, endpoint, nodeName string) *criWatch {
	t.Helper()
	w := &criWatch{t: t, endpoint: endpoint, suffix: "-" + nodeName,
		sandboxes: map[string]*criObject{}, containers: map[string]*criObject{},
		maxReady: map[string]int{}, maxRunning: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	c, err := cri.Dial(ctx, endpoint, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// The event stream first: an object created before the first listing is in that listing.
	w.wg.Add(2)
	go w.streamEvents(ctx, c)
	go w.poll(ctx, c)
	t.Cleanup(func() {
		w.stop()
		c.Close()
	})
	return w
}

func (w *criWatch) stop() {
	w.cancel()
	w.wg.Wait()
}

func (w *criWatch) ours(podName string) bool { return strings.HasSuffix(podName, w.suffix) }

func (w *criWatch) streamEvents(ctx context.Context, c *cri.Client) {
	defer w.wg.Done()
	ch := make(chan *runtimeapi.ContainerEventResponse, 4096)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-ch:
				w.event(ev)
			}
		}
	}()
	for ctx.Err() == nil {
		// The stream breaks when containerd dies; open it again once it is back.
		_ = c.GetContainerEvents(ctx, ch, nil)
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (w *criWatch) event(ev *runtimeapi.ContainerEventResponse) {
	sb := ev.GetPodSandboxStatus()
	w.mu.Lock()
	defer w.mu.Unlock()
	created := ev.GetContainerEventType() == runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT
	if created {
		w.events++
	}
	// An event carries the sandbox's status and those of all its containers at that moment:
	// record the subject if it is new, and the states of every object already known.
	if md := sb.GetMetadata(); sb != nil && w.ours(md.GetName()) {
		o := w.sandboxes[sb.GetId()]
		if o == nil && created && sb.GetId() == ev.GetContainerId() {
			o = w.object(w.sandboxes, sb.GetId(), md.GetUid(), md.GetName(), "", md.GetAttempt(), sb.GetCreatedAt())
		}
		if o != nil {
			o.saw(strings.TrimPrefix(sb.GetState().String(), "SANDBOX_"))
		}
	}
	for _, cs := range ev.GetContainersStatuses() {
		l := cs.GetLabels()
		if !w.ours(l[container.PodNameLabel]) {
			continue
		}
		o := w.containers[cs.GetId()]
		if o == nil && created && cs.GetId() == ev.GetContainerId() {
			o = w.object(w.containers, cs.GetId(), l[container.PodUIDLabel], l[container.PodNameLabel],
				cs.GetMetadata().GetName(), cs.GetMetadata().GetAttempt(), cs.GetCreatedAt())
		}
		if o != nil {
			o.saw(strings.TrimPrefix(cs.GetState().String(), "CONTAINER_"))
			if cs.GetStartedAt() > 0 || cs.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
				o.started = true
			}
			if cs.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED && cs.GetExitCode() != 0 {
				o.failed = true
			}
		}
	}
}

// object returns the recorded object, recording it first if new; w.mu is held.
func (w *criWatch) object(m map[string]*criObject, id, uid, pod, name string, attempt uint32, created int64) *criObject {
	o := m[id]
	if o == nil {
		o = &criObject{id: id, uid: uid, pod: pod, name: name, attempt: attempt, createdAt: created}
		m[id] = o
	}
	return o
}

func (w *criWatch) poll(ctx context.Context, c *cri.Client) {
	defer w.wg.Done()
	for ctx.Err() == nil {
		sbs, err1 := c.ListPodSandbox(ctx, nil)
		ctrs, err2 := c.ListContainers(ctx, nil)
		w.mu.Lock()
		w.polls++
		if err1 != nil || err2 != nil {
			w.pollErrs++
		}
		if err1 == nil {
			ready := map[string]int{}
			for _, s := range sbs {
				md := s.GetMetadata()
				if !w.ours(md.GetName()) {
					continue
				}
				o := w.object(w.sandboxes, s.GetId(), md.GetUid(), md.GetName(), "", md.GetAttempt(), s.GetCreatedAt())
				o.saw(strings.TrimPrefix(s.GetState().String(), "SANDBOX_"))
				if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
					ready[o.uid]++
				}
			}
			for uid, n := range ready {
				w.maxReady[uid] = max(w.maxReady[uid], n)
			}
		}
		var toCheck []*criObject
		if err2 == nil {
			running := map[string]int{}
			for _, ct := range ctrs {
				l := ct.GetLabels()
				if !w.ours(l[container.PodNameLabel]) {
					continue
				}
				o := w.object(w.containers, ct.GetId(), l[container.PodUIDLabel], l[container.PodNameLabel],
					ct.GetMetadata().GetName(), ct.GetMetadata().GetAttempt(), ct.GetCreatedAt())
				o.saw(strings.TrimPrefix(ct.GetState().String(), "CONTAINER_"))
				if ct.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
					running[o.uid+"/"+o.name]++
					o.started = true
				}
				if ct.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED && !o.checked {
					toCheck = append(toCheck, o)
				}
			}
			for k, n := range running {
				w.maxRunning[k] = max(w.maxRunning[k], n)
			}
		}
		w.mu.Unlock()
		// An exited container never seen running: did it run (a short init container) or did
		// its start die with the runtime? Its start time says.
		for _, o := range toCheck {
			st, err := c.ContainerStatus(ctx, o.id, false)
			if err != nil {
				continue // removed meanwhile: its events said what it did
			}
			w.mu.Lock()
			o.checked = true
			if st.GetStatus().GetStartedAt() > 0 {
				o.started = true
			}
			if st.GetStatus().GetExitCode() != 0 {
				o.failed = true
			}
			w.mu.Unlock()
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// dupCounts are the duplicates the watcher saw.
type dupCounts struct {
	sandboxes, containers int      // duplicates
	replaced              int      // instances that replaced one that nothing duplicated (see duplicates)
	replacedContainers    int      // of those, containers: each adds one to its restartCount
	concurrent            int      // instances ready or running at once with another of the same pod or container
	created               int      // sandboxes and containers created in all
	details               []string // the pods and containers with duplicates
	replacements          []string // those with replaced instances only
}

func (d dupCounts) total() int { return d.sandboxes + d.containers }

// duplicates counts, for the pods named in want (pod name → UID; an empty UID means any), the
// sandboxes and container instances created beyond the one each needs that nothing explains.
//
// Every container of the chaos pods runs once by design: none fails, none is probed, the ones
// that exit are init containers or restartPolicy Never. So a pod needs one sandbox and each
// container one instance, and an instance that never came up (a sandbox never seen READY, a
// container never started: never seen RUNNING nor with a start time, its creation or start died
// with the runtime; or one that exited with a non-zero code, which the runtime reports for a
// container whose end it lost: running it again is the restart policy)
// is the only thing that explains another: that one is "replaced". Every other extra instance is
// a duplicate, and so is an instance ready or running at once with another (seen in one listing).
// The states come from the listings and from the runtime's events, which see short lives.
func (w *criWatch) duplicates(want map[string]string) dupCounts {
	w.mu.Lock()
	defer w.mu.Unlock()
	var d dupCounts
	group := func(m map[string]*criObject) map[string][]*criObject {
		out := map[string][]*criObject{}
		for _, o := range m {
			if uid, ok := want[o.pod]; ok && (uid == "" || uid == o.uid) {
				k := o.pod + " " + o.uid
				if o.name != "" {
					k += "/" + o.name
				}
				out[k] = append(out[k], o)
			}
		}
		for _, list := range out {
			sort.Slice(list, func(i, j int) bool {
				if list[i].attempt != list[j].attempt {
					return list[i].attempt < list[j].attempt
				}
				return list[i].createdAt < list[j].createdAt
			})
		}
		return out
	}
	report := func(what string, list []*criObject, atOnce, dups int) {
		var s []string
		for _, o := range list {
			s = append(s, o.String())
		}
		to := &d.replacements
		if dups > 0 {
			to = &d.details
		}
		*to = append(*to, fmt.Sprintf("%s: %d instances, %d at once at most, %d duplicates: %s",
			what, len(list), atOnce, dups, strings.Join(s, "; ")))
	}
	for k, list := range group(w.sandboxes) {
		d.created += len(list)
		atOnce := w.maxReady[list[0].uid]
		dups := 0
		for i := 1; i < len(list); i++ {
			if slices.Contains(list[i-1].states, "READY") {
				dups++
			}
		}
		dups = max(dups, atOnce-1)
		d.sandboxes += dups
		d.replaced += len(list) - 1 - dups
		d.concurrent += max(atOnce-1, 0)
		if len(list) > 1 {
			report("pod "+k+" sandboxes", list, atOnce, dups)
		}
	}
	for k, list := range group(w.containers) {
		d.created += len(list)
		o := list[0]
		atOnce := w.maxRunning[o.uid+"/"+o.name]
		dups := 0
		for i := 1; i < len(list); i++ {
			if (slices.Contains(list[i-1].states, "RUNNING") || list[i-1].started) && !list[i-1].failed {
				dups++
			}
		}
		dups = max(dups, atOnce-1)
		d.containers += dups
		d.replaced += len(list) - 1 - dups
		d.replacedContainers += len(list) - 1 - dups
		d.concurrent += max(atOnce-1, 0)
		if len(list) > 1 {
			report("container "+k, list, atOnce, dups)
		}
	}
	sort.Strings(d.details)
	sort.Strings(d.replacements)
	return d
}

// readyPods is the number of pods with a sandbox seen READY.
func (w *criWatch) readyPods() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.maxReady)
}

// objectIDs are the IDs of every sandbox and container seen, and the pods' UIDs.
func (w *criWatch) objectIDs() (ids []string, uids []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := map[string]bool{}
	for _, m := range []map[string]*criObject{w.sandboxes, w.containers} {
		for id, o := range m {
			ids = append(ids, id)
			if o.uid != "" && !seen[o.uid] {
				seen[o.uid] = true
				uids = append(uids, o.uid)
			}
		}
	}
	sort.Strings(uids)
	return ids, uids
}

// seen lists what the watcher saw of a pod (by its name): its sandboxes and containers, with
// the states they went through.
func (w *criWatch) seen(podName string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, m := range []map[string]*criObject{w.sandboxes, w.containers} {
		for _, o := range m {
			if o.pod == podName {
				out = append(out, fmt.Sprintf("%s %q started=%v failed=%v", o, o.name, o.started, o.failed))
			}
		}
	}
	sort.Strings(out)
	return out
}

func (w *criWatch) stats() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf("%d sandboxes and %d containers seen; %d listings (%d failed), %d creation events",
		len(w.sandboxes), len(w.containers), w.polls, w.pollErrs, w.events)
}

// ---------------------------------------------------------------- leaks

// leakCounts is what the pods left behind once they were gone.
type leakCounts struct {
	sandboxes, containers, mounts, cgroups, dirs int
	details                                      []string
	// runtimeMounts are the runtime's mounts (under the test environment's directory) that
	// appeared during the test, name none of the pods' sandboxes or containers and that no
	// sandbox uses: the runtime's own leaks (network namespaces of sandboxes whose creation the
	// runtime's death cut short), counted apart.
	runtimeMounts []string
	// cgroupDirs are the pod cgroup directories left, in every hierarchy.
	cgroupDirs []string
}

func (l leakCounts) total() int { return l.sandboxes + l.containers + l.mounts + l.cgroups + l.dirs }

// taskBundleDir is where containerd keeps its tasks' bundles (their rootfs mounted inside).
const taskBundleDir = "/io.containerd.runtime.v2.task/"

// allMounts lists every mount point of this mount namespace.
func allMounts() map[string]bool {
	out := map[string]bool{}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 4 {
			out[strings.ReplaceAll(fields[4], `\040`, " ")] = true
		}
	}
	return out
}

// countLeaks looks for what the pods (by UID) and their sandboxes and containers (by ID) left:
// sandboxes and containers in the runtime, mounts under the node's root directory, mounts of
// the runtime (under the test environment's directory) that were not there before the test
// (baseline) or that name one of ids, pod cgroups in every hierarchy, pod directories under
// <root>/pods and pod log directories.
func (n *node) countLeaks(uids, ids []string, baseline map[string]bool) leakCounts {
	var l leakCounts
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	isUID := map[string]bool{}
	for _, u := range uids {
		isUID[u] = true
	}
	c, err := cri.Dial(ctx, n.env.endpoint, 10*time.Second)
	if err != nil {
		l.sandboxes++
		l.details = append(l.details, fmt.Sprintf("cannot list the runtime's objects: %v", err))
	} else {
		defer c.Close()
		sbs, err1 := c.ListPodSandbox(ctx, nil)
		ctrs, err2 := c.ListContainers(ctx, nil)
		if err := errors.Join(err1, err2); err != nil {
			l.sandboxes++
			l.details = append(l.details, fmt.Sprintf("cannot list the runtime's objects: %v", err))
		}
		for _, s := range sbs {
			if isUID[s.GetMetadata().GetUid()] {
				l.sandboxes++
				l.details = append(l.details, fmt.Sprintf("sandbox %.12s of %s (%s)", s.GetId(), s.GetMetadata().GetName(), s.GetState()))
			}
		}
		for _, ct := range ctrs {
			if isUID[ct.GetLabels()[container.PodUIDLabel]] {
				l.containers++
				l.details = append(l.details, fmt.Sprintf("container %.12s %s of %s (%s)", ct.GetId(), ct.GetMetadata().GetName(),
					ct.GetLabels()[container.PodNameLabel], ct.GetState()))
			}
		}
	}
	rootMounts := testharness.MountsUnder(n.rootDir)
	for _, m := range rootMounts {
		l.mounts++
		l.details = append(l.details, "mount "+m)
	}
	envDir := testharness.TestenvDir() + "/"
	for m := range allMounts() {
		if slices.Contains(rootMounts, m) {
			continue
		}
		switch {
		case strings.HasPrefix(m, envDir) && strings.Contains(m, taskBundleDir) && !baseline[m]:
			// A task bundle's rootfs, which containerd mounts itself when it creates a task and
			// leaves when that creation is cancelled (nodelet killed during StartContainer); CRI
			// gives nodelet no hold on it, and RemoveContainer does not unmount it. The runtime's.
			l.runtimeMounts = append(l.runtimeMounts, m)
		case slices.ContainsFunc(ids, func(id string) bool { return strings.Contains(m, id) }):
			l.mounts++
			l.details = append(l.details, "mount "+m)
		case strings.HasPrefix(m, envDir) && !baseline[m] && !usedBySandbox(ctx, c, m):
			l.runtimeMounts = append(l.runtimeMounts, m)
		}
	}
	sort.Strings(l.runtimeMounts)
	for _, uid := range uids {
		left := testharness.PodCgroups(uid)
		if len(left) > 0 {
			l.cgroups++
			l.cgroupDirs = append(l.cgroupDirs, left...)
			var inside []string
			_ = filepath.WalkDir(left[0], func(path string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() && path != left[0] {
					procs, _ := os.ReadFile(filepath.Join(path, "cgroup.procs"))
					inside = append(inside, fmt.Sprintf("%s (%d processes)", filepath.Base(path), len(strings.Fields(string(procs)))))
				}
				return nil
			})
			procs, _ := os.ReadFile(filepath.Join(left[0], "cgroup.procs"))
			l.details = append(l.details, fmt.Sprintf("cgroup of pod %s in %d hierarchies, e.g. %s: %d processes, child cgroups %v",
				uid, len(left), left[0], len(strings.Fields(string(procs))), inside))
		}
		if _, err := os.Stat(filepath.Join(n.rootDir, "pods", uid)); err == nil {
			l.dirs++
			l.details = append(l.details, "pod directory "+filepath.Join(n.rootDir, "pods", uid))
		}
		logs, _ := filepath.Glob(filepath.Join(n.logsDir, "*_"+uid))
		for _, d := range logs {
			l.dirs++
			l.details = append(l.details, "pod log directory "+d)
		}
	}
	sort.Strings(l.details)
	return l
}

// usedBySandbox says whether a sandbox of the runtime names path (its network namespace) in
// its verbose status.
func usedBySandbox(ctx context.Context, c *cri.Client, path string) bool {
	if c == nil {
		return true
	}
	sbs, err := c.ListPodSandbox(ctx, nil)
	if err != nil {
		return true
	}
	for _, s := range sbs {
		st, err := c.PodSandboxStatus(ctx, s.GetId(), true)
		if err != nil {
			return true
		}
		for _, v := range st.GetInfo() {
			if strings.Contains(v, path) {
				return true
			}
		}
	}
	return false
}

// removeRuntimeMounts unmounts the runtime's leaked mounts (and removes their mount points),
// so that the test leaves the machine as it found it.
func removeRuntimeMounts(t *testing.T, mounts []string) {
	for _, m := range mounts {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting the runtime's leaked %s: %v", m, err)
			continue
		}
		_ = os.Remove(m)
	}
}

// removeLeakedCgroups removes the pod cgroups left (their child cgroups first), so that the
// test leaves the machine as it found it; a cgroup with a process left in it stays, reported.
func removeLeakedCgroups(t *testing.T, dirs []string) {
	for _, dir := range dirs {
		var all []string
		_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				all = append(all, path)
			}
			return nil
		})
		for i := len(all) - 1; i >= 0; i-- {
			if err := syscall.Rmdir(all[i]); err != nil {
				t.Errorf("removing the leaked cgroup %s: %v", all[i], err)
			}
		}
	}
}

// waitNoLeaks counts the leaks until there are none or timeout passes, and returns the last
// count: a leak is what is still there after timeout.
func (n *node) waitNoLeaks(uids, ids []string, baseline map[string]bool, timeout time.Duration) leakCounts {
	deadline := time.Now().Add(timeout)
	for {
		l := n.countLeaks(uids, ids, baseline)
		if l.total() == 0 || time.Now().After(deadline) {
			return l
		}
		time.Sleep(time.Second)
	}
}

// ---------------------------------------------------------------- standalone bursts

// chaosRun is the common part of the standalone scenarios.
type chaosRun struct {
	t        *testing.T
	n        *node
	w        *criWatch
	pods     []chaosPod
	baseline map[string]bool
	start    time.Time
	// runtimeDown, when set, is when the runtime was down: a container that ended then may
	// have lost its exit status in the runtime (see runtimeLost).
	runtimeDown [2]time.Time
}

// runtimeLost says why a pod that is not where it must end is no fault of nodelet's: a
// container that ended while containerd was down, which containerd then reports exited with
// code 255 and reason Unknown (the exit status it could not collect), so that a pod that must
// succeed fails, as it would under upstream's kubelet. "" when that is not the case.
func (r *chaosRun) runtimeLost(cp chaosPod, p *v1.Pod) string {
	if r.runtimeDown[0].IsZero() || p == nil || cp.want == v1.PodRunning {
		return ""
	}
	for _, cs := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
		term := cs.State.Terminated
		if term == nil || term.ExitCode != 255 || term.Reason != "Unknown" {
			continue
		}
		// finishedAt is in whole seconds; the runtime stamps it when it recovers.
		if f := term.FinishedAt.Time; !f.Before(r.runtimeDown[0].Truncate(time.Second)) && !f.After(r.runtimeDown[1].Add(5*time.Second)) {
			return fmt.Sprintf("%s: container %s ended while containerd was down (finished %s, exit 255, reason Unknown: its exit status lost in the runtime)",
				cp.name, cs.Name, f.Format("15:04:05"))
		}
	}
	return ""
}

func startChaos(t *testing.T) *chaosRun {
	r := &chaosRun{t: t, start: time.Now(), pods: chaosBurstPods()}
	r.n = startNode(t)
	r.baseline = allMounts()
	r.w = watchCRI(t, r.n.env.endpoint, r.n.name)
	return r
}

func (r *chaosRun) writeAll() {
	for _, p := range r.pods {
		r.n.write(p.name+".yaml", p.manifest)
	}
}

// settled is where the pods ended.
type settled struct {
	lost []string // pods not where they must be
	// excused are pods not where they must be through no fault of nodelet's (runtimeLost).
	excused []string
	total   int // the sum of the containers' restartCounts
	uids    map[string]string
}

// settle waits until every pod is where it must end (at most timeout), lets chaosSettle pass,
// and says where they are then.
func (r *chaosRun) settle(timeout time.Duration) settled {
	n := r.n
	deadline := time.Now().Add(timeout)
	check := func() settled {
		var st settled
		pods, err := n.pods()
		if err != nil {
			st.lost = []string{"all (/pods: " + err.Error() + ")"}
			return st
		}
		byName := map[string]*v1.Pod{}
		for i := range pods {
			byName[pods[i].Name] = &pods[i]
		}
		st.uids = map[string]string{}
		st.excused = nil
		for _, cp := range r.pods {
			p := byName[n.podName(cp.name)]
			if why := r.runtimeLost(cp, p); !cp.reached(p) && why != "" {
				st.excused = append(st.excused, why)
			} else if !cp.reached(p) {
				phase := "absent"
				if p != nil {
					phase = string(p.Status.Phase)
				}
				st.lost = append(st.lost, fmt.Sprintf("%s (%s, want %s%s)", cp.name, phase, cp.want, containerStates(p)))
			}
			if p != nil {
				st.uids[p.Name] = string(p.UID)
				for _, cs := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
					st.total += int(cs.RestartCount)
				}
			}
		}
		return st
	}
	for {
		st := check()
		if len(st.lost) == 0 || time.Now().After(deadline) {
			r.t.Logf("%d of %d pods where they must be %v after the start; settling %v", len(r.pods)-len(st.lost), len(r.pods),
				time.Since(r.start).Round(time.Second), chaosSettle)
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(chaosSettle)
	return check()
}

// finish counts the duplicates, removes every manifest, waits for the pods to go, counts the
// leaks, prints the CHAOS line and fails the test unless every figure is zero (restarts too
// when noRestarts).
func (r *chaosRun) finish(name, faults string, st settled, noRestarts bool) {
	t, n := r.t, r.n
	want := map[string]string{}
	for _, cp := range r.pods {
		want[n.podName(cp.name)] = st.uids[n.podName(cp.name)]
	}
	dups := r.w.duplicates(want)
	ents, _ := os.ReadDir(n.manifests)
	for _, e := range ents {
		n.remove(e.Name())
	}
	gone := time.Now()
	for time.Since(gone) < 90*time.Second {
		if pods, err := n.pods(); err == nil && len(pods) == 0 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	r.w.stop() // every object is recorded: the leaks are looked for by their IDs
	ids, podUIDs := r.w.objectIDs()
	leaks := n.waitNoLeaks(podUIDs, ids, r.baseline, chaosLeakWait)
	if held := n.interruptedStarts(podUIDs); leaks.total() > 0 && len(held) > 0 {
		// containerd 2.4 keeps the task of a container whose start a kill cut short ("failed
		// to create containerd task: ...: context canceled") and refuses to remove the
		// container ("cannot delete running task"); CRI gives nodelet no way to end that task.
		// A restart of containerd releases it, and nodelet must then clean up the rest.
		t.Logf("containerd holds the tasks of %d containers whose start a kill cut short %v; restarting containerd, which releases them", len(held), held)
		restartTestenvContainerd(t, 0)
		leaks = n.waitNoLeaks(podUIDs, ids, r.baseline, chaosLeakWait)
	}
	t.Logf("pods removed and leaks counted in %v; %s", time.Since(gone).Round(time.Second), r.w.stats())
	t.Logf("CHAOS name=%s pods=%d %s duplicates=%d lost=%d restarts=%d replaced=%d leaked_sandboxes=%d leaked_containers=%d leaked_mounts=%d leaked_cgroups=%d leaked_dirs=%d runtime_leaked_mounts=%d seconds=%d",
		name, len(r.pods), faults, dups.total(), len(st.lost), st.total, dups.replaced,
		leaks.sandboxes, leaks.containers, leaks.mounts, leaks.cgroups, leaks.dirs, len(leaks.runtimeMounts), int(time.Since(r.start).Seconds()))
	for _, m := range leaks.runtimeMounts {
		t.Logf("the runtime leaked (not counted against nodelet; unmounted now): %s", m)
	}
	removeRuntimeMounts(t, leaks.runtimeMounts)
	removeLeakedCgroups(t, leaks.cgroupDirs)
	t.Logf("created: %d sandboxes and containers for %d pods (%d duplicate sandboxes, %d duplicate containers, %d replaced, %d live at once with another)",
		dups.created, len(r.pods), dups.sandboxes, dups.containers, dups.replaced, dups.concurrent)
	if len(dups.replacements) > 0 {
		// One log entry: CI's summary shows the first line of each (hack/lib/failures.awk).
		t.Logf("replaced: %d pods' sandboxes or containers, one instance that never ran for another:\n%s",
			len(dups.replacements), strings.Join(dups.replacements, "\n"))
	}
	for _, d := range dups.details {
		t.Errorf("duplicate: %s", d)
	}
	for _, e := range st.excused {
		t.Logf("not counted as lost: %s", e)
	}
	if len(st.lost) > 0 {
		t.Errorf("lost pods: %v", st.lost)
		for _, cp := range r.pods {
			if slices.ContainsFunc(st.lost, func(l string) bool { return strings.HasPrefix(l, cp.name+" ") }) {
				t.Logf("the runtime's view of lost pod %s: %v", cp.name, r.w.seen(n.podName(cp.name)))
			}
		}
	}
	// A container created by a nodelet killed before it started it is replaced, as upstream's
	// kubelet replaces it (computePodActions starts a new instance of a Created container), and
	// the replacement's restartCount is one more: those restarts are no fault.
	if noRestarts && st.total > dups.replacedContainers {
		t.Errorf("%d container restarts reported, %d of them replacements of containers that never ran; every container here runs once",
			st.total, dups.replacedContainers)
	}
	for _, d := range leaks.details {
		t.Errorf("leaked: %s", d)
	}
}

// interruptedStarts lists the containers of the pods (by UID) that containerd marked exited
// without their ever starting because their start was cancelled.
func (n *node) interruptedStarts(uids []string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := cri.Dial(ctx, n.env.endpoint, 10*time.Second)
	if err != nil {
		return nil
	}
	defer c.Close()
	ctrs, err := c.ListContainers(ctx, nil)
	if err != nil {
		return nil
	}
	var out []string
	for _, ct := range ctrs {
		if !slices.Contains(uids, ct.GetLabels()[container.PodUIDLabel]) || ct.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED {
			continue
		}
		st, err := c.ContainerStatus(ctx, ct.GetId(), false)
		if err == nil && st.GetStatus().GetStartedAt() == 0 && strings.Contains(st.GetStatus().GetMessage(), "context canceled") {
			out = append(out, fmt.Sprintf("%.12s", ct.GetId()))
		}
	}
	return out
}

// restartTestenvContainerd SIGKILLs the test environment's containerd, waits for it to exit,
// leaves it down for downFor and starts it again. It returns the killed pid and when it had
// exited.
func restartTestenvContainerd(t *testing.T, downFor time.Duration) (pid int, killed time.Time) {
	pid = testenvContainerdPID(t)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL containerd (pid %d): %v", pid, err)
	}
	for i := 0; i < 50 && processAlive(pid); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	killed = time.Now()
	time.Sleep(downFor)
	if out, err := runTestenv("up"); err != nil {
		t.Fatalf("%s up: %v\n%s", testenvScript, err, out)
	}
	return pid, killed
}

// TestChaosKillNodeletDuringBurst: 30 pods are written at once and nodelet is SIGKILLed 20
// times, each time 0.3-2 s after it started (pseudo-random, fixed seed), and started again. In
// the end every pod runs (or ended as it must), no sandbox or container was created twice, and
// once the manifests are gone nothing of the pods remains.
func TestChaosKillNodeletDuringBurst(t *testing.T) {
	r := startChaos(t)
	n := r.n
	var earlier []*logWatcher
	t.Cleanup(func() {
		if t.Failed() {
			// The harness prints the last nodelet's log; these are the ones before.
			var runs []string
			for i, l := range earlier {
				var lines []string
				for _, what := range []string{"Created pod sandbox", "Started container", "Killing container", "rror"} {
					lines = append(lines, l.matching(what)...)
				}
				if len(lines) > 0 {
					runs = append(runs, fmt.Sprintf("nodelet run %d of %d (killed):\n%s", i+1, len(earlier)+1, strings.Join(lines, "\n")))
				}
			}
			t.Logf("the %d killed nodelet runs: the sandboxes and containers they made or killed, their errors:\n%s",
				len(earlier), strings.Join(runs, "\n"))
		}
	})
	r.writeAll()
	seed := uint64(chaosSeed)
	if s, err := strconv.ParseUint(os.Getenv("NODELET_CHAOS_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("kill moments seeded with %d (NODELET_CHAOS_SEED sets another)", seed)
	rng := mrand.New(mrand.NewPCG(seed, seed))
	for range chaosKills {
		time.Sleep(300*time.Millisecond + time.Duration(rng.IntN(1700))*time.Millisecond)
		n.kill9()
		earlier = append(earlier, n.logs)
		n.start()
	}
	t.Logf("%d SIGKILLs done %v after the burst", chaosKills, time.Since(r.start).Round(100*time.Millisecond))
	r.finish("kill-nodelet", fmt.Sprintf("kills=%d", chaosKills), r.settle(3*time.Minute), true)
}

// testenvContainerdPID is the pid of the test environment's containerd, from the pid file
// hack/testenv.sh keeps.
func testenvContainerdPID(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testharness.TestenvDir(), "run", "containerd.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("containerd pid file: %v", err)
	}
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if !strings.Contains(string(cmdline), testharness.TestenvDir()) {
		t.Fatalf("pid %d is not the test environment's containerd: %q", pid, cmdline)
	}
	return pid
}

// processAlive: the process exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(after, "Z")
}

// TestChaosContainerdRestartDuringBurst: 30 pods are written at once; when 10 of them have a
// ready sandbox (the others are being created) containerd is SIGKILLed, and started again 3 s
// after. In the end every pod runs (or ended as it must), no sandbox or container was created
// twice (a replacement for one whose creation the kill cut short is no duplicate), and once the
// manifests are gone nothing of the pods remains.
func TestChaosContainerdRestartDuringBurst(t *testing.T) {
	r := startChaos(t)
	n := r.n
	// Registered after the node's cleanup, so it runs before it: containerd answers again
	// whatever happened.
	t.Cleanup(func() {
		if !testenvUp() {
			if out, err := runTestenv("up"); err != nil {
				t.Errorf("restoring containerd: %s up: %v\n%s", testenvScript, err, out)
			}
		}
	})
	r.writeAll()
	burst := time.Now()
	// The kill finds pods in every stage: a third run, the others are being created.
	for r.w.readyPods() < chaosBurst/3 && time.Since(burst) < time.Minute {
		time.Sleep(100 * time.Millisecond)
	}
	ready := r.w.readyPods()
	down := time.Now()
	pid, killed := restartTestenvContainerd(t, 3*time.Second)
	r.runtimeDown = [2]time.Time{down, time.Now()}
	t.Logf("containerd SIGKILLed %v after the burst, with %d pods' sandboxes ready; answering again %v later (pid %d before)",
		killed.Sub(burst).Round(100*time.Millisecond), ready, time.Since(killed).Round(100*time.Millisecond), pid)
	if exited := n.cmd.ProcessState; exited != nil {
		t.Fatalf("nodelet exited while containerd was down: %v", exited)
	}
	r.finish("containerd-restart", fmt.Sprintf("containerd_kills=1 ready_at_kill=%d", ready), r.settle(3*time.Minute), false)
}

// ---------------------------------------------------------------- API server outage

// TestChaosAPIServerOutage: a cluster node runs 5 API pods and 2 static pods; the API server
// stops for chaosOutage, meanwhile 5 static pods are added and 1 removed, and one API pod's
// container ends. Within chaosCatchUp of the API server's return every API pod's status is the
// node's, mirror pods exist for exactly the static pods on disk, nothing was restarted or
// created twice; once everything is deleted nothing of the pods remains.
func TestChaosAPIServerOutage(t *testing.T) {
	start := time.Now()
	cn := startClusterNode(t)
	cn.waitNodeReady(60 * time.Second)
	baseline := allMounts()
	w := watchCRI(t, cn.env.endpoint, cn.name)
	ctx := context.Background()
	client := cn.cp.client

	// API pods: four that run on, one that ends during the outage.
	apiPods := map[string]v1.PodPhase{}
	var manifests []string
	for i := range 4 {
		name := fmt.Sprintf("api-%d-%s", i, cn.name)
		apiPods[name] = v1.PodRunning
		manifests = append(manifests, chaosSleeper(name, ", namespace: default"))
	}
	ends := "api-ends-" + cn.name
	apiPods[ends] = v1.PodSucceeded
	manifests = append(manifests, chaosEnds(ends, ", namespace: default", 90, 0))
	for i := range manifests {
		manifests[i] = strings.Replace(manifests[i], "spec:\n", "spec:\n  nodeName: "+cn.name+"\n", 1)
	}
	cn.cp.apply(t, strings.Join(manifests, "---\n"))
	// Static pods: two before the outage.
	static := map[string]bool{} // on disk
	writeStatic := func(name string) {
		cn.write(name+".yaml", chaosSleeper(name, ", namespace: default"))
		static[name] = true
	}
	writeStatic("static-0")
	writeStatic("static-1")

	before := map[string]string{} // pod → main container ID
	for name := range apiPods {
		p := cn.waitAPIPod("default", name, 90*time.Second, "Running", isRunningReady)
		before[name] = containerStatus(p, "main").ContainerID
	}
	for name := range static {
		p := cn.waitAPIPod("default", cn.podName(name), 90*time.Second, "a Running mirror pod", isRunningReady)
		before[cn.podName(name)] = containerStatus(p, "main").ContainerID
	}
	if p := cn.pod("api-ends"); p != nil && p.Status.Phase != v1.PodRunning {
		t.Fatalf("the pod meant to end during the outage ended before it: %s", p.Status.Phase)
	}

	if out, err := runCluster("stop-apiserver"); err != nil {
		t.Fatalf("stop-apiserver: %v\n%s", err, out)
	}
	apiDown := true
	t.Cleanup(func() {
		if apiDown {
			if out, err := runCluster("start-apiserver"); err != nil {
				t.Errorf("start-apiserver: %v\n%s", err, out)
			}
		}
	})
	stopped := time.Now()
	t.Logf("API server stopped %v after the start", stopped.Sub(start).Round(time.Second))
	// During the outage: 5 static pods added (one at a time, 20 s apart), static-1 removed.
	step := 0
	for time.Since(stopped) < chaosOutage {
		time.Sleep(5 * time.Second)
		if exited := cn.cmd.ProcessState; exited != nil {
			t.Fatalf("nodelet exited during the outage: %v", exited)
		}
		switch el := time.Since(stopped); {
		case step < 5 && el > time.Duration(10+20*step)*time.Second:
			writeStatic(fmt.Sprintf("static-%d", step+2))
			step++
		case step == 5 && el > 120*time.Second:
			cn.remove("static-1.yaml")
			delete(static, "static-1")
			step++
		}
	}
	// Locally, before the API server returns: every pod where it must be.
	local := map[string]*v1.Pod{}
	if pods, err := cn.pods(); err == nil {
		for i := range pods {
			local[pods[i].Name] = &pods[i]
		}
	}
	var lost []string
	for name, phase := range apiPods {
		if p := local[name]; p == nil || (phase == v1.PodRunning && !isRunningReady(p)) || (phase != v1.PodRunning && p.Status.Phase != phase) {
			lost = append(lost, name+" (locally, during the outage)")
		}
	}
	for name := range static {
		if !isRunningReady(local[cn.podName(name)]) {
			lost = append(lost, cn.podName(name)+" (locally, during the outage)")
		}
	}
	notRemoved := 0
	if p := local[cn.podName("static-1")]; p != nil {
		notRemoved++
		t.Errorf("%s is still there (%s) 3 minutes after its manifest was removed", p.Name, p.Status.Phase)
	}

	if out, err := runCluster("start-apiserver"); err != nil {
		t.Fatalf("start-apiserver: %v\n%s", err, out)
	}
	apiDown = false
	back := time.Now()

	// Within chaosCatchUp: statuses, mirror pods. The figures are those at chaosCatchUp; the
	// polling goes on (at most chaosCatchUpMeasure) to measure when everything caught up.
	check := func() (stale, missing, orphans []string, restarts int, final map[string]*v1.Pod) {
		final = map[string]*v1.Pod{}
		list, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + cn.name})
		if err != nil {
			return []string{"all (" + err.Error() + ")"}, nil, nil, 0, nil
		}
		for i := range list.Items {
			p := &list.Items[i]
			final[p.Name] = p
			for _, cs := range p.Status.ContainerStatuses {
				restarts += int(cs.RestartCount)
			}
		}
		for name, phase := range apiPods {
			p := final[name]
			ok := p != nil && p.Status.Phase == phase && (phase != v1.PodRunning || isRunningReady(p))
			if ok && phase == v1.PodSucceeded {
				cs := containerStatus(p, "main")
				ok = cs != nil && cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
			}
			if !ok {
				stale = append(stale, name)
			}
		}
		for name := range static {
			if p := final[cn.podName(name)]; p == nil || !isRunningReady(p) {
				missing = append(missing, cn.podName(name))
			}
		}
		for name, p := range final {
			if _, mirror := p.Annotations["kubernetes.io/config.mirror"]; mirror && !static[strings.TrimSuffix(name, "-"+cn.name)] {
				orphans = append(orphans, name)
			}
		}
		sort.Strings(stale)
		sort.Strings(missing)
		sort.Strings(orphans)
		return stale, missing, orphans, restarts, final
	}
	var stale, missing, orphans []string
	var restarts int
	var final map[string]*v1.Pod
	caughtUp := time.Duration(-1)
	for {
		s, m, o, rs, fin := check()
		el := time.Since(back)
		if el <= chaosCatchUp || final == nil {
			stale, missing, orphans = s, m, o
		}
		if fin != nil {
			restarts, final = rs, fin
		}
		if len(s)+len(m)+len(o) == 0 {
			caughtUp = el
			break
		}
		if el > chaosCatchUpMeasure {
			t.Logf("still not caught up %v after the API server returned: statuses %v, mirror pods missing %v, orphan mirror pods %v", el.Round(time.Second), s, m, o)
			break
		}
		time.Sleep(time.Second)
	}
	if caughtUp >= 0 {
		t.Logf("API statuses and mirror pods caught up %v after the API server returned", caughtUp.Round(100*time.Millisecond))
	}
	changed := 0
	for name, id := range before {
		if p := final[name]; p != nil && name != cn.podName("static-1") {
			if cs := containerStatus(p, "main"); cs == nil || cs.ContainerID != id {
				changed++
				t.Errorf("%s: container %v after the outage, %s before", name, cs, id)
			}
		}
	}

	// Duplicates: every pod (API, static on disk, the removed one) had one sandbox and one
	// container.
	want := map[string]string{}
	for name := range apiPods {
		want[name] = ""
	}
	for i := range 7 {
		want[cn.podName(fmt.Sprintf("static-%d", i))] = ""
	}
	dups := w.duplicates(want)

	// Cleanup, then leaks.
	for name := range apiPods {
		_ = client.CoreV1().Pods("default").Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)})
	}
	for name := range static {
		cn.remove(name + ".yaml")
	}
	gone := time.Now()
	for time.Since(gone) < 90*time.Second {
		pods, err := cn.pods()
		list, err2 := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + cn.name})
		if err == nil && err2 == nil && len(pods) == 0 && len(list.Items) == 0 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	for name := range want {
		if _, err := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			orphans = append(orphans, name+" (still in the API 90 s after its deletion)")
		}
	}
	w.stop()
	ids, uids := w.objectIDs()
	leaks := cn.waitNoLeaks(uids, ids, baseline, chaosLeakWait)
	t.Logf("%s", w.stats())
	t.Logf("CHAOS name=apiserver-outage pods=%d outage_seconds=%d duplicates=%d lost=%d restarts=%d replaced=%d changed_containers=%d stale_statuses=%d missing_mirrors=%d orphan_mirrors=%d not_removed=%d catchup_seconds=%d leaked_sandboxes=%d leaked_containers=%d leaked_mounts=%d leaked_cgroups=%d leaked_dirs=%d runtime_leaked_mounts=%d seconds=%d",
		len(want), int(chaosOutage.Seconds()), dups.total(), len(lost), restarts, dups.replaced, changed, len(stale), len(missing), len(orphans), notRemoved,
		int(caughtUp.Round(time.Second).Seconds()), leaks.sandboxes, leaks.containers, leaks.mounts, leaks.cgroups, leaks.dirs, len(leaks.runtimeMounts), int(time.Since(start).Seconds()))
	for _, m := range leaks.runtimeMounts {
		t.Logf("the runtime leaked (not counted against nodelet; unmounted now): %s", m)
	}
	removeRuntimeMounts(t, leaks.runtimeMounts)
	removeLeakedCgroups(t, leaks.cgroupDirs)
	if len(dups.replacements) > 0 {
		// One log entry: CI's summary shows the first line of each (hack/lib/failures.awk).
		t.Logf("replaced: %d pods' sandboxes or containers, one instance that never ran for another:\n%s",
			len(dups.replacements), strings.Join(dups.replacements, "\n"))
	}
	for _, d := range dups.details {
		t.Errorf("duplicate: %s", d)
	}
	for _, what := range []struct {
		name string
		list []string
	}{{"lost", lost}, {"API status not caught up", stale}, {"mirror pod missing", missing}, {"orphan mirror pod", orphans}} {
		if len(what.list) > 0 {
			t.Errorf("%s: %v", what.name, what.list)
		}
	}
	if restarts > dups.replacedContainers { // see finish
		t.Errorf("%d container restarts in the API statuses, %d of them replacements of containers that never ran",
			restarts, dups.replacedContainers)
	}
	for _, d := range leaks.details {
		t.Errorf("leaked: %s", d)
	}
}

// TestDuplicateCounting checks the chaos suite's classification of extra instances (no runtime
// needed).
func TestDuplicateCounting(t *testing.T) {
	w := &criWatch{sandboxes: map[string]*criObject{}, containers: map[string]*criObject{},
		maxReady: map[string]int{}, maxRunning: map[string]int{}}
	add := func(m map[string]*criObject, id, pod, name string, attempt uint32, states ...string) {
		m[id] = &criObject{id: id, uid: "u-" + pod, pod: pod, name: name, attempt: attempt, createdAt: int64(attempt) + 1, states: states}
	}
	// a: a sandbox that never came up, replaced; its container created, never started, replaced.
	add(w.sandboxes, "a0", "a", "", 0, "NOTREADY")
	add(w.sandboxes, "a1", "a", "", 1, "READY")
	add(w.containers, "ac0", "a", "main", 0, "CREATED")
	add(w.containers, "ac1", "a", "main", 1, "CREATED", "RUNNING")
	w.maxReady["u-a"], w.maxRunning["u-a/main"] = 1, 1
	// b: a ready sandbox replaced (duplicate); an init container run twice (duplicate).
	add(w.sandboxes, "b0", "b", "", 0, "READY", "NOTREADY")
	add(w.sandboxes, "b1", "b", "", 1, "READY")
	add(w.containers, "bi0", "b", "init", 0, "EXITED") // too short to be seen running: its start time says it ran
	w.containers["bi0"].started = true
	add(w.containers, "bi1", "b", "init", 1, "EXITED")
	// e: a container whose start died with the runtime (EXITED, never started): replaced.
	add(w.sandboxes, "e0", "e", "", 0, "READY")
	add(w.containers, "ei0", "e", "init", 0, "UNKNOWN", "EXITED")
	add(w.containers, "ei1", "e", "init", 1, "RUNNING", "EXITED")
	w.maxReady["u-e"] = 1
	// f: an init container that ran and whose end the runtime lost (exit code 255 after its
	// restart): running it again is the restart policy, replaced.
	add(w.sandboxes, "f0", "f", "", 0, "READY")
	add(w.containers, "fi0", "f", "init", 0, "CREATED", "RUNNING", "EXITED")
	w.containers["fi0"].started, w.containers["fi0"].failed = true, true
	add(w.containers, "fi1", "f", "init", 1, "RUNNING", "EXITED")
	w.maxReady["u-f"] = 1
	w.maxReady["u-b"] = 1
	// c: two containers running at once, the first one never seen running before the second
	// was created (still a duplicate).
	add(w.sandboxes, "c0", "c", "", 0, "READY")
	add(w.containers, "cc0", "c", "main", 0, "CREATED", "RUNNING")
	add(w.containers, "cc1", "c", "main", 0, "CREATED", "RUNNING")
	w.maxReady["u-c"], w.maxRunning["u-c/main"] = 1, 2
	// d: not one of the pods asked about.
	add(w.sandboxes, "d0", "d", "", 0, "READY")
	add(w.sandboxes, "d1", "d", "", 0, "READY")
	w.maxReady["u-d"] = 2

	d := w.duplicates(map[string]string{"a": "", "b": "u-b", "c": "", "e": "", "f": ""})
	if d.sandboxes != 1 || d.containers != 2 || d.replaced != 4 || d.concurrent != 1 || d.created != 17 {
		t.Errorf("got %d duplicate sandboxes, %d duplicate containers, %d replaced, %d at once, %d created; want 1, 2, 4, 1, 17\n%s\n%s",
			d.sandboxes, d.containers, d.replaced, d.concurrent, d.created, strings.Join(d.details, "\n"), strings.Join(d.replacements, "\n"))
	}
	if len(d.details) != 3 || len(d.replacements) != 4 {
		t.Errorf("details %q, replacements %q", d.details, d.replacements)
	}
}
