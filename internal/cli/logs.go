package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

// defaultContainerAnnotation names the container kubectl logs shows when -c is not given.
const defaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

// logs runs `nodelet logs POD [-c CONTAINER] [-f] [-p] [--tail N] [-n NAMESPACE] ...`.
func (c *command) logs(ctx context.Context, args []string) int {
	var server, namespace, container, sinceTime string
	var follow, previous, timestamps bool
	var tail, limitBytes int64
	var since time.Duration
	fs := newFlagSet("logs", &server)
	fs.StringVarP(&namespace, "namespace", "n", "default", "namespace of the pod")
	fs.StringVarP(&container, "container", "c", "", "container to show; optional when the pod has one")
	fs.BoolVarP(&follow, "follow", "f", false, "stream the log as it grows")
	fs.BoolVarP(&previous, "previous", "p", false, "show the log of the previous, terminated instance")
	fs.Int64Var(&tail, "tail", -1, "lines of the end of the log to show; -1 shows all")
	fs.BoolVar(&timestamps, "timestamps", false, "prefix each line with its RFC3339Nano time")
	fs.DurationVar(&since, "since", 0, "only lines newer than this duration, e.g. 5s, 2m, 3h")
	fs.StringVar(&sinceTime, "since-time", "", "only lines after this RFC3339 time")
	fs.Int64Var(&limitBytes, "limit-bytes", 0, "bytes to show at most; 0 shows all")
	if code, done := c.parse(fs, args); done {
		return code
	}
	switch rest := fs.Args(); {
	case len(rest) == 0:
		return c.usageError("expected 'logs [-f] [-p] POD [-c CONTAINER]'.\nPOD is a required argument for the logs command")
	case len(rest) > 1:
		return c.usageError("expected one POD, got %q", rest)
	}
	podName := fs.Args()[0]
	if name, ok := strings.CutPrefix(podName, "pod/"); ok {
		podName = name
	} else if name, ok := strings.CutPrefix(podName, "pods/"); ok {
		podName = name
	}

	query := url.Values{}
	if follow {
		query.Set("follow", "true")
	}
	if previous {
		query.Set("previous", "true")
	}
	if timestamps {
		query.Set("timestamps", "true")
	}
	if tail >= 0 {
		query.Set("tailLines", strconv.FormatInt(tail, 10))
	}
	if limitBytes < 0 {
		return c.usageError("--limit-bytes must be greater than 0")
	} else if limitBytes > 0 {
		query.Set("limitBytes", strconv.FormatInt(limitBytes, 10))
	}
	if since != 0 && sinceTime != "" {
		return c.usageError("at most one of `sinceTime` or `sinceSeconds` may be specified")
	}
	if since < 0 {
		return c.usageError("--since must be greater than 0")
	} else if since > 0 {
		// kubectl rounds --since to seconds; the API wants at least one.
		query.Set("sinceSeconds", strconv.FormatInt(max(1, int64(since.Round(time.Second).Seconds())), 10))
	}
	if sinceTime != "" {
		t, err := time.Parse(time.RFC3339, sinceTime)
		if err != nil {
			return c.usageError("--since-time %q must be an RFC3339 time such as 2006-01-02T15:04:05Z", sinceTime)
		}
		query.Set("sinceTime", t.Format(time.RFC3339))
	}

	pods, err := c.listPods(ctx, server)
	if err != nil {
		return c.report(err)
	}
	i := slices.IndexFunc(pods, func(p v1.Pod) bool { return p.Namespace == namespace && p.Name == podName })
	if i < 0 {
		return c.report(notFound(podName))
	}
	if container == "" {
		var note string
		container, note = defaultContainer(&pods[i])
		if note != "" {
			fmt.Fprintln(c.errOut, note)
		}
	}
	target, err := endpoint(server, "/containerLogs/"+url.PathEscape(namespace)+"/"+url.PathEscape(podName)+"/"+url.PathEscape(container), query)
	if err != nil {
		return c.report(err)
	}
	resp, err := c.get(ctx, server, target)
	if err != nil {
		if ctx.Err() != nil {
			return exitOK // interrupted
		}
		return c.report(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if _, err := io.Copy(c.out, resp.Body); err != nil {
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return exitOK // interrupted while following
		}
		return c.fail("reading the log: %v", err)
	}
	return exitOK
}

// defaultContainer picks the container when -c is not given, as kubectl logs (its
// logsforobject): the one the kubectl.kubernetes.io/default-container annotation names, else the
// first container. note is what kubectl then tells on stderr: that the annotation names no
// container, or which container it defaulted to when the pod has others.
func defaultContainer(pod *v1.Pod) (container, note string) {
	if name := pod.Annotations[defaultContainerAnnotation]; name != "" {
		if podHasContainer(pod, name) {
			return name, ""
		}
		note = fmt.Sprintf("Default container name %q not found in pod %s\n", name, pod.Name)
	}
	if len(pod.Spec.Containers) == 0 {
		return "", strings.TrimSuffix(note, "\n")
	}
	container = pod.Spec.Containers[0].Name
	if len(pod.Spec.Containers) > 1 || len(pod.Spec.InitContainers) > 0 || len(pod.Spec.EphemeralContainers) > 0 {
		note += fmt.Sprintf("Defaulted container %q out of: %s", container, allContainerNames(pod))
	}
	return container, strings.TrimSuffix(note, "\n")
}

// podHasContainer says the pod has a container, init or ephemeral container of that name
// (kubectl's FindContainerByName).
func podHasContainer(pod *v1.Pod, name string) bool {
	for _, c := range slices.Concat(pod.Spec.Containers, pod.Spec.InitContainers) {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// allContainerNames is kubectl's AllContainerNames: "app, sidecar, debug (ephem), setup (init)".
func allContainerNames(pod *v1.Pod) string {
	var names []string
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name+" (ephem)")
	}
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name+" (init)")
	}
	return strings.Join(names, ", ")
}
