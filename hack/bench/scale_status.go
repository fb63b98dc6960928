package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/testharness"
)

// neverManifest is a sleeper pod that is not restarted: once its container is killed, the pod
// is Failed and the container Terminated.
func neverManifest(name string) string {
	return strings.Replace(sleeperManifest(name), "spec:\n", "spec:\n  restartPolicy: Never\n", 1)
}

// statusLatency runs n pods that are not restarted, then kills their containers one after
// the other (SIGKILL to the container's process, found through CRI) and measures, for each, the
// time until /pods shows the container Terminated (latency), and the time until the runtime
// announced the container stopped on its CRI event stream, which the bench follows too (floor:
// no agent can report the exit before the runtime's status shows it). /pods is read every
// latencyPoll meanwhile. The pods are removed at the end.
func (a *agent) statusLatency(ctx context.Context, b *bench, n int) (latency, floor []time.Duration, err error) {
	names, err := a.stage("exit", n, neverManifest)
	if err != nil {
		return nil, nil, err
	}
	if err := a.putInPlace(names); err != nil {
		return nil, nil, err
	}
	if _, err := a.waitReady(ctx, time.Now(), n, b.opts.timeout); err != nil {
		return nil, nil, err
	}
	stopped, closeEvents, err := followStops(ctx, b)
	if err != nil {
		return nil, nil, err
	}
	defer closeEvents()
	for i := 1; i <= n; i++ {
		pod := fmt.Sprintf("exit-%d-%s", i, a.name)
		id, pid, err := containerPID(ctx, b, pod)
		if err != nil {
			return nil, nil, err
		}
		start := time.Now()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return nil, nil, fmt.Errorf("kill the container of %s (pid %d): %w", pod, pid, err)
		}
		waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = a.poll(waitCtx, latencyPoll, "the killed container of "+pod+" to show as terminated", func() (bool, error) {
			pods, err := a.pods(waitCtx)
			if err != nil {
				return false, nil
			}
			return terminated(pods, pod), nil
		})
		cancel()
		if err != nil {
			return nil, nil, err
		}
		latency = append(latency, time.Since(start))
		at, err := stopped(ctx, id)
		if err != nil {
			return nil, nil, fmt.Errorf("the runtime's event of the container of %s: %w", pod, err)
		}
		floor = append(floor, at.Sub(start))
	}
	if _, _, err := a.teardown(ctx, b, names); err != nil {
		return nil, nil, err
	}
	return latency, floor, nil
}

