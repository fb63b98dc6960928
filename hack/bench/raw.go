package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodelet/nodelet/internal/testharness"
)

// rawRunLabel marks the raw floor's sandboxes and containers with the run's ID. They carry no
// io.kubernetes.pod.* label, so no nodelet (nor the e2e harness) counts or removes them.
const rawRunLabel = "nodelet.bench/raw-run"

// rawNamespace is the namespace in the raw sandboxes' metadata.
const rawNamespace = "nodelet-bench"

// rawResult is what one raw CRI floor run measured.
type rawResult struct {
	create   time.Duration // RunPodSandbox + CreateContainer + StartContainer of every pod, all at once
	teardown time.Duration // StopContainer + StopPodSandbox + RemovePodSandbox of every pod, all at once
}

type rawPod struct {
	uid       string
	sandbox   string
	container string
}

// rawRun creates pods sleeper pods directly through CRI, all at once (one goroutine each), then
// stops and removes them all at once: the runtime's own cost, without nodelet. Whatever happens,
// what it created is removed before it returns.
func (b *bench) rawRun(ctx context.Context, pods int) (res rawResult, err error) {
	runID, runStart := testharness.RandomHex(6), time.Now()
	logRoot, err := os.MkdirTemp(b.tmp, "raw-")
	if err != nil {
		return res, fmt.Errorf("create the raw run's log directory: %w", err)
	}
	var created []*rawPod
	defer func() {
		if cerr := b.cleanRaw(runID, created, logRoot, runStart, err != nil); cerr != nil {
			err = errors.Join(err, fmt.Errorf("clean up raw run %s: %w", runID, cerr))
		}
	}()

	for i := 1; i <= pods; i++ {
		created = append(created, &rawPod{uid: runID + fmt.Sprintf("-%04d", i)})
	}
	// Every pod in its own goroutine, as nodelet's and the kubelet's pod workers do: the same
	// concurrency as the agents, so the floor is what the runtime allows them.
	start := time.Now()
	if err := forEachPod(ctx, created, func(ctx context.Context, i int, p *rawPod) error {
		sbCfg := rawSandboxConfig(fmt.Sprintf("raw-%d", i), p.uid, runID, logRoot)
		if err := os.MkdirAll(filepath.Join(sbCfg.LogDirectory, "main"), 0o755); err != nil {
			return fmt.Errorf("create the log directory of raw pod %d: %w", i, err)
		}
		files, err := rawPodFiles(filepath.Join(logRoot, "pod-"+p.uid), sbCfg.Hostname)
		if err != nil {
			return fmt.Errorf("raw pod %d: %w", i, err)
		}
		id, err := b.cri.RunPodSandbox(ctx, sbCfg, "")
		if err != nil {
			return fmt.Errorf("RunPodSandbox of raw pod %d: %w", i, err)
		}
		p.sandbox = id
		if p.container, err = b.cri.CreateContainer(ctx, p.sandbox, rawContainerConfig(runID, files), sbCfg); err != nil {
			return fmt.Errorf("CreateContainer of raw pod %d: %w", i, err)
		}
		if err := b.cri.StartContainer(ctx, p.container); err != nil {
			return fmt.Errorf("StartContainer of raw pod %d: %w", i, err)
		}
		return nil
	}); err != nil {
		return res, err
	}
	res.create = time.Since(start)

	start = time.Now()
	if err := forEachPod(ctx, created, func(ctx context.Context, i int, p *rawPod) error {
		if err := b.cri.StopContainer(ctx, p.container, 2); err != nil {
			return fmt.Errorf("StopContainer of raw pod %d: %w", i, err)
		}
		if err := b.cri.StopPodSandbox(ctx, p.sandbox); err != nil {
			return fmt.Errorf("StopPodSandbox of raw pod %d: %w", i, err)
		}
		if err := b.cri.RemovePodSandbox(ctx, p.sandbox); err != nil {
			return fmt.Errorf("RemovePodSandbox of raw pod %d: %w", i, err)
		}
		p.sandbox = "" // removed
		return nil
	}); err != nil {
		return res, err
	}
	res.teardown = time.Since(start)
	return res, nil
}

