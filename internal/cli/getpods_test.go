package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"
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
		{"bad output", []string{"get", "pods", "-o", "table"}, 1, "",
			"error: unable to match a printer suitable for the output format \"table\", allowed formats are: json,name,wide,yaml\n"},
		{"names", []string{"get", "pods", "-A", "-o", "name"}, 0, "pod/batch\npod/web-nodelet-1\npod/db\n", ""},
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

// -o json and -o yaml print what kubectl prints: one named pod as a Pod, otherwise a List.
func TestGetPodsObjects(t *testing.T) {
	api := &fakeAPI{pods: listing()}
	code, out, errOut := run(t, api, "get", "pods", "batch", "-o", "json")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var pod v1.Pod
	if err := json.Unmarshal([]byte(out), &pod); err != nil || pod.Name != "batch" || pod.Kind != "Pod" || pod.APIVersion != "v1" {
		t.Errorf("-o json of one pod: %v\n%s", err, out)
	}
	if !strings.HasPrefix(out, "{\n    \"apiVersion\": \"v1\",\n    \"kind\": \"Pod\",\n    \"metadata\": {") {
		t.Errorf("-o json is not kubectl's layout (sorted keys, 4-space indent):\n%s", out)
	}
	code, out, _ = run(t, api, "get", "pods", "-o", "yaml")
	if code != 0 || !strings.HasPrefix(out, "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n") ||
		!strings.HasSuffix(out, "kind: List\nmetadata:\n  resourceVersion: \"\"\n") {
		t.Errorf("-o yaml of the namespace's pods is not kubectl's List:\n%s", out)
	}
	var list struct {
		Items []v1.Pod `json:"items"`
	}
	if err := yaml.Unmarshal([]byte(out), &list); err != nil || len(list.Items) != 2 || list.Items[0].Name != "batch" || list.Items[1].Name != "web-nodelet-1" {
		t.Errorf("-o yaml items: %v %+v", err, list.Items)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errOut bytes.Buffer
		if code := Run(context.Background(), args, nil, &out, &errOut, testingclock.NewFakePassiveClock(now), "v1.37.1-nodelet"); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
		}
		if !strings.HasPrefix(out.String(), "nodelet v1.37.1-nodelet (the upstream kubelet v1.37.1's behaviour)\n") || !strings.Contains(out.String(), "Go: go") {
			t.Errorf("%v:\n%s", args, out.String())
		}
	}
	var out, errOut bytes.Buffer
	if code := Run(context.Background(), []string{"version", "-o", "json"}, nil, &out, &errOut, testingclock.NewFakePassiveClock(now), "v1.37.1-nodelet"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var info versionInfo
	if err := json.Unmarshal(out.Bytes(), &info); err != nil || info.Version != "v1.37.1-nodelet" || info.Upstream != "v1.37.1" || info.Platform == "" {
		t.Errorf("version -o json: %v %+v", err, info)
	}
	if !IsCommand([]string{"version"}) || !IsCommand([]string{"--version"}) {
		t.Error("IsCommand does not take version")
	}
}
