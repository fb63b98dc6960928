package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLogTargetFor(t *testing.T) {
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{}}
	lastWithID := v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ContainerID: "c://old"}}
	lastNoID := v1.ContainerState{Terminated: &v1.ContainerStateTerminated{}}
	waiting := func(reason string) v1.ContainerState {
		return v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reason}}
	}
	cases := []struct {
		name     string
		status   *v1.ContainerStatus
		previous bool
		want     logTarget
		err      string
	}{
		{name: "no status", err: `container "app" in pod "web" is not available`},
		{name: "running", status: &v1.ContainerStatus{ContainerID: "c://new", RestartCount: 2, State: running},
			want: logTarget{restartCount: 2, current: true, containerID: "c://new"}},
		{name: "running previous", status: &v1.ContainerStatus{ContainerID: "c://new", RestartCount: 2, State: running, LastTerminationState: lastWithID}, previous: true,
			want: logTarget{restartCount: 2, current: true, previous: true, containerID: "c://old"}},
		{name: "previous without one", status: &v1.ContainerStatus{State: running}, previous: true,
			err: `previous terminated container "app" in pod "web" not found`},
		{name: "previous without ID", status: &v1.ContainerStatus{State: running, LastTerminationState: lastNoID}, previous: true,
			err: "previous terminated container"},
		{name: "terminated", status: &v1.ContainerStatus{ContainerID: "c://t", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ContainerID: "c://t"}}},
			want: logTarget{current: true, containerID: "c://t"}},
		{name: "terminated without ID uses last", status: &v1.ContainerStatus{RestartCount: 1, State: lastNoID, LastTerminationState: lastWithID},
			want: logTarget{restartCount: 1, previous: true, containerID: "c://old"}},
		{name: "terminated without any ID", status: &v1.ContainerStatus{State: lastNoID},
			err: `container "app" in pod "web" is terminated`},
		{name: "back-off", status: &v1.ContainerStatus{RestartCount: 3, State: waiting("CrashLoopBackOff"), LastTerminationState: lastWithID},
			want: logTarget{restartCount: 3, previous: true, containerID: "c://old"}},
		{name: "back-off previous", status: &v1.ContainerStatus{RestartCount: 3, State: waiting("CrashLoopBackOff"), LastTerminationState: lastWithID}, previous: true,
			want: logTarget{restartCount: 3, previous: true, containerID: "c://old"}},
		{name: "last without ID", status: &v1.ContainerStatus{State: waiting("CrashLoopBackOff"), LastTerminationState: lastNoID},
			err: "is terminated"},
		{name: "creating", status: &v1.ContainerStatus{State: waiting("ContainerCreating")},
			err: `container "app" in pod "web" is waiting to start: ContainerCreating`},
		{name: "image pull", status: &v1.ContainerStatus{State: waiting("ErrImagePull")},
			err: "is waiting to start: image can't be pulled"},
		{name: "image back-off", status: &v1.ContainerStatus{State: waiting("ImagePullBackOff")},
			err: "is waiting to start: trying and failing to pull image"},
		{name: "no state", status: &v1.ContainerStatus{},
			err: "is waiting to start - no logs yet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
			if tc.status != nil {
				st := *tc.status
				st.Name = "app"
				pod.Status.InitContainerStatuses = []v1.ContainerStatus{st} // init statuses are searched too
			}
			got, err := logTargetFor(pod, "app", tc.previous)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPickLogFile(t *testing.T) {
	cases := []struct {
		name   string
		files  []string
		target logTarget
		want   string // "" for errNoLogFile
	}{
		{"current", []string{"0.log", "1.log", "2.log"}, logTarget{restartCount: 1, current: true}, "1.log"},
		{"current missing: newest", []string{"0.log", "3.log"}, logTarget{restartCount: 1, current: true}, "3.log"},
		{"previous", []string{"0.log", "1.log", "2.log"}, logTarget{restartCount: 2, current: true, previous: true}, "1.log"},
		{"previous missing: next below", []string{"0.log", "2.log"}, logTarget{restartCount: 2, current: true, previous: true}, "0.log"},
		{"previous of the oldest", []string{"2.log"}, logTarget{restartCount: 2, current: true, previous: true}, ""},
		{"no current instance: newest", []string{"0.log", "1.log"}, logTarget{restartCount: 1, previous: true}, "1.log"},
		{"numeric order", []string{"9.log", "10.log"}, logTarget{restartCount: 10, current: true, previous: true}, "9.log"},
		{"rotated and other files ignored", []string{"0.log", "1.log.20260301-120000", "x.log", "1.log.gz"}, logTarget{restartCount: 1, current: true}, "0.log"},
		{"empty", nil, logTarget{current: true}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := pickLogFile(dir, tc.target)
			if tc.want == "" {
				if err != errNoLogFile {
					t.Fatalf("got %q, %v; want errNoLogFile", got, err)
				}
				return
			}
			if err != nil || got != filepath.Join(dir, tc.want) {
				t.Errorf("got %q, %v; want %s", got, err, tc.want)
			}
		})
	}
	if _, err := pickLogFile(filepath.Join(t.TempDir(), "missing"), logTarget{}); err != errNoLogFile {
		t.Errorf("missing dir: %v, want errNoLogFile", err)
	}
}
