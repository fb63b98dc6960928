package cli

import (
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// listing is what the fake API serves in the get tests.
func listing() []v1.Pod {
	web := pod(v1.PodRunning, nil, cs("app", running, true, 2, crashedAgo(90*time.Second)), cs("sidecar", running, true, 0, none))
	web.Name = "web-nodelet-1"
	web.Spec.NodeName = "nodelet-1"
	web.Status.PodIPs = []v1.PodIP{{IP: "10.88.0.12"}}
	web.CreationTimestamp = ago(26 * time.Hour)

	job := pod(v1.PodSucceeded, nil, cs("job", terminated("Completed", 0), false, 0, none))
	job.Name = "batch"
	job.CreationTimestamp = ago(5*time.Minute + 30*time.Second)

	crash := pod(v1.PodRunning, []v1.ContainerStatus{cs("setup", waiting("CrashLoopBackOff"), false, 7, crashedAgo(45*time.Second))},
		cs("app", waiting("PodInitializing"), false, 0, none))
	crash.Name, crash.Namespace = "db", "kube-system"
	crash.Spec.NodeName = "nodelet-1"
	crash.CreationTimestamp = ago(40 * time.Second)

	return []v1.Pod{*web, *crash, *job}
}

func TestGetPods(t *testing.T) {
	api := &fakeAPI{pods: listing()}
	cases := []struct {
		name   string
		args   []string
		code   int
		out    string
		errOut string
	}{
		{"default namespace", []string{"get", "pods"}, 0,
			"NAME            READY   STATUS      RESTARTS      AGE\n" +
				"batch           0/1     Completed   0             5m30s\n" +
				"web-nodelet-1   2/2     Running     2 (90s ago)   26h\n", ""},
		{"all namespaces", []string{"get", "pods", "-A"}, 0,
			"NAMESPACE     NAME            READY   STATUS                  RESTARTS      AGE\n" +
				"default       batch           0/1     Completed               0             5m30s\n" +
				"default       web-nodelet-1   2/2     Running                 2 (90s ago)   26h\n" +
				"kube-system   db              0/1     Init:CrashLoopBackOff   7 (45s ago)   40s\n", ""},
		{"wide", []string{"get", "po", "--namespace", "kube-system", "-o", "wide"}, 0,
			"NAME   READY   STATUS                  RESTARTS      AGE   IP       NODE        NOMINATED NODE   READINESS GATES\n" +
				"db     0/1     Init:CrashLoopBackOff   7 (45s ago)   40s   <none>   nodelet-1   <none>           <none>\n", ""},
		{"wide, all namespaces", []string{"get", "pods", "--all-namespaces", "-owide"}, 0,
			"NAMESPACE     NAME            READY   STATUS                  RESTARTS      AGE     IP           NODE        NOMINATED NODE   READINESS GATES\n" +
				"default       batch           0/1     Completed               0             5m30s   <none>       <none>      <none>           <none>\n" +
				"default       web-nodelet-1   2/2     Running                 2 (90s ago)   26h     10.88.0.12   nodelet-1   <none>           <none>\n" +
				"kube-system   db              0/1     Init:CrashLoopBackOff   7 (45s ago)   40s     <none>       nodelet-1   <none>           <none>\n", ""},
		{"by name, one missing", []string{"get", "pod", "web-nodelet-1", "nope"}, 1,
			"NAME            READY   STATUS    RESTARTS      AGE\n" +
				"web-nodelet-1   2/2     Running   2 (90s ago)   26h\n",
			"Error from server (NotFound): pods \"nope\" not found\n"},
		{"empty namespace", []string{"get", "pods", "-n", "empty"}, 0, "", "No resources found in empty namespace.\n"},
		{"unknown resource", []string{"get", "nodes"}, 1, "", "error: the server doesn't have a resource type \"nodes\"\n"},
		{"no resource", []string{"get"}, 2, "", "error: you must specify the type of resource to get: pods\nSee 'nodelet get --help' for usage.\n"},
		{"bad output", []string{"get", "pods", "-o", "json"}, 1, "",
			"error: unable to match a printer suitable for the output format \"json\", allowed formats are: wide\n"},
		{"names across namespaces", []string{"get", "pods", "-A", "web"}, 1, "",
			"error: a resource cannot be retrieved by name across all namespaces\n"},
		{"bad flag", []string{"get", "pods", "--bogus"}, 2, "", "error: unknown flag: --bogus\nSee 'nodelet get --help' for usage.\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, api, tc.args...)
			if code != tc.code || out != tc.out || errOut != tc.errOut {
				t.Errorf("exit %d\nout:\n%s\nerrOut:\n%s\nwant exit %d\nout:\n%s\nerrOut:\n%s", code, out, errOut, tc.code, tc.out, tc.errOut)
			}
		})
	}
}

func TestGetPodsServerErrors(t *testing.T) {
	code, _, errOut := run(t, &fakeAPI{podsCode: http.StatusInternalServerError}, "get", "pods")
	if code != 1 || errOut != "Error from server (InternalError): boom\n" {
		t.Errorf("500: exit %d, %q", code, errOut)
	}

	code, _, errOut = run(t, http.NotFoundHandler(), "get", "pods", "--server", "http://127.0.0.1:1")
	if code != 1 || !strings.Contains(errOut, "error: cannot reach nodelet's read-only API at http://127.0.0.1:1") {
		t.Errorf("unreachable: exit %d, %q", code, errOut)
	}
	code, _, errOut = run(t, http.NotFoundHandler(), "get", "pods", "--server", "127.0.0.1:10255")
	if code != 1 || errOut != "error: --server \"127.0.0.1:10255\" must be an http:// or https:// URL\n" {
		t.Errorf("bad server: exit %d, %q", code, errOut)
	}
}