// followStops follows the runtime's CRI container events (containerd 2 sends every event to
// every subscriber) and returns stopped, which waits for the CONTAINER_STOPPED_EVENT of a
// container and returns when the bench received it, and a function ending the stream.
func followStops(ctx context.Context, b *bench) (stopped func(context.Context, string) (time.Time, error), stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	stream, err := b.cri.Runtime.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("follow the runtime's container events: %w", err)
	}
	var mu sync.Mutex
	seen := map[string]time.Time{}
	var streamErr error
	changed := make(chan struct{}, 1)
	go func() {
		for {
			e, err := stream.Recv()
			now := time.Now()
			mu.Lock()
			if err != nil {
				streamErr = err
			} else if e.ContainerEventType == runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT {
				if _, ok := seen[e.ContainerId]; !ok {
					seen[e.ContainerId] = now
				}
			}
			mu.Unlock()
			select {
			case changed <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	stopped = func(ctx context.Context, id string) (time.Time, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		for {
			mu.Lock()
			at, ok := seen[id]
			err := streamErr
			mu.Unlock()
			switch {
			case ok:
				return at, nil
			case err != nil:
				return time.Time{}, fmt.Errorf("event stream: %w", err)
			}
			select {
			case <-ctx.Done():
				return time.Time{}, fmt.Errorf("no CONTAINER_STOPPED_EVENT for %s: %w", id, ctx.Err())
			case <-changed:
			}
		}
	}
	return stopped, cancel, nil
}

// terminated tells whether /pods shows pod's container "main" terminated.
func terminated(pods []v1.Pod, pod string) bool {
	for i := range pods {
		if pods[i].Name != pod {
			continue
		}
		for _, c := range pods[i].Status.ContainerStatuses {
			if c.Name == "main" && c.State.Terminated != nil {
				return true
			}
		}
	}
	return false
}

// containerPID returns the ID and host PID of the running container "main" of pod, the PID from
// containerd's verbose container status ({"pid": N, ...} in info["info"]).
func containerPID(ctx context.Context, b *bench, pod string) (string, int, error) {
	list, err := b.cri.ListContainers(ctx, &runtimeapi.ContainerFilter{
		State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{container.PodNameLabel: pod, container.ContainerNameLabel: "main"},
	})
	if err != nil {
		return "", 0, fmt.Errorf("list the containers of %s: %w", pod, err)
	}
	if len(list) != 1 {
		return "", 0, fmt.Errorf("%s has %d running containers named main, want 1", pod, len(list))
	}
	st, err := b.cri.ContainerStatus(ctx, list[0].Id, true)
	if err != nil {
		return "", 0, fmt.Errorf("status of the container of %s: %w", pod, err)
	}
	var info struct {
		Pid int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(st.Info["info"]), &info); err != nil || info.Pid <= 0 {
		return "", 0, fmt.Errorf("no pid in the verbose status of the container of %s (error: %v)", pod, err)
	}
	return list[0].Id, info.Pid, nil
}

// restartWithPods kills the agent with SIGKILL while n pods run, starts it again, and measures
// the time from the new start until /pods shows every pod Running and Ready with the container
// that ran before (statuses current again). Once the agent is quiet, it counts the containers
// and sandboxes of the node the runtime has that it did not have before: restarted or duplicated.
func (a *agent) restartWithPods(ctx context.Context, b *bench, n int, res *scaleResult) error {
	before, err := nodeContainers(ctx, b, a.name)
	if err != nil {
		return err
	}
	sbBefore, err := testharness.NodeSandboxes(ctx, b.cri, a.name)
	if err != nil {
		return err
	}
	byPod := map[string]string{} // pod name → "containerd://<id>" of its running main container
	for _, c := range before {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			byPod[c.Labels[container.PodNameLabel]] = "containerd://" + c.Id
		}
	}
	if len(byPod) != n {
		return fmt.Errorf("%d pods have a running container before the restart, want %d", len(byPod), n)
	}
	start := time.Now()
	if err := a.restart(); err != nil {
		return err
	}
	ctx2, cancel := context.WithTimeout(ctx, b.opts.timeout)
	defer cancel()
	current := 0
	err = a.poll(ctx2, restartPoll, fmt.Sprintf("%d statuses current after the restart", n), func() (bool, error) {
		pods, err := a.pods(ctx2)
		if err != nil {
			return false, nil
		}
		current = 0
		for i := range pods {
			p := &pods[i]
			if !runningReady(p) {
				continue
			}
			for _, c := range p.Status.ContainerStatuses {
				if c.Name == "main" && c.ContainerID == byPod[p.Name] && c.State.Running != nil {
					current++
				}
			}
		}
		return current == n, nil
	})
	if err != nil {
		return fmt.Errorf("%w (%d current)", err, current)
	}
	res.restart = time.Since(start)
	if res.restartCPU, err = a.quiet(ctx, b.hz); err != nil {
		return err
	}
	after, err := nodeContainers(ctx, b, a.name)
	if err != nil {
		return err
	}
	res.restarted = len(newIDs(before, after, func(c *runtimeapi.Container) string { return c.Id }))
	sbAfter, err := testharness.NodeSandboxes(ctx, b.cri, a.name)
	if err != nil {
		return err
	}
	res.resandbox = len(newIDs(sbBefore, sbAfter, func(s *runtimeapi.PodSandbox) string { return s.Id }))
	return nil
}

// nodeContainers lists the runtime's containers of the pods of node name.
func nodeContainers(ctx context.Context, b *bench, name string) ([]*runtimeapi.Container, error) {
	all, err := b.cri.ListContainers(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	return testharness.OfNode(all, name, (*runtimeapi.Container).GetLabels), nil
}

// newIDs returns the IDs in after that are not in before.
func newIDs[T any](before, after []T, id func(T) string) []string {
	had := map[string]bool{}
	for _, x := range before {
		had[id(x)] = true
	}
	var out []string
	for _, x := range after {
		if !had[id(x)] {
			out = append(out, id(x))
		}
	}
	return out
}