// cleanRaw removes the run's sandboxes (those created and any the runtime has with the run's
// label, should a call have failed after creating one), the pods' empty cgroups and the logs;
// after a failed run, also the shims containerd left running (stopOrphanShims).
func (b *bench) cleanRaw(runID string, created []*rawPod, logRoot string, since time.Time, failed bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	var errs []error
	ids := map[string]bool{}
	for _, p := range created {
		if p.sandbox != "" {
			ids[p.sandbox] = true
		}
	}
	// After a failure a cancelled RunPodSandbox may still be completing or rolling back in
	// containerd: a second pass after settleTime catches what it leaves.
	for pass := 1; pass <= 2; pass++ {
		if pass == 2 {
			if !failed {
				break
			}
			time.Sleep(settleTime)
		}
		list, err := b.cri.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{rawRunLabel: runID}})
		if err != nil {
			errs = append(errs, fmt.Errorf("list the raw run's sandboxes: %w", err))
		}
		for _, s := range list {
			ids[s.Id] = true
		}
		for id := range ids {
			if err := testharness.RemoveSandbox(ctx, b.cri, id); err != nil {
				errs = append(errs, err)
			}
		}
		clear(ids)
		for _, p := range created {
			removePodCgroups(p.uid)
		}
	}
	if failed {
		b.leakedShims += b.stopOrphanShims(since)
	}
	if err := os.RemoveAll(logRoot); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", logRoot, err))
	}
	return errors.Join(errs...)
}

// rawSandboxConfig is the sandbox config nodelet would build for a sleeper pod (pod network,
// a log directory, the BestEffort pod cgroup, the RuntimeDefault seccomp profile both agents
// give the pause container, as upstream since kubernetes#84623), without the pod identity
// labels.
func rawSandboxConfig(name, uid, runID, logRoot string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: rawNamespace, Uid: uid},
		Hostname:     name,
		LogDirectory: filepath.Join(logRoot, rawNamespace+"_"+name+"_"+uid),
		Labels:       map[string]string{rawRunLabel: runID},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: "/kubepods/besteffort/pod" + uid,
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: rawNamespaces(),
				Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
			},
		},
	}
}

// rawFiles are the files both agents bind-mount into every container: the pod's hosts file
// and the container's termination message file.
type rawFiles struct{ hosts, terminationLog string }

// rawPodFiles writes a pod's rawFiles under dir, as an agent writes them in the pod's directory.
func rawPodFiles(dir, hostname string) (rawFiles, error) {
	f := rawFiles{hosts: filepath.Join(dir, "etc-hosts"), terminationLog: filepath.Join(dir, "containers", "main", "termination-log")}
	if err := os.MkdirAll(filepath.Dir(f.terminationLog), 0o755); err != nil {
		return f, fmt.Errorf("create the pod directory: %w", err)
	}
	hosts := "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t" + hostname + "\n"
	if err := os.WriteFile(f.hosts, []byte(hosts), 0o644); err != nil {
		return f, fmt.Errorf("write the hosts file: %w", err)
	}
	if err := os.WriteFile(f.terminationLog, nil, 0o666); err != nil {
		return f, fmt.Errorf("create the termination message file: %w", err)
	}
	return f, nil
}

// rawContainerConfig is the sleeper container of sleeperManifest, with the two bind mounts both
// agents give every container (/etc/hosts, /dev/termination-log).
func rawContainerConfig(runID string, files rawFiles) *runtimeapi.ContainerConfig {
	return &runtimeapi.ContainerConfig{
		Mounts: []*runtimeapi.Mount{
			{ContainerPath: "/etc/hosts", HostPath: files.hosts},
			{ContainerPath: "/dev/termination-log", HostPath: files.terminationLog},
		},
		Metadata: &runtimeapi.ContainerMetadata{Name: "main"},
		Image:    &runtimeapi.ImageSpec{Image: benchImage, UserSpecifiedImage: benchImage},
		Command:  []string{"sh", "-c", sleeperScript},
		Labels:   map[string]string{rawRunLabel: runID},
		LogPath:  filepath.Join("main", "0.log"),
		Linux: &runtimeapi.LinuxContainerConfig{
			SecurityContext: &runtimeapi.LinuxContainerSecurityContext{NamespaceOptions: rawNamespaces()},
		},
	}
}

func rawNamespaces() *runtimeapi.NamespaceOption {
	return &runtimeapi.NamespaceOption{
		Network: runtimeapi.NamespaceMode_POD,
		Pid:     runtimeapi.NamespaceMode_CONTAINER,
		Ipc:     runtimeapi.NamespaceMode_POD,
	}
}

// forEachPod runs fn for every pod, each in its own goroutine, and returns the errors joined;
// the first error cancels the others' context. Pods are numbered from 1.
func forEachPod(ctx context.Context, pods []*rawPod, fn func(context.Context, int, *rawPod) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Go(func() {
			if errs[i] = fn(ctx, i+1, p); errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
