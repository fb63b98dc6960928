package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"
)

// logTarget is the container instance whose log a request reads.
type logTarget struct {
	restartCount int32
	// current: a container instance exists now (running, or terminated with its ID); without
	// one (back-off, or a container that failed to start) the newest file is the last one's.
	current bool
	// previous: read the last terminated instance rather than the current one.
	previous bool
	// containerID of the instance read; a follow goes on while it runs.
	containerID string
}

// logTargetFor picks the instance as the kubelet's validateContainerLogStatus does, with its
// error messages; an error means the container has no log to show yet (400).
func logTargetFor(pod *v1.Pod, container string, previous bool) (logTarget, error) {
	st := containerStatus(pod, container)
	if st == nil {
		return logTarget{}, fmt.Errorf("container %q in pod %q is not available", container, pod.Name)
	}
	last := st.LastTerminationState.Terminated
	waiting, running, terminated := st.State.Waiting, st.State.Running, st.State.Terminated
	t := logTarget{
		restartCount: st.RestartCount,
		current:      running != nil || (terminated != nil && terminated.ContainerID != ""),
	}
	switch {
	case previous:
		if last == nil || last.ContainerID == "" {
			return t, fmt.Errorf("previous terminated container %q in pod %q not found", container, pod.Name)
		}
		t.previous, t.containerID = true, last.ContainerID
	case running != nil:
		t.containerID = st.ContainerID
	case terminated != nil:
		switch {
		case terminated.ContainerID != "":
			t.containerID = terminated.ContainerID
		case last != nil && last.ContainerID != "":
			t.previous, t.containerID = true, last.ContainerID
		default:
			return t, fmt.Errorf("container %q in pod %q is terminated", container, pod.Name)
		}
	case last != nil:
		if last.ContainerID == "" {
			return t, fmt.Errorf("container %q in pod %q is terminated", container, pod.Name)
		}
		t.previous, t.containerID = true, last.ContainerID
	case waiting != nil:
		switch waiting.Reason {
		case "ErrImagePull":
			return t, fmt.Errorf("container %q in pod %q is waiting to start: image can't be pulled", container, pod.Name)
		case "ImagePullBackOff":
			return t, fmt.Errorf("container %q in pod %q is waiting to start: trying and failing to pull image", container, pod.Name)
		default:
			return t, fmt.Errorf("container %q in pod %q is waiting to start: %v", container, pod.Name, waiting.Reason)
		}
	default:
		return t, fmt.Errorf("container %q in pod %q is waiting to start - no logs yet", container, pod.Name)
	}
	return t, nil
}

// logFileRE matches the kubelet's <restartCount>.log; rotated files (N.log.<time>) are not
// read, as upstream.
var logFileRE = regexp.MustCompile(`^(\d+)\.log$`)

// errNoLogFile is returned when the directory has no log file for the target.
var errNoLogFile = errors.New("no log file")

// pickLogFile returns the path of the target's log file in dir (see doc.go, "Which file").
func pickLogFile(dir string, t logTarget) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", errNoLogFile
		}
		return "", fmt.Errorf("list log directory: %w", err)
	}
	var attempts []int64
	for _, e := range entries {
		if m := logFileRE.FindStringSubmatch(e.Name()); m != nil && !e.IsDir() {
			if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
				attempts = append(attempts, n)
			}
		}
	}
	if len(attempts) == 0 {
		return "", errNoLogFile
	}
	slices.Sort(attempts)
	newest := attempts[len(attempts)-1]
	pick := newest
	switch {
	case !t.current:
		// The last terminated instance wrote the newest file.
	case !t.previous:
		if slices.Contains(attempts, int64(t.restartCount)) {
			pick = int64(t.restartCount)
		}
	default:
		cur := newest
		if slices.Contains(attempts, int64(t.restartCount)) {
			cur = int64(t.restartCount)
		}
		want := int64(t.restartCount) - 1
		if want < cur && slices.Contains(attempts, want) {
			pick = want
			break
		}
		i, _ := slices.BinarySearch(attempts, cur)
		if i == 0 {
			return "", errNoLogFile
		}
		pick = attempts[i-1]
	}
	return filepath.Join(dir, strconv.FormatInt(pick, 10)+".log"), nil
}

// containerStatus finds a container's status among the regular, init and ephemeral ones.
func containerStatus(pod *v1.Pod, name string) *v1.ContainerStatus {
	for _, list := range [][]v1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// containerNames lists the pod's regular, init and ephemeral containers.
func containerNames(pod *v1.Pod) []string {
	var names []string
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	return names
}

// findPod returns the pod named namespace/name, or nil.
func findPod(pods []*v1.Pod, namespace, name string) *v1.Pod {
	for _, p := range pods {
		if p != nil && p.Namespace == namespace && p.Name == name {
			return p
		}
	}
	return nil
}
