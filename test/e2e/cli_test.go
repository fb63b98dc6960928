package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// cli runs `nodelet ARGS...` with stdin and returns stdout, stderr and the exit code.
func cli(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeletBin(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errb
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	default:
		t.Fatalf("nodelet %s: %v", strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("nodelet %s did not end within 60 s; stdout %q stderr %q", strings.Join(args, " "), out.String(), errb.String())
	}
	return out.String(), errb.String(), code
}

// Issue 18, acceptance 3: every CLI verb against a running nodelet, in kubectl's layout: get pods
// (-o wide, json, yaml, name), describe pod, logs (saying which container it defaulted to), events
// (with counts), exec (stdout, stderr, stdin, the command's exit code, a TTY) and attach.
func TestCLIVerbs(t *testing.T) {
	n := startNode(t)
	n.write("two.yaml", `apiVersion: v1
kind: Pod
metadata: {name: two}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: app, image: docker.io/library/busybox:1.35, command: ["sh", "-c", "echo hello from app; exec sleep 3600"]}
  - {name: side, image: docker.io/library/busybox:1.35, command: ["sleep", "3600"]}
`)
	n.write("crasher.yaml", `apiVersion: v1
kind: Pod
metadata: {name: crasher}
spec:
  containers:
  - {name: main, image: docker.io/library/busybox:1.35, command: ["sh", "-c", "exit 1"]}
`)
	n.write("reader.yaml", `apiVersion: v1
kind: Pod
metadata: {name: reader}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: docker.io/library/busybox:1.35
    stdin: true
    stdinOnce: true
    command: ["sh", "-c", "read line; echo got $line"]
`)
	n.write("slowstop.yaml", `apiVersion: v1
kind: Pod
metadata: {name: slowstop}
spec:
  terminationGracePeriodSeconds: 20
  containers:
  - {name: main, image: docker.io/library/busybox:1.35, command: ["sh", "-c", "trap '' TERM; sleep 3600"]}
`)
	two, reader := n.podName("two"), n.podName("reader")
	n.waitPod("two", 60*time.Second, "Running", isRunningReady)
	n.waitPod("reader", 60*time.Second, "Running", isRunningReady)
	n.waitPod("slowstop", 60*time.Second, "Running", isRunningReady)
	server := fmt.Sprintf("--server=http://127.0.0.1:%d", n.port)

	// A removed manifest whose container ignores SIGTERM: Terminating until its grace period ends.
	n.remove("slowstop.yaml")
	terminating := regexp.MustCompile(`(?m)^` + n.podName("slowstop") + `\s+1/1\s+Terminating\s+0\s+\d+s$`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		out, _, _ := cli(t, "", "get", "pods", server)
		if terminating.MatchString(out) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("get pods: the removed pod is not shown as Terminating:\n%s", out)
		}
	}
	if out, _, _ := cli(t, "", "describe", "pod", n.podName("slowstop"), server); !regexp.MustCompile(`(?m)^Status:\s+Terminating \(lasts \d+s\)$`).MatchString(out) {
		t.Errorf("describe of a terminating pod:\n%s", out)
	}
	n.waitPod("slowstop", 40*time.Second, "gone once its grace period ended", func(p *v1.Pod) bool { return p == nil })
	socket := "--socket=" + filepath.Join(n.rootDir, "nodelet.sock")

	// get pods: the wide table, and the three machine formats.
	out, errOut, code := cli(t, "", "get", "pods", "-o", "wide", server)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	header := regexp.MustCompile(`^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$`)
	if code != 0 || len(lines) != 4 || !header.MatchString(lines[0]) {
		t.Fatalf("get pods -o wide: code %d, stderr %q:\n%s", code, errOut, out)
	}
	twoRow := regexp.MustCompile(`^` + two + `\s+2/2\s+Running\s+0\s+\d+s\s+10\.88\.\d+\.\d+\s+` + n.name + `\s+<none>\s+<none>$`)
	if !anyLine(lines, twoRow) {
		t.Errorf("get pods -o wide: no row like %s:\n%s", twoRow, out)
	}
	out, _, code = cli(t, "", "get", "pods", two, "-o", "name", server)
	if code != 0 || out != "pod/"+two+"\n" {
		t.Errorf("get pods -o name: %d %q", code, out)
	}
	out, _, code = cli(t, "", "get", "pods", two, "-o", "json", server)
	var p v1.Pod
	if err := json.Unmarshal([]byte(out), &p); code != 0 || err != nil || p.Name != two || p.Kind != "Pod" || p.APIVersion != "v1" {
		t.Errorf("get pods NAME -o json: %d %v %q/%q/%q", code, err, p.Kind, p.APIVersion, p.Name)
	}
	out, _, code = cli(t, "", "get", "pods", "-o", "yaml", server)
	var list v1.PodList
	if err := yaml.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list.Items) != 3 || list.Kind != "List" {
		t.Errorf("get pods -o yaml: %d %v kind %q, %d items", code, err, list.Kind, len(list.Items))
	}

	// describe: kubectl's sections, events included.
	out, _, code = cli(t, "", "describe", "pod", two, server)
	for _, want := range []string{`(?m)^Name:\s+` + two + `$`, `(?m)^Namespace:\s+default$`, `(?m)^Status:\s+Running$`,
		`(?m)^Containers:\n  app:$`, `(?m)^  side:$`, `(?m)^Conditions:\n\s+Type\s+Status$`,
		`(?m)^Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n\s+----\s+------\s+----\s+----\s+-------$`,
		`(?m)^\s+Normal\s+Started\s+\d+s\s+kubelet\s+Started container app$`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("describe pod: nothing matches %s in:\n%s", want, out)
		}
	}
	if code != 0 {
		t.Errorf("describe pod: exit %d", code)
	}

	// logs: the defaulted container is named on stderr, as kubectl does.
	out, errOut, code = cli(t, "", "logs", two, server)
	if code != 0 || out != "hello from app\n" || !strings.Contains(errOut, `Defaulted container "app" out of: app, side`) {
		t.Errorf("logs: %d stdout %q stderr %q", code, out, errOut)
	}

	// events: a crash loop's repeated events are counted ("(x3 over 25s)").
	counted := regexp.MustCompile(`\(x\d+ over \d+s\)\s+\S+\s+\S+\s+Pod/` + n.podName("crasher"))
	deadline := time.Now().Add(90 * time.Second)
	for {
		out, _, code = cli(t, "", "events", server)
		if code == 0 && counted.MatchString(out) && strings.HasPrefix(out, "LAST SEEN") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("events: no counted event of the crash-looping pod in 90 s:\n%s", out)
		}
		time.Sleep(3 * time.Second)
	}

	// exec: stdout and stderr apart, the command's exit code, stdin.
	out, errOut, code = cli(t, "", "exec", socket, two, "-c", "app", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
	if out != "out\n" || errOut != "err\n" || code != 3 {
		t.Errorf("exec: stdout %q stderr %q code %d, want out, err and 3", out, errOut, code)
	}
	out, errOut, code = cli(t, "hello\nworld\n", "exec", "-i", socket, two, "--", "cat")
	if out != "hello\nworld\n" || code != 0 || !strings.Contains(errOut, `Defaulted container "app" out of: app, side`) {
		t.Errorf("exec -i cat: stdout %q stderr %q code %d", out, errOut, code)
	}
	_, errOut, code = cli(t, "", "exec", socket, "nope", "--", "true")
	if code != 1 || !strings.Contains(errOut, `pods "nope" not found`) {
		t.Errorf("exec in a missing pod: %d %q", code, errOut)
	}
	// A TTY: through script(1), which gives nodelet a terminal.
	ttyOut, err := exec.Command("script", "-qec", fmt.Sprintf("%s exec -it %s %s -c app -- tty", nodeletBin(t), socket, two), "/dev/null").CombinedOutput()
	if err != nil || !strings.Contains(string(ttyOut), "/dev/pts/") {
		t.Errorf("exec -it ... tty: %v %q, want a /dev/pts terminal", err, ttyOut)
	}

	// attach: the container reads a line from its stdin, answers and exits. With stdinOnce the
	// end of our stdin closes the container's and its output goes on until it exits (without,
	// containerd ends the session when the attached stdin ends, as kubectl users know).
	out, errOut, code = cli(t, "ping\n", "attach", "-i", socket, reader)
	if !strings.Contains(out, "got ping") || code != 0 {
		t.Errorf("attach -i: stdout %q stderr %q code %d", out, errOut, code)
	}
	n.waitPod("reader", 30*time.Second, "Succeeded", func(p *v1.Pod) bool { return p != nil && p.Status.Phase == v1.PodSucceeded })
}

func anyLine(lines []string, re *regexp.Regexp) bool {
	for _, l := range lines {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}
